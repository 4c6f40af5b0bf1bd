#!/usr/bin/env bash
# The HTML reports in a real browser: headless Chromium (Debian's chromium, which tools/check
# installs) opens `stepsim report`'s page and a sweep's page from disk with no network, logs no console message
# (an error or an uncaught exception would be one), and its rendered DOM still holds each plan's
# step time as `run --json -` gives it and every bar part. The screenshot is left in the test's
# work directory (report.png) for a person to look at.
. "$(dirname "$0")/lib.sh"
scenario="$SOURCE_DIR/scenarios/llama2_7b_4xa100_nvlink.yaml"

browser=$(command -v chromium || command -v chromium-browser || true)
checks=$((checks + 1))
if [ -z "$browser" ]; then
  fail "no chromium to open the report in (tools/check installs Debian's chromium; apt-get install chromium)"
  finish
fi

run_stepsim report "$scenario" -o report.html
expect_status 0 "report -o"
flags=(--headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars)
timeout 120 "$browser" "${flags[@]}" --enable-logging=stderr --v=0 --virtual-time-budget=2000 \
  --dump-dom "file://$WORK_DIR/report.html" > dom.html 2> browser.log
checks=$((checks + 1))
[ -s dom.html ] || fail "chromium rendered nothing (log: $(tail -3 browser.log))"
checks=$((checks + 1))
! grep -q ':CONSOLE' browser.log || fail "the page logged to the console: $(grep ':CONSOLE' browser.log | head -3)"

run_stepsim run "$scenario" --json -
expect_step_times dom.html "$out" tp2-pp2 zero3-dp4
for name in tp2-pp2 zero3-dp4; do
  # Compute and the ten losses (sim/report losses_of), one rect each, per plan.
  parts=$(grep -o "<rect[^>]*data-plan=\"$name\" data-part=\"[^\"]*\" data-seconds" dom.html | wc -l)
  checks=$((checks + 1))
  [ "$parts" = 11 ] || fail "expected 11 step parts for $name in the rendered page, found $parts"
done

# A sweep's page too: every plan of a narrowed sweep a point, no console message.
cat > sweep.yaml <<'YAML'
name: small sweep
hardware: {preset: dgx-a100, gpus: 4}
model: {name: small-gpt, layers: 8, hidden: 1024, heads: 16, vocab: 32000, max_seq: 1024}
training: {seq_len: 1024, global_batch: 16}
sweep: {tp: [1, 2], pp: [1], micro_batch: [1, 4], recompute: [none, selective]}
YAML
run_stepsim sweep sweep.yaml --threads 1 --html sweep.html
expect_status 0 "sweep --html"
timeout 120 "$browser" "${flags[@]}" --enable-logging=stderr --v=0 --virtual-time-budget=2000 \
  --dump-dom "file://$WORK_DIR/sweep.html" > sweep-dom.html 2> sweep-browser.log
checks=$((checks + 1))
! grep -q ':CONSOLE' sweep-browser.log || fail "the sweep page logged to the console: $(grep ':CONSOLE' sweep-browser.log | head -3)"
plans=$(printf '%s' "$out" | grep -o '[0-9]* simulated' | head -1 | cut -d' ' -f1)
points=$(grep -o '<circle ' sweep-dom.html | wc -l)
checks=$((checks + 1))
[ -n "$plans" ] && [ "$points" = "$plans" ] || fail "the rendered sweep page has $points points for $plans simulated plans"

rm -f report.png
timeout 120 "$browser" "${flags[@]}" --window-size=1200,1800 --screenshot="$WORK_DIR/report.png" \
  "file://$WORK_DIR/report.html" > /dev/null 2>&1
checks=$((checks + 1))
[ -s report.png ] || fail "chromium took no screenshot"
finish
