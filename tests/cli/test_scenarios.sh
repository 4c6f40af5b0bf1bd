#!/usr/bin/env bash
# Every shipped scenario (scenarios/*.yaml, not the sweep_ ones nor validation/) runs, here or in
# the test of the framework reader it uses: its strategies are valid plans on its machine, and
# `run --json -` reports whether each fits. The scenarios are the questions the README answers;
# one that stops loading is a broken answer.
#
# The step times scenarios/README.md quotes are the ones those runs give: for every table row
# whose scenario column names one file and no --set, each "**strategy** (note) ... N ms" of a strategy
# that file has must be its `run --json -` step time rounded to the millisecond. A modelling
# change that moves a scenario then fails here until the table is refreshed, instead of leaving
# a README that quietly says something else. Both checks read the same run of each file: under
# the sanitizers a run is seconds.
. "$(dirname "$0")/lib.sh"

declare -A json  # scenario file name -> its `run --json -` output

run_scenario() {
  run_stepsim run "$SOURCE_DIR/scenarios/$1" --json -
  expect_status 0 "run $1"
  json[$1]=$out
}

shipped=0
for file in "$SOURCE_DIR"/scenarios/*.yaml; do
  name=$(basename "$file")
  case "$name" in sweep_*) continue ;; esac
  shipped=$((shipped + 1))
  # The scenarios that read a framework's own file run in the test of their reader, fits included
  # (test_deepspeed_config.sh, test_megatron_args.sh, test_torchtitan_config.sh): the 1,024-GPU
  # Megatron one is minutes under the sanitizers, and twice would be twice.
  case "$name" in llama2_7b_8xa100_deepspeed.yaml | gpt3_175b_megatron_args.yaml | llama3_70b_torchtitan.yaml) continue ;; esac
  run_scenario "$name"
  expect_stdout_contains '"fits"' "run $name --json - reports fits"
done

checks=$((checks + 1))
[ "$shipped" -ge 10 ] || fail "expected at least 10 scenarios in $SOURCE_DIR/scenarios, found $shipped"

readme="$SOURCE_DIR/scenarios/README.md"
rows=0
quoted=0
while IFS= read -r line; do
  case "$line" in '| '*'.yaml`'*) ;; *) continue ;; esac
  scenario_column=$(printf '%s' "$line" | awk -F' \\| ' '{print $2}')
  case "$scenario_column" in *--set*) continue ;; esac
  files=$(printf '%s' "$scenario_column" | grep -o '[a-z0-9_]*\.yaml' | sort -u)
  [ "$(printf '%s\n' "$files" | wc -l)" -eq 1 ] || continue
  rows=$((rows + 1))
  [ -n "${json[$files]+set}" ] || run_scenario "$files"
  # name=milliseconds per strategy, from the JSON's name and step_time_s fields (in order).
  times=$(printf '%s' "${json[$files]}" | grep -o '"name":"[^"]*"\|"step_time_s":[0-9.e+-]*' |
          awk -F: '/"name"/ {gsub(/"/, "", $2); name = $2} /step_time_s/ {printf "%s=%.0f\n", name, $2 * 1000}')
  says=$(printf '%s' "$line" | awk -F' \\| ' '{print $3}' |
         grep -oE '\*\*[a-z0-9-]*\*\*( \([^)]*\))?[^*0-9(]*[0-9]+ ms' |
         sed -E 's/^\*\*([a-z0-9-]*)\*\*( \([^)]*\))?[^0-9]*([0-9]+) ms$/\1=\3/')
  for pair in $says; do
    name=${pair%%=*}
    simulated=$(printf '%s\n' "$times" | awk -F= -v n="$name" '$1 == n {print $2}')
    [ -n "$simulated" ] || continue  # a bold word that is not one of this file's strategies
    quoted=$((quoted + 1))
    checks=$((checks + 1))
    [ "${pair#*=}" = "$simulated" ] ||
      fail "scenarios/README.md quotes $name in $files as ${pair#*=} ms; the binary gives $simulated ms (refresh the table)"
  done
done < "$readme"

checks=$((checks + 1))
[ "$rows" -ge 6 ] && [ "$quoted" -ge 12 ] || fail "expected at least 6 single-file rows and 12 quoted times, found $rows and $quoted"
finish
