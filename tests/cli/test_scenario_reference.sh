#!/usr/bin/env bash
# scenarios/REFERENCE.md lists every key a scenario file may hold, and nothing else: the keys the
# readers accept are the string literals of their check_keys(...) calls (and of the named lists
# those calls pass, such as kModelKeys and gpu_keys()), the keys the reference documents are the
# first column (`key`) of its table rows. A key a reader accepts that no row lists fails here, as
# does a row whose key no reader accepts, so a new key cannot ship undocumented and a removed one
# cannot stay in the reference. Keys are compared by name, not by section (`bandwidth` is a key of
# several mappings). Then a tiny scenario written with documented keys runs, and one with a
# misspelt key is refused with its position and exit status 2.
. "$(dirname "$0")/lib.sh"

reference="$SOURCE_DIR/scenarios/REFERENCE.md"

# The readers of what a scenario may contain: the scenario itself, its sweep space, hardware (a
# preset mapping, a whole hardware mapping, server, network, comm), an inline GPU and the model.
readers="sim/plan/scenario_yaml.cpp sim/plan/strategy_yaml.cpp sim/sweep/sweep_yaml.cpp hardware/hardware_yaml.cpp
hardware/server_yaml.cpp hardware/gpu_yaml.cpp models/model_yaml.cpp"
# Left out on purpose:
#   sim/report/validation.cpp  the `validation:` block, read only by `stepsim validate` for the
#                              published runs in scenarios/validation/ (sim/report/validation.hpp
#                              documents it); `stepsim run` accepts the top-level key and ignores
#                              what is under it. The top-level key itself is documented.
#   sim/config/yaml_field.*    where check_keys is defined, not a reader.
# In hardware/gpu_yaml.cpp the call check_keys({"defaults", "gpus"}) is the root of
# hardware/gpus.yaml, the GPU table that ships with stepsim, not something a scenario can say; it
# is skipped below. (gpus.yaml's `defaults:` also checks kModelKeys, but those are an inline
# GPU's keys too, through gpu_keys(), so they are counted through that call.)
excluded_readers="sim/report/validation.cpp sim/config/yaml_field.cpp sim/config/yaml_field.hpp"
excluded_call='"defaults", "gpus"'

# A reader added elsewhere would otherwise go unnoticed: every file that calls check_keys must be
# one of the two lists above.
checks=$((checks + 1))
for file in $(cd "$SOURCE_DIR" && grep -rl --include='*.cpp' --include='*.hpp' 'check_keys(' hardware models sim tools | sort); do
  case " $readers $excluded_readers " in
    *[[:space:]]"$file"[[:space:]]*) ;;
    *) fail "$file calls check_keys but this test neither reads it nor excludes it: add it to 'readers' (and its keys to scenarios/REFERENCE.md) or to 'excluded_readers' with the reason" ;;
  esac
done

# check_keys_calls FILE: the argument text of every check_keys(...) call, one call per line (a
# call may span lines; parentheses are matched, so check_keys(gpu_keys({"base"})) is one call).
check_keys_calls() {
  awk '
    { text = text $0 " " }
    END {
      while ((i = index(text, "check_keys(")) > 0) {
        text = substr(text, i + 11)
        depth = 1
        call = ""
        for (j = 1; j <= length(text) && depth > 0; j++) {
          c = substr(text, j, 1)
          if (c == "(") depth++
          else if (c == ")") depth--
          if (depth > 0) call = call c
        }
        print call
        text = substr(text, j)
      }
    }' "$1"
}

# list_definition FILE NAME: the text of `std::vector<std::string> NAME{...}` or of the function
# `std::vector<std::string> NAME(...) {...}` in FILE, on one line; nothing if FILE has none.
list_definition() {
  awk -v name="$2" '
    !inside && $0 ~ ("std::vector<std::string>[ ]+" name "[ ]*[({]") { inside = 1; depth = 0; opened = 0 }
    inside {
      text = text $0 " "
      line = $0
      gsub(/"[^"]*"/, "", line)
      depth += gsub(/{/, "{", line) - gsub(/}/, "}", line)
      if (line ~ /{/) opened = 1
      if (opened && depth <= 0) { print text; exit }
    }' "$1"
}

literals() { grep -o '"[^"]*"' | sed 's/"//g'; }
identifiers() { sed 's/"[^"]*"//g' | grep -oE '[A-Za-z_][A-Za-z0-9_]*'; }

# keys_of_list FILE NAME SEEN: the literals of NAME's definition and of the lists it names.
keys_of_list() {
  local file=$1 name=$2 seen=$3 body inner
  body=$(list_definition "$file" "$name")
  [ -n "$body" ] || return 1
  printf '%s\n' "$body" | literals
  for inner in $(printf '%s\n' "$body" | identifiers | sort -u); do
    case " $seen " in *" $inner "*) continue ;; esac
    keys_of_list "$file" "$inner" "$seen $inner" || true  # keys, insert, end...: not lists
  done
}

