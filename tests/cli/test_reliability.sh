#!/usr/bin/env bash
# Every reproducer of ../shared/reliability/ (one bad input each, named for what it once did:
# a crash, exit 1, no bound, wrong output) must now be bad input: exit 2, a message that starts
# with the file's name, within a bounded time. nccl_* files are nccl-tests logs for
# `collective --calibrate`, scenario_* files scenarios for `run`. A checkout without shared/
# beside it has nothing to run here.
. "$(dirname "$0")/lib.sh"

dir="$SOURCE_DIR/../shared/reliability"
if [ ! -d "$dir" ]; then
  echo "no $dir: nothing to check"
  finish
  exit
fi

for file in "$dir"/nccl_*.txt "$dir"/scenario_*.yaml; do
  [ -f "$file" ] || continue
  name=$(basename "$file")
  case "$name" in
    nccl_*) args=(collective --calibrate "$file" --hardware dgx-a100 -o "$WORK_DIR/out.yaml") ;;
    *) args=(run "$file") ;;
  esac
  start=$(date +%s)
  # 60 s is the sanitizer build's margin; each takes milliseconds in Release.
  out=$(timeout 60 "$STEPSIM" "${args[@]}" 2>"$WORK_DIR/stderr") && status=0 || status=$?
  err=$(head -c 300 "$WORK_DIR/stderr")
  checks=$((checks + 1))
  [ "$status" -eq 2 ] || fail "$name: exit $status, expected 2 (bad input): $err"
  checks=$((checks + 1))
  case "$err" in
    "$file"*) ;;
    *) fail "$name: the message does not start with the file's name: $err" ;;
  esac
  echo "$name: exit $status in $(( $(date +%s) - start )) s"
done

finish
