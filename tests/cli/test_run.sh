#!/usr/bin/env bash
# stepsim run: the table, --strategy, --set, --json and the exit code of an invalid plan.
. "$SOURCE_DIR/tests/cli/lib.sh"
scenario="$SOURCE_DIR/tests/sim/plan/data/small_faults.yaml"

run_stepsim run "$scenario"
expect_status 0 "run both strategies"
expect_stdout_contains "tp8" "the table names the first strategy"
expect_stdout_contains "dp8" "the table names the second strategy"

run_stepsim run "$scenario" --strategy dp8 --set training.global_batch=32 --json -
expect_status 0 "--json - with --strategy and --set"
expect_stdout_contains '{"format_version":1,"scenario":"faults",' "JSON starts with the format version and scenario"
expect_stdout_contains '"name":"dp8"' "only the chosen strategy"
expect_stdout_contains '"exposed_comm_s":{"tp":' "exposed communication by class"
expect_stdout_contains '"fits":true' "fits"

# --json - still writes the trace it was asked for (it was silently skipped), and refuses text
# reports that would land inside the JSON.
rm -f trace.json
run_stepsim run "$scenario" --strategy dp8 --set training.global_batch=32 --json - --trace trace.json
expect_status 0 "--json - with --trace"
checks=$((checks + 1))
[ -s trace.json ] || fail "--json - --trace wrote no trace"
expect_stdout_contains '"name":"dp8"' "the JSON still goes to stdout"
# A pipeline plan's trace, gzipped: arrows from each send to its receiver, link utilization
# tracks for the links that carried traffic, and one file per strategy named after it.
pipeline="$SOURCE_DIR/scenarios/llama2_7b_4xa100_pp4_bubble.yaml"
rm -f pp-*.json.gz
run_stepsim run "$pipeline" --strategy 1f1b-m4 --trace pp.json.gz
expect_status 0 "--trace F.json.gz"
checks=$((checks + 1))
# 1F1B on 4 stages, 4 microbatches: 3 hops × 4 activations forward and 3 × 4 gradients back.
arrows=$(gzip -dc pp.json.gz | grep -c '"ph":"s"')
[ "$arrows" = 24 ] || fail "expected 24 pipeline arrows in pp.json.gz, found $arrows"
checks=$((checks + 1))
gzip -dc pp.json.gz | grep -q '"name":"util gpu0->nvswitch0 (NVLink3 x12)"' || fail "pp.json.gz has no utilization track for gpu0's NVLink"
run_stepsim run "$pipeline" --trace many.json.gz
checks=$((checks + 1))
[ -s many-1f1b-m4.json.gz ] && [ -s many-1f1b-m8.json.gz ] || fail "one gzipped trace per strategy, named NAME.json.gz"
run_stepsim --limit trace_slices=100 run "$pipeline" --strategy 1f1b-m4 --trace big.json
expect_status 2 "a trace over its slice limit"
expect_stderr "stepsim run: --trace: plan '1f1b-m4': expected at most 100 slices in one trace (a limit of stepsim: a trace that large does not open in a viewer), found 524; \`stepsim --limit trace_slices=N\` raises the limit, or --trace-ranks (such as 0-7) writes fewer ranks" "names the count, the limit and both ways out"

run_stepsim run "$scenario" --json - --explain
expect_status 2 "--json - with --explain"
expect_stderr "--json - writes JSON to stdout; --explain would print text into it (write the JSON to a file: --json FILE)" "says why and what to do"

run_stepsim run "$scenario" --set strategies[0].tp=3
expect_status 2 "an invalid plan is bad input"
expect_stderr "$scenario:7:21: strategies[0].tp: tp·pp = 3 does not divide the 8 GPUs of dgx-a100" "the error names the field"

run_stepsim run "$scenario" --strategy nope
expect_status 2 "an unknown strategy is a usage error"

sweep="$SOURCE_DIR/scenarios/sweep_llama2_7b_dgx_a100.yaml"
run_stepsim run "$sweep"
expect_status 2 "a sweep scenario has no strategies to run: bad input, not an internal error"
expect_stderr "$sweep: no strategies to run (expected a 'strategies:' list; a 'sweep:' scenario runs with \`stepsim sweep $sweep\`)" "the error says what to run instead"

# A GPU defined inline in the scenario (a base and what differs), and a bad figure in one.
cat > inline_gpu.yaml <<'YAML'
name: inline
hardware: {preset: dgx-a100, gpus: 2, gpu: {base: A100-SXM4-80GB, name: A100-slow, peak: {bf16: 156TFLOPS}}}
model: {name: g, layers: 4, hidden: 1024, heads: 16, vocab: 32000, max_seq: 1024}
training: {seq_len: 1024, global_batch: 8, precision: bf16}
strategies:
  - {name: dp2, dp: 2}
YAML
run_stepsim run inline_gpu.yaml
expect_status 0 "a scenario with an inline GPU runs"
expect_stdout_contains "inline" "its results print"
sed 's/156TFLOPS/156/' inline_gpu.yaml > inline_gpu_bad.yaml
run_stepsim run inline_gpu_bad.yaml
expect_status 2 "a bad figure in an inline GPU is bad input"
expect_stderr "inline_gpu_bad.yaml:2:97: hardware.gpu.peak.bf16: expected a FLOP rate with a unit such as 989TFLOPS, found '156'" "positioned like gpus.yaml"

# `run` checks the sections other commands read: a misspelt sweep or validation key is an error.
printf 'sweep: {tp: [1], microbatch: [1]}\n' | cat inline_gpu.yaml - > sweep_typo.yaml
run_stepsim run sweep_typo.yaml
expect_status 2 "a misspelt sweep key"
expect_stderr_contains "sweep_typo.yaml:7:18: sweep: unknown key 'microbatch'; did you mean 'micro_batch'?" "positioned at the key"

# A GPU whose efficiency parameters are not fitted says so beside the results.
run_stepsim run "$SOURCE_DIR/scenarios/llama2_7b_4xrtx4090.yaml"
expect_stdout_contains "Caveat: RTX-4090's efficiency parameters are not fitted to measurements of it" "the not-fitted caveat"

finish
