#!/usr/bin/env bash
# What `collective --calibrate` takes from the command line when the log does not say it: the GPU
# count of a table pasted without its "# Rank" lines (--nodes, --gpus) and the op (--op, which
# wins over the guess: a 2-rank all-reduce has busbw = algbw and would read as a broadcast).
. "$(dirname "$0")/lib.sh"

log="$SOURCE_DIR/tests/sim/comm/data/nccl_all_reduce_2x4090_pcie_8B-2G_docker.txt"
mkdir -p "$WORK_DIR"
grep -v '#  Rank' "$log" > "$WORK_DIR/table.txt"

run_stepsim collective --calibrate "$WORK_DIR/table.txt" --hardware rtx4090 -o "$WORK_DIR/out.yaml"
expect_status 2 "table without rank lines, no GPU count"
expect_stderr "$WORK_DIR/table.txt: no '#  Rank N ... device' lines: cannot tell how many GPUs ran (give --nodes and --gpus)" \
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

finish
