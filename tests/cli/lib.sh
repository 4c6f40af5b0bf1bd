# Helpers for end-to-end CLI tests. Each test_*.sh sources this, calls the checks, and ends with
# `finish`. Environment from CTest: STEPSIM (the binary), SOURCE_DIR, WORK_DIR (scratch).
set -u
failures=0
checks=0
mkdir -p "$WORK_DIR"
cd "$WORK_DIR" || exit 1

# run_stepsim ARGS...: runs the binary, leaving $status, $out (stdout) and $err (stderr).
run_stepsim() {
  out=$("$STEPSIM" "$@" 2>"$WORK_DIR/stderr") && status=0 || status=$?
  err=$(cat "$WORK_DIR/stderr")
}

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_status N DESCRIPTION
expect_status() {
  checks=$((checks + 1))
  [ "$status" -eq "$1" ] || fail "$2: exit status $status, expected $1 (stderr: $err)"
}
# expect_stderr TEXT DESCRIPTION: the whole stderr equals TEXT
expect_stderr() {
  checks=$((checks + 1))
  [ "$err" = "$1" ] || fail "$2: stderr was
$err
expected
$1"
}
# expect_stdout_contains TEXT DESCRIPTION
expect_stdout_contains() {
  checks=$((checks + 1))
  case "$out" in *"$1"*) ;; *) fail "$2: stdout lacks '$1'; it was:
$out" ;; esac
}
# expect_stderr_contains TEXT DESCRIPTION
expect_stderr_contains() {
  checks=$((checks + 1))
  case "$err" in *"$1"*) ;; *) fail "$2: stderr lacks '$1'; it was:
$err" ;; esac
}
# expect_stdout_golden FILE DESCRIPTION: stdout equals the golden file
expect_stdout_golden() {
  checks=$((checks + 1))
  if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then printf '%s\n' "$out" >"$1"; return; fi
  diff -u "$1" <(printf '%s\n' "$out") >"$WORK_DIR/golden.diff" || fail "$2: differs from $1:
$(cat "$WORK_DIR/golden.diff")"
}

finish() {
  echo "$((checks - failures)) passed, $failures failed"
  [ "$failures" -eq 0 ]
}
# step_time_of JSON NAME: the step_time_s `run --json -` gives strategy NAME, in seconds with 6
# decimals (as the HTML report's data-seconds).
step_time_of() {
  printf '%s' "$1" | grep -o '"name":"[^"]*"\|"step_time_s":[0-9.e+-]*' |
    awk -F: -v n="$2" '/"name"/ {gsub(/"/, "", $2); cur = $2} /step_time_s/ && cur == n {printf "%.6f", $2}'
}
# exposed_share_of JSON CLASS: the exposed_comm_s.CLASS (tp, pp, dp, zero, ep, cp) of a one-strategy
# `run --json -` as a share of its step time, in percent with one decimal.
exposed_share_of() {
  printf '%s' "$1" | tr -d '\n ' | awk -v cls="$2" '{
    match($0, /"step_time_s":[0-9.e+-]+/); step = substr($0, RSTART + 14, RLENGTH - 14)
    match($0, /"exposed_comm_s":\{[^}]*\}/); exposed = substr($0, RSTART, RLENGTH)
    match(exposed, "\"" cls "\":[0-9.e+-]+"); value = substr(exposed, RSTART + length(cls) + 3, RLENGTH - length(cls) - 3)
    printf "%.1f", 100 * value / step }'
}
# expect_same_step_time JSON A B DESCRIPTION: strategies A and B of `run --json -` take the same time.
expect_same_step_time() {
  local a b
  a=$(step_time_of "$1" "$2")
  b=$(step_time_of "$1" "$3")
  checks=$((checks + 1))
  [ -n "$a" ] && [ "$a" = "$b" ] || fail "$4: $2 took '${a}' s, $3 '${b}' s"
}
# expect_step_times FILE JSON NAME...: FILE (an HTML report) holds data-plan="NAME"
# data-seconds="S" with S the step time JSON gives each NAME.
expect_step_times() {
  local file=$1 json=$2 name expected
  shift 2
  for name in "$@"; do
    expected=$(step_time_of "$json" "$name")
    checks=$((checks + 1))
    grep -q "data-plan=\"$name\" data-seconds=\"$expected\"" "$file" ||
      fail "$file does not hold $name's step time $expected s from run --json"
  done
}
