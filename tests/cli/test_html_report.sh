#!/usr/bin/env bash
# stepsim report SCENARIO -o FILE (and run --html FILE): one HTML page that parses as XML
# (xmllint, where installed), whose table holds each plan's step time as `run --json -` gives it,
# with a timeline per plan; without -o it is a usage error.
. "$(dirname "$0")/lib.sh"
scenario="$SOURCE_DIR/scenarios/llama2_7b_4xa100_nvlink.yaml"

rm -f report.html
run_stepsim report "$scenario" -o report.html
expect_status 0 "report -o"
checks=$((checks + 1))
[ -s report.html ] || fail "report -o wrote no file"
if command -v xmllint >/dev/null; then
  checks=$((checks + 1))
  xmllint --noout report.html 2>xml.err || fail "report.html is not well-formed: $(head -3 xml.err)"
fi
run_stepsim run "$scenario" --json -
expect_step_times report.html "$out" tp2-pp2 zero3-dp4
checks=$((checks + 1))
[ "$(grep -c 'class="timeline"' report.html)" = 2 ] || fail "expected a timeline for each of the 2 plans"

run_stepsim run "$scenario" --strategy zero3-dp4 --html one.html
expect_status 0 "run --html"
checks=$((checks + 1))
[ "$(grep -c 'class="timeline"' one.html)" = 1 ] || fail "run --strategy --html: one plan, one timeline"

run_stepsim report "$scenario"
expect_status 2 "report without -o"
expect_stderr "stepsim report: expected -o FILE, the HTML report to write (stepsim report SCENARIO -o report.html)" "says what is missing"
finish
