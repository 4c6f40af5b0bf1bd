#!/usr/bin/env bash
# stepsim validate on the shipped set of published runs (scenarios/validation/).
# Issue 9's target is median |error| <= 5 % and max <= 15 % per source; not every source meets it
# yet (see the README's validation table). Validate exits 3 exactly when a row is over its
# tolerance ("within":false in the JSON), and 0 otherwise; this test holds it to that. What it
# guards: every shipped scenario runs, the exit status agrees with the rows, the JSON has the
# documented structure, and no source's median |error| regresses past 12 %. Runs only in the
# Release suite (tools/check skips it under the sanitizers: slow).
. "$(dirname "$0")/lib.sh"

# The exit status validate owes for the JSON in $out: 3 when a row is outside its tolerance.
status_for_rows() {
  case $out in *'"within":false'*) echo 3 ;; *) echo 0 ;; esac
}

run_stepsim validate "$SOURCE_DIR/scenarios/validation" --json --threads 2
expect_status "$(status_for_rows)" "exit status agrees with the rows"
expect_stdout_contains '"rows":[' "JSON rows"
expect_stdout_contains '"summary":{"median_abs_error":' "JSON summary"
expect_stdout_contains '"source":"Narayanan et al. SC'"'"'21 Table 1"' "SC'21 rows present"
expect_stdout_contains '"source":"MosaicML llm-foundry benchmarks (A100 80GB)"' "MosaicML rows present"
expect_stdout_contains '"source":"vTrain single-node sweep (MICRO 2024)"' "vTrain rows present"
expect_stdout_contains '"source":"NVIDIA DGX Cloud benchmarks (NeMo, H100 BF16)"' "DGX Cloud rows present"
expect_stdout_contains '"source":"MoE on DGX H100 (Megatron-Core, BF16)"' "MoE rows present"
expect_stdout_contains '"source":"NVIDIA DGX Cloud benchmarks (NeMo, H100 FP8)"' "FP8 rows present"
expect_stdout_contains '"source":"NVIDIA DGX Cloud benchmarks (NeMo, GB200 NVL72, BF16 and FP8)"' "GB200 rows present"
expect_stdout_contains '"source":"MosaicML llm-foundry benchmarks (H100 80GB FP8)"' "MosaicML FP8 rows present"
expect_stdout_contains '{"source":"vTrain single-node sweep (MICRO 2024)","groups":36,' "vTrain plan ranking"
expect_stdout_contains '{"source":"Narayanan et al. SC'"'"'21 Table 2","groups":6,' "SC'21 Table 2 plan ranking"
expect_stdout_contains '"group":"GPT h1024 L16 gb 16 on 8 GPUs"' "rows carry their group"
expect_stdout_contains '{"source":"vTrain single-node sweep (MICRO 2024)","tp":8,"rows":20,' "vTrain bias by TP degree"

rows=$(printf '%s' "$out" | grep -o '"name":' | wc -l)
files=$(ls "$SOURCE_DIR"/scenarios/validation/*.yaml | wc -l)
checks=$((checks + 1))
[ "$rows" -eq "$files" ] || fail "validate printed $rows rows for $files scenario files"

# Per-source medians, from the "sources" array, one source per line. SC'21 Table 2 is the one
# source known to fail: its ZeRO-3 rows run DeepSpeed's 2021 blocking per-submodule gathers and
# list collectives and are still 1.15-1.6x fast (README, issue 24); its PTD-P rows are held to
# their tolerance instead, and the plan choice at the larger GPU counts below.
sources=$(printf '%s' "$out" | sed -n 's/.*"sources":\[\(.*\)\],"rankings".*/\1/p' | sed 's/},{/}\n{/g')
checks=$((checks + 1))
[ -n "$sources" ] || fail "no per-source medians in the JSON"
while IFS= read -r entry; do
  case "$entry" in *'"source":"Narayanan et al. SC'"'"'21 Table 2"'*) continue ;; esac
  # The MoE rows miss by what is not modelled yet (DeepSeek's MTP layer and NeMo's stage layout if
  # that recipe ran them, what made EP 8 inside a server measure 29 s: README); they are held to
  # running and being reported.
  case "$entry" in *'"source":"MoE on DGX H100 (Megatron-Core, BF16)"'*) continue ;; esac
  # GB200's attention is Hopper's (no Blackwell figure) and its matmul a GEMM benchmark's, not a
  # training run's: its rows are 6-14 % fast throughout (README); held to running and being reported.
  case "$entry" in *'"source":"NVIDIA DGX Cloud benchmarks (NeMo, GB200 NVL72, BF16 and FP8)"'*) continue ;; esac
  m=$(printf '%s' "$entry" | grep -o '"median_abs_error":[0-9.e-]*' | cut -d: -f2)
  checks=$((checks + 1))
  awk -v m="$m" 'BEGIN { exit !(m <= 0.12) }' || fail "a source's median |error| regressed to $m (> 0.12): $entry"
