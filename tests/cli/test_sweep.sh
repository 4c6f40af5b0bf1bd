# stepsim sweep / advise end to end: counts, threads and shards give the single-thread answer
# (stdout and CSV byte for byte), merge errors, the sweep: section's errors, Ctrl-C, advise JSON.
. "$SOURCE_DIR/tests/cli/lib.sh"

# A small GPT on 4 GPUs of a DGX A100, narrowed to 2 x 2 layouts x ... so the test stays fast.
cat >"$WORK_DIR/small.yaml" <<'YAML'
name: small sweep
hardware: {preset: dgx-a100, gpus: 4}
model: {name: small-gpt, layers: 8, hidden: 1024, heads: 16, vocab: 32000, max_seq: 1024}
training: {seq_len: 1024, global_batch: 16}
sweep: {tp: [1, 2], pp: [1, 2], micro_batch: [1, 4], schedule: [1f1b, interleaved], recompute: [none, selective]}
YAML
# Plans, derived as in tests/sim/sweep/sweep_space_test.cpp (m = 16 / (mb·dp), interleaved needs
# m % pp == 0, which holds everywhere here):
#   (1,1,4): z0-3 × mb 2 × rc 2 = 16;  (1,2,2): z0-1 × 2 × (1f1b, v2, v4) × 2 = 24
#   (2,1,2): 4 × 2 × 2 × sp 2 = 32;    (2,2,1): z0 × 2 × 3 × 2 × 2 = 24.   Total 96, none invalid.
run_stepsim sweep "$WORK_DIR/small.yaml" --threads 1 --top 3 --csv "$WORK_DIR/one.csv" --json "$WORK_DIR/one.json" \
  --html "$WORK_DIR/one.html"
expect_status 0 "a sweep on one thread"
checks=$((checks + 1))
[ "$(grep -c '<circle ' "$WORK_DIR/one.html")" -eq 96 ] || fail "the sweep's HTML page plots each of the 96 plans"
single="$out"
expect_stdout_contains "96 plans tried: 0 invalid, 96 simulated (" "counts line"
expect_stdout_contains $'\n1  tp' "the ranking starts at 1"
checks=$((checks + 1))
[ "$(grep -c '' "$WORK_DIR/one.csv")" -eq 97 ] || fail "CSV: a header and 96 rows"

run_stepsim sweep "$WORK_DIR/small.yaml" --threads 3 --top 3 --csv "$WORK_DIR/three.csv"
expect_status 0 "a sweep on three threads"
checks=$((checks + 1))
[ "$out" = "$single" ] || fail "three threads print what one thread prints"
checks=$((checks + 1))
cmp -s "$WORK_DIR/one.csv" "$WORK_DIR/three.csv" || fail "three threads write the CSV of one thread"

for k in 1 2 3; do
  run_stepsim sweep "$WORK_DIR/small.yaml" --threads 2 --shard "$k/3" --json "$WORK_DIR/shard$k.json"
  expect_status 0 "shard $k/3"
done
expect_stdout_contains "32 plans tried (shard 3 of 3)" "a shard says which slice it ran"
run_stepsim sweep --merge "$WORK_DIR/shard2.json" "$WORK_DIR/shard3.json" "$WORK_DIR/shard1.json" --top 3 --csv "$WORK_DIR/merged.csv"
expect_status 0 "merge of three shards"
checks=$((checks + 1))
[ "$out" = "$single" ] || fail "merged shards print what one thread prints: $out"
checks=$((checks + 1))
cmp -s "$WORK_DIR/one.csv" "$WORK_DIR/merged.csv" || fail "merged shards write the CSV of one thread"

run_stepsim sweep --merge "$WORK_DIR/shard1.json" "$WORK_DIR/shard1.json"
expect_status 2 "the same shard twice"
expect_stderr "$WORK_DIR/shard1.json: shard 1/3 was already given; merge each shard once" "shard given twice"

run_stepsim sweep --merge "$WORK_DIR/one.json" "$WORK_DIR/shard1.json"
expect_status 2 "shards of different splits"
expect_stderr "$WORK_DIR/shard1.json: it is a slice of 3, a different number of shards than $WORK_DIR/one.json; merge only shards of one sweep" "different shard counts"

head -4 "$WORK_DIR/small.yaml" >"$WORK_DIR/typo.yaml"
echo 'sweep: {tp: [1], zero_stge: [0]}' >>"$WORK_DIR/typo.yaml"
run_stepsim sweep "$WORK_DIR/typo.yaml"
expect_status 2 "an unknown key in sweep:"
expect_stderr "$WORK_DIR/typo.yaml:5:18: sweep: unknown key 'zero_stge'; did you mean 'zero_stage'?" "unknown sweep key message"

run_stepsim sweep "$WORK_DIR/small.yaml" --shard 4/3
expect_status 2 "a bad shard"
expect_stderr "--shard: expected K/N with 1 <= K <= N, found '4/3'" "bad shard message"

