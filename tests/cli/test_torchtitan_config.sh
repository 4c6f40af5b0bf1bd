#!/usr/bin/env bash
# A scenario whose strategy reads torchtitan's own Llama 3 70B preset
# (scenarios/torchtitan_llama3_70b.toml): the plan it describes is the one written out by hand,
# the key it does not model is a warning with its file:line:col, and a bad value in the TOML is
# exit 2 with its position.
. "$(dirname "$0")/lib.sh"

run_stepsim run "$SOURCE_DIR/scenarios/llama3_70b_torchtitan.yaml" --json -
expect_status 0 "the shipped torchtitan scenario runs"
expect_stdout_contains '"fits"' "run --json - reports whether each strategy fits"
expect_stderr_contains "torchtitan_llama3_70b.toml:39:12: training.max_norm: the gradient norm's pass" \
  "an unmodelled key is a warning with its position"
expect_same_step_time "$out" from-toml by-hand "the TOML's plan is the same plan written by hand"

mkdir -p bad
cp "$SOURCE_DIR/scenarios/llama3_70b_torchtitan.yaml" bad/
sed 's/^tensor_parallel_degree = 8/tensor_parallel_degree = "eight"/' "$SOURCE_DIR/scenarios/torchtitan_llama3_70b.toml" \
  > bad/torchtitan_llama3_70b.toml
run_stepsim run bad/llama3_70b_torchtitan.yaml
expect_status 2 "a bad value in the torchtitan config"
expect_stderr_contains "torchtitan_llama3_70b.toml:46:26: parallelism.tensor_parallel_degree: expected an integer" \
  "the error names the TOML's line and column"
finish