accepted="$WORK_DIR/accepted"
: >"$accepted"
for file in $readers; do
  path="$SOURCE_DIR/$file"
  checks=$((checks + 1))
  [ -f "$path" ] || { fail "reader $file is missing (moved? update this test)"; continue; }
  calls=$(check_keys_calls "$path" | grep -vF "$excluded_call")
  from_file=$(
    printf '%s\n' "$calls" | literals
    for name in $(printf '%s\n' "$calls" | identifiers | sort -u); do
      keys_of_list "$path" "$name" "$name" ||
        echo "UNRESOLVED:$name"
    done
  )
  for name in $(printf '%s\n' "$from_file" | sed -n 's/^UNRESOLVED://p'); do
    fail "$file passes $name to check_keys and this test cannot find its definition (std::vector<std::string> $name)"
  done
  printf '%s\n' "$from_file" | grep -v '^UNRESOLVED:' | grep -v '^$' >>"$accepted"
  checks=$((checks + 1))
  [ "$(printf '%s\n' "$from_file" | grep -vc '^UNRESOLVED:\|^$')" -ge 1 ] ||
    fail "no keys extracted from $file: has the check_keys call changed form?"
done
sort -u -o "$accepted" "$accepted"

documented="$WORK_DIR/documented"
checks=$((checks + 1))
if [ -f "$reference" ]; then
  sed -n 's/^|[[:space:]]*`\([A-Za-z0-9_-]*\)`[[:space:]]*|.*/\1/p' "$reference" | sort -u >"$documented"
else
  fail "scenarios/REFERENCE.md is missing"
  : >"$documented"
fi

# A broken extraction must not pass by finding nothing on both sides.
checks=$((checks + 1))
n_accepted=$(grep -c . "$accepted")
n_documented=$(grep -c . "$documented")
[ "$n_accepted" -ge 60 ] && [ "$n_documented" -ge 60 ] ||
  fail "expected at least 60 keys on each side, found $n_accepted accepted by the readers and $n_documented documented"

# in_first_not_second A B: lines of A that are not lines of B.
in_first_not_second() { awk -v second="$2" 'FILENAME == second { b[$0]; next } !($0 in b)' "$2" "$1"; }

for key in $(in_first_not_second "$accepted" "$documented"); do
  checks=$((checks + 1))
  fail "key '$key' is accepted by a reader but scenarios/REFERENCE.md has no row for it"
done
for key in $(in_first_not_second "$documented" "$accepted"); do
  checks=$((checks + 1))
  fail "scenarios/REFERENCE.md documents key '$key' but no reader accepts it"
done

# End to end: documented keys run; a misspelt one is refused at its line and column, exit 2.
cat >"$WORK_DIR/reference_keys.yaml" <<'EOF'
name: reference keys
description: keys from scenarios/REFERENCE.md
hardware:
  preset: dgx-a100
  gpus: 2
  comm: {nvlink_efficiency: 0.75, launch_latency: 8us, ll: {bandwidth_share: 0.25}}
model: {preset: llama-2-7b, layers: 4}
training: {seq_len: 1024, global_batch: 8, precision: bf16, tokens: 1B, price_per_gpu_hour: 2}
strategies:
  - name: tp2
    tp: 2
    micro_batch: 2
    sequence_parallel: true
    recompute: selective
    dp_bucket_size: 25MB
    rank_order: tp-dp-pp
  - {name: zero1, dp: 2, zero_stage: 1, dp_overlap: false, flash_attention: false}
faults:
  - {gpu: 1, compute_slowdown: 1.1}
  - {link: gpu0-nvswitch0, bandwidth_factor: 0.5}
EOF
run_stepsim run reference_keys.yaml
expect_status 0 "run a scenario written with documented keys"

cat >"$WORK_DIR/reference_typo.yaml" <<'EOF'
hardware: {preset: dgx-a100, gpus: 2}
model: llama-2-7b
training: {seq_len: 1024, global_batch: 8}
strategies:
  - name: dp2
    micro_bach: 1
EOF
run_stepsim run reference_typo.yaml
expect_status 2 "run a scenario with a misspelt key"
expect_stderr_contains "reference_typo.yaml:6:5: strategies[0]: unknown key 'micro_bach'; did you mean 'micro_batch'?" \
  "the misspelt key's error"

finish
