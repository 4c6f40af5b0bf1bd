#!/usr/bin/env bash
# stepsim collective: the nccl-tests table, --json, size units, and bad input.
source "$SOURCE_DIR/tests/cli/lib.sh"

run_stepsim collective --hardware dgx-a100 -b 1M -e 8G -f 8192
expect_status 0 "sweep"
expect_stdout_contains "# Avg bus bandwidth    :" "nccl-tests closing line"
expect_stdout_contains "     1048576        262144     float     sum      -1" "size, count, type, redop, root columns"

run_stepsim collective --hardware dgx-h100 --op all_gather -b 8G -e 8G --json
expect_status 0 "json"
expect_stdout_contains '{"rows": [{"size_bytes": 8589934592, "time_us": ' "json row"
expect_stdout_contains '"avg_busbw_gbps": ' "json average"

run_stepsim collective --hardware dgx-a100 --op allreduce
expect_status 2 "unknown op"
expect_stderr "--op: expected one of all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv, found 'allreduce'" "unknown op message"

run_stepsim collective --hardware dgx-a100 -b 1X
expect_status 2 "bad size"

run_stepsim collective --hardware dgx-a100 --algo nvls -b 1M -e 1M
expect_status 2 "nvls on A100"

finish
