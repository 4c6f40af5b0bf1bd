#!/usr/bin/env bash
# Mixtures of experts end to end: the model's active parameters, expert parallelism's all-to-all in
# --explain, the JSON and the trace, the same EP plan on NVSwitch against PCIe RTX 4090s, and a
# sweep that ranks plans with and without EP.
. "$SOURCE_DIR/tests/cli/lib.sh"
mixtral="$SOURCE_DIR/scenarios/mixtral_8x7b_2xdgx_h100.yaml"

run_stepsim model show mixtral-8x7b
expect_status 0 "model show of a MoE preset"
expect_stdout_contains "mixture of experts: 8 experts of FFN 14336, top 2 per token, dropless" "the experts"
expect_stdout_contains "active parameters per token 12.880 B (of 46.703 B)" "active against total parameters"
expect_stdout_contains "expert_up" "the grouped expert GEMMs in the op table"

run_stepsim run "$mixtral" --strategy ep8-dp16 --explain
expect_status 0 "an EP plan runs"
expect_stdout_contains "exposed EP comm" "the comparison has the EP row"
expect_stdout_contains "EP all-to-all" "--explain shows the all-to-all on the critical path"

run_stepsim run "$mixtral" --strategy ep8-dp16 --json -
expect_status 0 "EP plan as JSON"
ep_seconds=$(printf '%s' "$out" | grep -o '"ep":[0-9.e+-]*,"cp":[0-9.e+-]*}' | head -1 | sed 's/^"ep":\([^,]*\),.*/\1/')
checks=$((checks + 1))
awk -v s="$ep_seconds" 'BEGIN { exit !(s > 0) }' || fail "exposed_comm_s.ep should be positive, found '$ep_seconds'"

rm -f moe-trace.json
run_stepsim run "$mixtral" --strategy ep8-dp16 --trace moe-trace.json --trace-ranks 0-1
expect_status 0 "trace of an EP plan"
checks=$((checks + 1))
grep -q '"EP alltoall L0' moe-trace.json || fail "the trace has no EP all-to-all slices"

# The same EP plan on one DGX H100 (NVSwitch) and on 8 RTX 4090s (PCIe, no NVLink), a 3.5B MoE
# that fits both: the all-to-all is a small loss on the first and the largest on the second.
box() {
  cat >moe-box.yaml <<YAML
name: moe-box
hardware: {preset: $1, gpus: 8}
model: {name: moe-3.5b, layers: 16, hidden: 2048, heads: 16, vocab: 32000, position: rotary, activation: swiglu,
        norm: rmsnorm, bias: false, dropout: false, moe: {experts: 16, top_k: 2, expert_ffn: 2048}}
training: {seq_len: 2048, global_batch: 32, precision: bf16}
strategies:
  - {name: ep8, dp: 8, ep: 8, micro_batch: 1, recompute: selective, distributed_optimizer: true}
  - {name: dp8, dp: 8, micro_batch: 1, recompute: selective, distributed_optimizer: true}
YAML
}
share_of_ep() {  # the ep8 plan's exposed EP time as a share of its step, percent
  run_stepsim run moe-box.yaml --strategy ep8 --json -
  exposed_share_of "$out" ep
}
box dgx-h100
h100=$(share_of_ep)
box rtx4090
rtx=$(share_of_ep)
checks=$((checks + 1))
awk -v a="$h100" -v b="$rtx" 'BEGIN { exit !(b > 3 * a && b > 10) }' ||
  fail "EP all-to-all share: dgx-h100 $h100 %, rtx4090 $rtx %; expected the PCIe box's above 10 % and 3x NVSwitch's"
run_stepsim run moe-box.yaml
checks=$((checks + 1))
printf '%s' "$out" | grep -qE "^ep8 is the best plan that fits: .* It still loses [0-9]+ % of its step to exposed expert all-to-all" ||
  fail "on the PCIe box ep8 should win with the all-to-all as its largest loss; the verdict was: $(printf '%s' "$out" | grep 'best plan')"

# A sweep of the MoE model ranks plans with and without EP. On H200s: without EP each rank holds
# all 14.3 B parameters with their fp32 gradients (6 B each, 86 GB), more than an H100 has.
cat >moe-sweep.yaml <<YAML
name: qwen-moe sweep
hardware: {preset: hgx-h200, gpus: 8}
model: qwen1.5-moe-a2.7b
training: {seq_len: 2048, global_batch: 16, precision: bf16}
sweep: {tp: [1], pp: [1], zero_stage: [1], micro_batch: [1], recompute: [full]}
YAML
run_stepsim sweep moe-sweep.yaml --top 10
expect_status 0 "sweep of a MoE model"
expect_stdout_contains "EP comm" "the sweep table has the EP column"
for plan in tp1-pp1-dp8-z1 tp1-pp1-dp8-ep2-z1 tp1-pp1-dp8-ep4-z1; do
  expect_stdout_contains "$plan-mb1-full" "the sweep tries $plan"
done
finish
