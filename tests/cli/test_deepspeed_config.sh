#!/usr/bin/env bash
# A scenario whose strategy reads a real ds_config.json (scenarios/ds_config_zero3.json): it runs,
# says which of the config's keys it does not model with their file:line:col, and a bad value in
# the config is exit 2 with its position.
. "$(dirname "$0")/lib.sh"

run_stepsim run "$SOURCE_DIR/scenarios/llama2_7b_8xa100_deepspeed.yaml" --json -
expect_status 0 "the shipped DeepSpeed scenario runs"
expect_stdout_contains '"fits"' "run --json - reports whether each strategy fits"
expect_stdout_contains '"name":"deepspeed-zero3"' "the DeepSpeed strategy is simulated"
expect_stderr_contains "ds_config_zero3.json:5:24: gradient_clipping: the gradient norm's pass over every gradient is not costed" \
  "an unmodelled key is a warning with its position"
expect_stderr_contains "zero_optimization.stage3_prefetch_bucket_size: not modelled" "prefetch bucket warned"

mkdir -p bad
cp "$SOURCE_DIR/scenarios/llama2_7b_8xa100_deepspeed.yaml" bad/
sed 's/"stage": 3,/"stage": "three",/' "$SOURCE_DIR/scenarios/ds_config_zero3.json" > bad/ds_config_zero3.json
run_stepsim run bad/llama2_7b_8xa100_deepspeed.yaml
expect_status 2 "a bad value in the DeepSpeed config"
expect_stderr_contains "ds_config_zero3.json:28:14: zero_optimization.stage:" "the error names the config's line and column"
finish
