#!/usr/bin/env bash
# Every shipped scenario (scenarios/*.yaml, not the sweep_ ones nor validation/) runs: its
# strategies are valid plans on its machine, and `run --json -` reports whether each fits. The
# scenarios are the questions the README answers; one that stops loading is a broken answer.
# Total well under 30 s (the 16-GPU InfiniBand one, with ZeRO-3 over both servers, is most of it).
. "$(dirname "$0")/lib.sh"

shipped=0
for file in "$SOURCE_DIR"/scenarios/*.yaml; do
  case "$(basename "$file")" in sweep_*) continue ;; esac
  shipped=$((shipped + 1))
  run_stepsim run "$file" --json -
  expect_status 0 "run $(basename "$file")"
  expect_stdout_contains '"fits"' "run $(basename "$file") --json - reports fits"
done

checks=$((checks + 1))
[ "$shipped" -ge 10 ] || fail "expected at least 10 scenarios in $SOURCE_DIR/scenarios, found $shipped"

finish