# Ctrl-C: the full default sweep of Llama-2 7B on a DGX A100 takes far longer than one second.
"$STEPSIM" sweep "$SOURCE_DIR/scenarios/sweep_llama2_7b_dgx_a100.yaml" --threads 1 --top 3 >"$WORK_DIR/int.out" 2>"$WORK_DIR/int.err" &
pid=$!
sleep 2
kill -INT "$pid"
wait "$pid" && status=0 || status=$?
err=$(cat "$WORK_DIR/int.err")
expect_status 130 "Ctrl-C exits 130"
out=$(cat "$WORK_DIR/int.out")
expect_stdout_contains "interrupted: the ranking covers the plans finished so far" "Ctrl-C prints the ranking so far"
expect_stdout_contains "not run" "Ctrl-C says how many plans were not run"

run_stepsim advise --hardware a100-pcie --gpus 2 --model zb-1.5b --seq 1024 --global-batch 8 --json
expect_status 0 "advise --json"
expect_stdout_contains '{"best":{"name":"tp1-pp1-dp2-' "advise JSON starts with the best plan"
expect_stdout_contains '"best_zero3":{' "advise JSON has the best ZeRO plan"
expect_stdout_contains '"best_3d":{"name":"tp1-pp2-' "advise JSON: on 2 GPUs the best plan with tp or pp > 1 stands in for 3D"
expect_stdout_contains '"tried":' "advise JSON has the counts"

run_stepsim advise --hardware a100-pcie --gpus 2 --model zb-1.5b --seq 1024 --global-batch 8
expect_status 0 "advise in words"
expect_stdout_contains "Use tp" "advise names a plan"
expect_stdout_contains "What would change the answer:" "advise says what would change it"
expect_stdout_contains "Tensor parallelism on this box" "advise says whether TP pays"

# The seed's rule of thumb from a user's own nccl-tests log: fit the box's collectives to it, then
# the TP verdict (2 x RTX 4090 over PCIe, 2.2 GB/s measured: TP does not pay).
log="$SOURCE_DIR/tests/sim/comm/data/nccl_all_reduce_2x4090_pcie_8B-2G_docker.txt"
run_stepsim advise --hardware rtx4090 --model megatron-1.7b --seq 2048 --global-batch 32 --nccl-log "$log"
expect_status 0 "advise --nccl-log"
expect_stdout_contains "(all_reduce over 2 GPUs): at 2 GiB it measured 2.2 GB/s bus bandwidth" "advise names what it fitted to"
expect_stdout_contains "TP does not pay here" "advise's TP verdict on a slow PCIe box"
run_stepsim advise --hardware rtx4090 --model megatron-1.7b --seq 2048 --global-batch 32 --nccl-log "$log" --json
expect_status 0 "advise --nccl-log --json"
expect_stdout_contains '"measured_comm":{"file":"' "advise JSON says what it fitted to"
expect_stdout_contains '"best_by_tp":[{"tp":1,' "advise JSON has the best plan per TP degree"
run_stepsim advise --hardware rtx4090 --model megatron-1.7b --seq 2048 --global-batch 32 --nccl-log "$log" --gpus 4
expect_status 2 "advise --nccl-log with a GPU count the log contradicts"
expect_stderr "--nodes/--gpus: 1 x 4 GPUs, but the log's rank lines say 2 ranks on 1 hosts" "contradiction message"
# A 3.6B model on two 24 GB cards fits no plan; advise then tries DeepSpeed's ZeRO-Offload.
run_stepsim advise --hardware rtx4090 --gpus 2 --model megatron-3.6b --seq 2048 --global-batch 16
expect_status 0 "advise with nothing fitting"
expect_stdout_contains "No plan fits in GPU memory alone. With DeepSpeed's ZeRO-Offload" "advise falls back to ZeRO-Offload"
expect_stdout_contains "of host memory per server" "advise says what the host must hold"
run_stepsim advise --hardware rtx4090 --gpus 2 --model megatron-3.6b --seq 2048 --global-batch 16 --json
expect_stdout_contains '"best":null' "advise JSON: nothing fits on the GPUs alone"
expect_stdout_contains '"best_offload":{"name":"deepspeed-tp1-' "advise JSON names the best offloaded plan"

# A sweep that offloads the optimizer shows the GPUs' wait for it in its own column.
cat > "$WORK_DIR/offload.yaml" <<'YAML'
name: offload sweep
hardware: {preset: rtx4090, gpus: 2}
model: megatron-3.6b
training: {seq_len: 2048, global_batch: 16}
sweep: {framework: [deepspeed], offload_optimizer: [true], zero_stage: [3], tp: [1], pp: [1], micro_batch: [1], recompute: [full]}
YAML
run_stepsim sweep "$WORK_DIR/offload.yaml"
expect_status 0 "a sweep of offloaded plans"
expect_stdout_contains "deepspeed-tp1-pp1-dp2-z3-offload-mb1-full" "the offloaded plan's name"
expect_stdout_contains "offload: GPU idle while ZeRO-Offload copies or the CPU steps" "the offload column is explained"

finish