done <<< "$sources"
ptdp_within=$(printf '%s' "$out" | grep -o '{"name":"SC21 Table 2 [^}]*PTD-P[^}]*"within":true' | wc -l)
checks=$((checks + 1))
[ "$ptdp_within" -eq 6 ] || fail "$ptdp_within of SC'21 Table 2's 6 PTD-P rows are within their tolerance"
# Megatron-Core as NVIDIA's recipes run it (its overlaps, cuDNN attention, no per-pass sync), in
# BF16 and FP8: every DGX Cloud row within its 15 % but one, GPT-3 175B FP8 on 1,024 H100 in the
# 24.11 table, whose 6.72 s sits between 6.44 s on 512 and 6.24 s on 2,048 GPUs of the same table
# (one last-step timing each; the 24.12 table of the same recipe prints 5.82 s there).
dgxc_outside=$(printf '%s' "$out" | grep -o '{"name":"DGXC [^"]* H100"[^}]*"within":false' | grep -o '"name":"[^"]*"' | tr '\n' ' ')
checks=$((checks + 1))
[ "$dgxc_outside" = '"name":"DGXC GPT-3 175B NeMo 24.11 FP8 tp4 pp8 on 1024 H100" ' ] ||
  fail "DGX Cloud rows outside their tolerance: $dgxc_outside"
dgxc_rows=$(printf '%s' "$out" | grep -o '{"name":"DGXC [^"]* H100"' | wc -l)
checks=$((checks + 1))
[ "$dgxc_rows" -eq 176 ] || fail "$dgxc_rows DGX Cloud H100 rows, expected the 41 BF16 and 135 FP8-table ones"

# DeepSpeed ZeRO-3 at a fixed global batch: throughput per GPU falls as the GPUs grow, as measured
# (the per-GPU compute halves, the serialized parameter all-gathers do not shrink).
zero3_predicted() {  # MODEL GPUS -> the row's predicted TFLOP/s per GPU
  printf '%s' "$out" | grep -o "{\"name\":\"SC21 Table 2 $1 ZeRO-3 on $2 GPUs\"[^}]*" |
    grep -o '"predicted":[0-9.e+-]*' | cut -d: -f2
}
for series in "GPT-3 175B:384 768 1536" "GPT 530B:640 1120 2240"; do
  model=${series%%:*}
  previous=
  for gpus in ${series#*:}; do
    value=$(zero3_predicted "$model" "$gpus")
    checks=$((checks + 1))
    [ -n "$value" ] || { fail "no prediction for $model ZeRO-3 on $gpus GPUs"; continue; }
    if [ -n "$previous" ]; then
      awk -v a="$previous" -v b="$value" 'BEGIN { exit !(b < a) }' ||
        fail "$model ZeRO-3: $value TFLOP/s per GPU on $gpus GPUs, not below $previous on fewer"
    fi
    previous=$value
  done
done

# Where the measured PTD-P beats ZeRO-3 by 1.7-3.3x (the two larger GPU counts of each model), the
# prediction picks PTD-P too: the list collectives' per-rank copies grow with the GPU count.
ptdp_predicted() {  # MODEL GPUS -> the PTD-P row's predicted TFLOP/s per GPU
  printf '%s' "$out" | grep -o "{\"name\":\"SC21 Table 2 $1 PTD-P on $2 GPUs\"[^}]*" |
    grep -o '"predicted":[0-9.e+-]*' | cut -d: -f2
}
for pair in "GPT-3 175B:768" "GPT-3 175B:1536" "GPT 530B:1120" "GPT 530B:2240"; do
  model=${pair%%:*} gpus=${pair#*:}
  ptdp=$(ptdp_predicted "$model" "$gpus") zero3=$(zero3_predicted "$model" "$gpus")
  checks=$((checks + 1))
  awk -v p="$ptdp" -v z="$zero3" 'BEGIN { exit !(p != "" && z != "" && p > z) }' ||
    fail "$model on $gpus GPUs: PTD-P predicted at '$ptdp' TFLOP/s per GPU, not above ZeRO-3's '$zero3'"
done

# The table form on one vTrain group: the ranking table follows the summary.
mkdir -p group
cp "$SOURCE_DIR"/scenarios/validation/vtrain-vtrain-gpt-h2048-l16-gb-8-tp*-on-2-a100.yaml group/
run_stepsim validate group --json
expected=$(status_for_rows)
expect_status "$expected" "one group, JSON"
run_stepsim validate group
expect_status "$expected" "one group, table: the same status as its JSON"
expect_stdout_contains "plan ranking" "ranking table header"
expect_stdout_contains "mean Spearman" "ranking table columns"

# The table form, on two fast rows: every source named, then an overall line.
mkdir -p two
cp "$SOURCE_DIR"/scenarios/validation/korthikanti-korthikanti-gpt-22b-full-recompute-on-8-gpus.yaml two/
cp "$SOURCE_DIR"/scenarios/validation/zerobubble-zero-bubble-gpt-like-1-5b-1f1b-m-24.yaml two/
run_stepsim validate two
expect_status 0 "two rows within tolerance"
expect_stdout_contains "median |error|" "table summary header"
expect_stdout_contains "Korthikanti et al. MLSys23 Table 5" "per-source line"

# A case stopped by a limit on a worker thread is the same positioned error as on one thread (it
# ended the process with std::terminate).
for threads in 1 2; do
  run_stepsim --limit events=1000 validate two --threads $threads
  expect_status 2 "a case past its event limit, $threads threads"
  expect_stderr_contains "korthikanti-korthikanti-gpt-22b-full-recompute-on-8-gpus.yaml:10:5: strategies[0]: plan 'paper': expected at most 1,000 engine events" "the first case's error, $threads threads"
done

# Bad input: a directory with no scenarios.
mkdir -p empty
run_stepsim validate empty
expect_status 2 "empty validation folder"
expect_stderr "stepsim validate: no .yaml files in 'empty'" "empty folder message"

finish
