#!/usr/bin/env bash
# A scenario whose strategy reads Megatron-LM's own GPT-3 175B launch script
# (scenarios/megatron_gpt3_175b_distributed.sh): the plan it describes is the one written out by
# hand, the flags it does not model are warnings with their file:line:col, and a bad value in the
# script is exit 2 with its position.
. "$(dirname "$0")/lib.sh"

run_stepsim run "$SOURCE_DIR/scenarios/gpt3_175b_megatron_args.yaml" --json -
expect_status 0 "the shipped Megatron-arguments scenario runs"
expect_stdout_contains '"fits"' "run --json - reports whether each strategy fits"
expect_stderr_contains "megatron_gpt3_175b_distributed.sh:44:5: --rampup-batch-size: the batch ramp-up is not modelled" \
  "an unmodelled flag is a warning with its position"
expect_stderr_contains "megatron_gpt3_175b_distributed.sh:50:5: --clip-grad:" "gradient clipping warned"
expect_same_step_time "$out" from-script by-hand "the script's plan is the same plan written by hand"

mkdir -p bad
cp "$SOURCE_DIR/scenarios/gpt3_175b_megatron_args.yaml" bad/
sed 's/--pipeline-model-parallel-size 16/--pipeline-model-parallel-size sixteen/' \
  "$SOURCE_DIR/scenarios/megatron_gpt3_175b_distributed.sh" > bad/megatron_gpt3_175b_distributed.sh
run_stepsim run bad/gpt3_175b_megatron_args.yaml
expect_status 2 "a bad value in the Megatron arguments"
expect_stderr_contains "megatron_gpt3_175b_distributed.sh:61:33: --pipeline-model-parallel-size: expected an integer" \
  "the error names the script's line and column"
finish
