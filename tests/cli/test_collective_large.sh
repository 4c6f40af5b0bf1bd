#!/usr/bin/env bash
# stepsim collective over large groups: 128 ranks fold their rings by default (--rings auto,
# comm::use_coarse_mode); the title says so. How fast that is belongs to benchmarks, not to this
# test, which also runs under the sanitizers.
source "$SOURCE_DIR/tests/cli/lib.sh"

# The tuner picks tree here, solved as a transfer DAG outside the engine where timing_method.hpp's
# size bound allows and else timed on paper; --algo ring folds the ring.
run_stepsim collective --hardware dgx-a100 --nodes 128 --gpus 1 -b 1M -e 16M -f 4
expect_status 0 "128 ranks, auto"
expect_stdout_contains "over 128 GPUs of dgx-a100 (simulated, coarse: rings folded, other steps solved outside the engine;" "title says coarse"
expect_stdout_contains "    16777216       4194304     float     sum      -1" "last size row"
expect_stdout_contains "# Avg bus bandwidth    :" "nccl-tests closing line"

run_stepsim collective --hardware dgx-a100 --nodes 128 --gpus 1 -b 1M -e 256M -f 4 --algo ring
expect_status 0 "128 ranks, folded ring"
expect_stdout_contains "   268435456      67108864     float     sum      -1" "256 MiB row"

run_stepsim collective --hardware dgx-a100 --nodes 2 --gpus 8 -b 16M -e 16M --algo ring --rings step
expect_status 0 "ring steps on 16 ranks"
expect_stdout_contains "over 16 GPUs of dgx-a100 (simulated; in-place" "title without folding"

run_stepsim collective --hardware dgx-a100 -b 1M -e 1M --rings exact
expect_status 2 "bad ring mode"
expect_stderr "--rings: expected auto, step or folded, found 'exact'" "bad ring mode message"

finish
