#!/usr/bin/env bash
# `stepsim bubble`: the pipeline bubble lesson. The 1F1B diagram for p = 4, m = 8 is pinned by a
# golden file; its bubble is (p-1)/(m+p-1) = 3/11 = 27.3 % (checked numerically in
# tests/sim/report/bubble_lesson_test.cpp). Regenerate with UPDATE_GOLDEN=1 after a deliberate change.
. "$(dirname "$0")/lib.sh"

run_stepsim bubble --pp 4 --microbatches 8 --schedule 1f1b
expect_status 0 "bubble 1f1b"
expect_stdout_golden "$SOURCE_DIR/tests/cli/golden/bubble_pp4_m8_1f1b.txt" "bubble --pp 4 --microbatches 8 --schedule 1f1b"

run_stepsim bubble --pp 4 --microbatches 8 --json
expect_status 0 "bubble --json"
expect_stdout_contains '"measured_bubble":0.2727272727272727,"formula_bubble":0.2727272727272727,"schedule":"1f1b","pp":4,"microbatches":8' "bubble --json keys"

run_stepsim bubble --pp 4 --microbatches 8 --schedule interleaved
expect_status 0 "interleaved defaults to v = 2"
expect_stdout_contains "textbook (p-1)/(v*m+p-1) = 3/19 = 15.8 %" "interleaved formula"

run_stepsim bubble --pp 4 --microbatches 8 --schedule zb-h1 --comm-ratio 0.5
expect_status 0 "zb-h1 with communication"
expect_stdout_contains "The sends (R = 0.50) add" "communication raises the bubble"

run_stepsim bubble --pp 4 --microbatches 8 --schedule zb
expect_status 2 "unknown schedule"
expect_stderr "stepsim bubble: --schedule: expected gpipe, 1f1b, interleaved or zb-h1, found 'zb'" "unknown schedule message"

run_stepsim bubble --pp 4 --microbatches 6 --schedule interleaved
expect_status 2 "interleaved needs m a multiple of p"
expect_stderr "stepsim bubble: --microbatches: interleaved needs a multiple of --pp (4), found 6" "interleaved message"

run_stepsim bubble --pp 0 --microbatches 8
expect_status 2 "zero stages"
expect_stderr "stepsim bubble: --pp: expected at least 1 stage, found 0" "zero stages message"

run_stepsim bubble --microbatches 8
expect_status 2 "--pp is required"

finish
