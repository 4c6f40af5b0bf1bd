#!/usr/bin/env bash
# Every shipped scenario (scenarios/*.yaml, not the sweep_ ones nor validation/) runs, here or in
# the test of the framework reader it uses: its strategies are valid plans on its machine, and
# `run --json -` reports whether each fits. The scenarios are the questions the README answers;
# one that stops loading is a broken answer.
. "$(dirname "$0")/lib.sh"

shipped=0
for file in "$SOURCE_DIR"/scenarios/*.yaml; do
  case "$(basename "$file")" in sweep_*) continue ;; esac
  shipped=$((shipped + 1))
  # The scenarios that read a framework's own file run in the test of their reader, fits included
  # (test_deepspeed_config.sh, test_megatron_args.sh, test_torchtitan_config.sh): the 1,024-GPU
  # Megatron one is minutes under the sanitizers, and twice would be twice.
  case "$(basename "$file")" in llama2_7b_8xa100_deepspeed.yaml | gpt3_175b_megatron_args.yaml | llama3_70b_torchtitan.yaml) continue ;; esac
  run_stepsim run "$file" --json -
  expect_status 0 "run $(basename "$file")"
  expect_stdout_contains '"fits"' "run $(basename "$file") --json - reports fits"
done

checks=$((checks + 1))
[ "$shipped" -ge 10 ] || fail "expected at least 10 scenarios in $SOURCE_DIR/scenarios, found $shipped"

finish
