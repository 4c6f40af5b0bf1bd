#!/usr/bin/env bash
# What `collective --calibrate` takes from the command line when the log does not say it: the GPU
# count of a table pasted without its "# Rank" lines (--nodes, --gpus) and the op (--op, which
# wins over the guess: a 2-rank all-reduce has busbw = algbw and would read as a broadcast), and
# asked for where the columns fit two ops alike.
. "$(dirname "$0")/lib.sh"

log="$SOURCE_DIR/tests/sim/comm/data/nccl_all_reduce_2x4090_pcie_8B-2G_docker.txt"
mkdir -p "$WORK_DIR"
grep -v '#  Rank' "$log" > "$WORK_DIR/table.txt"

run_stepsim collective --calibrate "$WORK_DIR/table.txt" --hardware rtx4090 -o "$WORK_DIR/out.yaml"
expect_status 2 "table without rank lines, no GPU count"
header=$(grep -n '#  *size' "$WORK_DIR/table.txt" | head -1 | cut -d: -f1)
expect_stderr "$WORK_DIR/table.txt:$header:1: no '#  Rank N ... device' lines before this table: cannot tell how many GPUs ran (give --nodes and --gpus)" \
  "asks for the GPU count"

run_stepsim collective --calibrate "$WORK_DIR/table.txt" --hardware rtx4090 --gpus 2 --op all_reduce -o "$WORK_DIR/out.yaml"
expect_status 0 "table without rank lines, --gpus 2 --op all_reduce"
expect_stdout_contains "# calibrating against $WORK_DIR/table.txt: all_reduce, 2 ranks on 1 host(s), 29 sizes" "uses the given count and op"

run_stepsim collective --calibrate "$log" --hardware rtx4090 --gpus 4 -o "$WORK_DIR/out.yaml"
expect_status 2 "--gpus against the rank lines"
expect_stderr "--nodes/--gpus: 1 x 4 GPUs, but the log's rank lines say 2 ranks on 1 hosts" "names both counts"

run_stepsim collective --calibrate "$log" --hardware rtx4090 --op allreduce -o "$WORK_DIR/out.yaml"
expect_status 2 "bad --op under --calibrate"
expect_stderr "--op: expected one of all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv, found 'allreduce'" \
  "bad op message"

# A table whose columns fit all_gather and alltoall alike (redop none, root -1, busbw = 7/8 of
# algbw on 8 GPUs) and that names no *_perf test: the op is asked for, not guessed.
run_stepsim collective --hardware dgx-a100 --gpus 8 --op alltoall -b 1K -e 64M -f 4
expect_status 0 "a simulated alltoall table"
printf '%s\n' "$out" > "$WORK_DIR/alltoall.txt"
row=$(grep -n '^ *1024 ' "$WORK_DIR/alltoall.txt" | head -1 | cut -d: -f1)
run_stepsim collective --calibrate "$WORK_DIR/alltoall.txt" --hardware dgx-a100 -o "$WORK_DIR/out.yaml"
expect_status 2 "an all_gather/alltoall table without --op"
expect_stderr "$WORK_DIR/alltoall.txt:$row:1: expected the name of the test that wrote this table (all_gather_perf or alltoall_perf): its columns fit either alike; say which with --op" \
  "names both ops and the first row"
run_stepsim collective --calibrate "$WORK_DIR/alltoall.txt" --hardware dgx-a100 --op alltoall -o "$WORK_DIR/out.yaml"
expect_status 0 "the same table with --op alltoall"
expect_stdout_contains "# calibrating against $WORK_DIR/alltoall.txt: alltoall, 8 ranks on 1 host(s), 9 sizes" "calibrates the alltoall"

finish
