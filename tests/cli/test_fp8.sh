# FP8 training end to end: the op table with its casts, a run that compares a strategy's FP8 with
# bf16 (MFU on both peaks, the casts' time in the table and in --explain), and FP8 where the GPU
# has none.
. "$SOURCE_DIR/tests/cli/lib.sh"

run_stepsim model show llama-3-8b --gpu h100 --seq 4096 --fp8
expect_status 0 "model show --fp8"
expect_stdout_contains "(bf16, linear GEMMs in FP8 with their casts)" "the header says FP8"
expect_stdout_contains "mlp_down_grad_fp8_cast" "the output gradient's cast is an op"
checks=$((checks + 1))
[ "$(printf '%s\n' "$out" | grep -c '(FP8)$')" -eq 4 ] || fail "four FP8 GEMMs (qkv, out_proj, mlp_up, mlp_down): $out"
run_stepsim model show llama-3-8b --fp8
expect_status 2 "model show --fp8 on A100"
expect_stderr_contains "--fp8: A100-SXM4-80GB has no FP8 tensor cores" "no FP8 on A100"

cat >"$WORK_DIR/fp8.yaml" <<'YAML'
name: Llama-2 7B on one DGX H100, bf16 and FP8
hardware: {preset: dgx-h100}
model: llama-2-7b
training: {seq_len: 4096, global_batch: 32}
strategies:
  - {name: bf16, tp: 2, pp: 1, micro_batch: 1, sequence_parallel: true, framework: megatron-core}
  - {name: fp8, tp: 2, pp: 1, micro_batch: 1, sequence_parallel: true, framework: megatron-core, precision: fp8}
YAML
run_stepsim run "$WORK_DIR/fp8.yaml" --explain
expect_status 0 "a run with a bf16 and an FP8 strategy"
expect_stdout_contains "MFU of the FP8 peak" "the FP8 peak's MFU row"
expect_stdout_contains "FP8 casts and amax" "the casts' row"
expect_stdout_contains "FP8 casts and amax (in forward, backward and the optimizer step above):" "--explain names the casts' time"
expect_stdout_contains "* best" "a plan fits"

sed 's/precision: fp8}/precision: fp8, fp8_recipe: blockwise}/' "$WORK_DIR/fp8.yaml" >"$WORK_DIR/bad.yaml"
run_stepsim run "$WORK_DIR/bad.yaml"
expect_status 2 "an unknown FP8 recipe"
expect_stderr_contains "bad.yaml:7:" "the error is positioned"
expect_stderr_contains "strategies[1].fp8_recipe: expected one of delayed, tensorwise" "what was expected"

finish
