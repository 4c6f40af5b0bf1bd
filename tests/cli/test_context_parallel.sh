#!/usr/bin/env bash
# Context parallelism end to end: the long-context scenario with its CP row, the K/V exchange in
# the trace and the JSON, the same CP plan on NVSwitch against PCIe RTX 4090s, a sweep that
# searches cp, and the errors a bad cp gets.
. "$SOURCE_DIR/tests/cli/lib.sh"
long="$SOURCE_DIR/scenarios/llama3_8b_32k_cp_dgx_h100.yaml"

run_stepsim run "$long"
expect_status 0 "the long-context scenario runs"
expect_stdout_contains "exposed CP comm" "the comparison has the CP row"
expect_stdout_contains "tp2 pp1 dp1 cp4 z1" "the layout names cp"

run_stepsim run "$long" --strategy cp8 --json - --trace cp8.json
expect_status 0 "a CP plan as JSON with a trace"
expect_stdout_contains '"cp":8' "the JSON carries cp"
checks=$((checks + 1))
grep -q '"name":"CP sendrecv L0 mb0"' cp8.json || fail "the trace has no CP K/V exchange slices"

# A small GQA model at 4k tokens split 8 ways: 512-token chunks whose exchange outlasts the
# attention block beside it; PCIe without P2P exposes more of it than NVSwitch.
box() {
  cat >cp-box.yaml <<YAML
name: cp on $1
hardware: {preset: $1, gpus: 8}
model: {name: gqa, layers: 8, hidden: 2048, heads: 16, kv_heads: 4, vocab: 32000, position: rotary,
        activation: swiglu, norm: rmsnorm, bias: false, dropout: false}
training: {seq_len: 4096, global_batch: 8, precision: bf16}
strategies:
  - {name: cp8, cp: 8, recompute: selective}
  - {name: dp8, recompute: selective}
YAML
}
share_of_cp() {  # the cp8 plan's exposed CP time as a share of its step, percent
  run_stepsim run cp-box.yaml --strategy cp8 --json -
  exposed_share_of "$out" cp
}
box dgx-h100
h100=$(share_of_cp)
box rtx4090
rtx=$(share_of_cp)
checks=$((checks + 1))
awk -v a="$h100" -v b="$rtx" 'BEGIN { exit !(a > 0 && b > 1.5 * a) }' ||
  fail "K/V exchange share: dgx-h100 $h100 %, rtx4090 $rtx %; expected both exposed, the PCIe box's more"

# A sweep that lists cp ranks plans with and without it.
cat >cp-sweep.yaml <<YAML
name: cp sweep
hardware: {preset: dgx-h100}
model: llama-3-8b
training: {seq_len: 32768, global_batch: 16, precision: bf16}
sweep: {framework: [megatron-core], tp: [1, 2], pp: [1], cp: [1, 2, 4], zero_stage: [1], micro_batch: [1],
        recompute: [selective, full], sequence_parallel: [true, false]}
YAML
run_stepsim sweep cp-sweep.yaml --top 30
expect_status 0 "sweep over cp"
expect_stdout_contains "CP comm" "the sweep table has the CP column"
for plan in megatron-core-tp2-pp1-dp2-cp2-z1 megatron-core-tp1-pp1-dp2-cp4-z1 megatron-core-tp2-pp1-dp4-z1; do
  expect_stdout_contains "$plan-mb1" "the sweep tries $plan"
done

# Bad cp: an error at the key, exit 2.
cat >bad-cp.yaml <<YAML
name: bad cp
hardware: {preset: dgx-h100}
model: llama-3-8b
training: {seq_len: 4100, global_batch: 16, precision: bf16}
strategies:
  - {name: c, cp: 4}
YAML
run_stepsim run bad-cp.yaml
expect_status 2 "2·cp not dividing the sequence"
expect_stderr_contains "bad-cp.yaml:6:19: strategies[0].cp: expected 2·cp to divide training.seq_len = 4100" "the error names the key"
finish
