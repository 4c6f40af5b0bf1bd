#!/usr/bin/env bash
# The step times scenarios/README.md quotes are the ones the binary gives: for every table row
# whose scenario column names one file and no --set, each "**strategy** ... N ms" of a strategy
# that file has must be its `run --json -` step time rounded to the millisecond. A modelling
# change that moves a scenario then fails here until the table is refreshed, instead of leaving
# a README that quietly says something else.
. "$(dirname "$0")/lib.sh"

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
  run_stepsim run "$SOURCE_DIR/scenarios/$files" --json -
  expect_status 0 "run $files"
  # name=milliseconds per strategy, from the JSON's name and step_time_s fields (in order).
  times=$(printf '%s' "$out" | grep -o '"name":"[^"]*"\|"step_time_s":[0-9.e+-]*' |
          awk -F: '/"name"/ {gsub(/"/, "", $2); name = $2} /step_time_s/ {printf "%s=%.0f\n", name, $2 * 1000}')
  says=$(printf '%s' "$line" | awk -F' \\| ' '{print $3}' |
         grep -o '\*\*[a-z0-9-]*\*\*[^*0-9]*[0-9][0-9]* ms' | sed -E 's/^\*\*([a-z0-9-]*)\*\*[^0-9]*([0-9]+) ms$/\1=\2/')
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
