#!/usr/bin/env bash
# The CLI skeleton: help, version, exit codes, messages for unknown commands and options.
. "$(dirname "$0")/lib.sh"

run_stepsim --help
expect_status 0 "--help"
expect_stdout_contains "usage: stepsim [-v|-q] [--limit NAME=N] <command> [options]" "--help shows usage"

run_stepsim --version
expect_status 0 "--version"
expect_stdout_contains "stepsim 0.1.0" "--version prints the version"

run_stepsim
expect_status 2 "no command is bad input"

run_stepsim versoin
expect_status 2 "unknown command"
expect_stderr "stepsim: unknown command 'versoin'; did you mean 'version'? (see stepsim --help)" "unknown command message"

run_stepsim version --frobnicate
expect_status 2 "unknown option"
expect_stderr "stepsim version: unrecognised option '--frobnicate' (see stepsim version --help)" "unknown option message"

# Logging: nothing on stderr by default or with -q; -v says what each plan was simulated as.
run_stepsim run "$SOURCE_DIR/scenarios/llama2_7b_4xa100_pcie.yaml" --strategy pp4
expect_status 0 "run without -v"
expect_stderr "" "no log lines by default"
run_stepsim -q run "$SOURCE_DIR/scenarios/llama2_7b_4xa100_pcie.yaml" --strategy pp4
expect_stderr "" "no log lines with -q"
run_stepsim -v run "$SOURCE_DIR/scenarios/llama2_7b_4xa100_pcie.yaml" --strategy pp4
expect_status 0 "run -v"
expect_stderr_contains "stepsim: info: read $SOURCE_DIR/scenarios/llama2_7b_4xa100_pcie.yaml: 4 strategies on 4 GPUs of a100-pcie" "-v logs the scenario"
expect_stderr_contains "stepsim: debug: simulated pp4: 4 GPUs, full fidelity, per-layer passes; " "-v logs how the plan was built"

run_stepsim version --help
expect_status 0 "command --help"
expect_stdout_contains "usage: stepsim version" "command --help shows usage"

# --limit moves one input limit for the run (sim/config/limits.hpp); a bad one is bad input.
run_stepsim --limit microbatches=16384 version
expect_status 0 "--limit before a command"
run_stepsim version --limit=gpus=131072
expect_status 0 "--limit=NAME=N after a command"
run_stepsim --limit gpus=lots version
expect_status 2 "--limit with a bad count"
expect_stderr "--limit gpus: expected a whole number, found 'lots'" "bad count message"
run_stepsim --limit tokens=5 version
expect_status 2 "--limit with an unknown name"
expect_stderr "--limit: unknown limit 'tokens'; expected one of gpus, seq_len, microbatches, events, memory_gib, trace_slices" "unknown limit message"
run_stepsim --limit
expect_status 2 "--limit without a value"
# bench scale runs each case in a process of its own and reports its CPU, memory and events.
run_stepsim bench scale --cases llama2-13b-64 --json
expect_status 0 "bench scale on one case"
expect_stdout_contains '{"case":"llama2-13b-64","gpus":64,"cpu_s":' "bench scale JSON names the case"
expect_stdout_contains '"result_unit":"s step","error":null}' "the case ran in its child"
run_stepsim bench scale --cases nope
expect_status 2 "bench scale with an unknown case"
expect_stderr_contains "--cases: no case 'nope'; expected default, growth, all or a comma-separated list of llama2-13b-64," "unknown case message"

# What a plan may cost to simulate: past its event limit a step stops at its strategy.
run_stepsim --limit events=1000 run "$SOURCE_DIR/scenarios/llama2_7b_4xa100_nvlink.yaml"
expect_status 2 "a step past its event limit"
expect_stderr_contains "llama2_7b_4xa100_nvlink.yaml:22:5: strategies[0]: plan 'tp2-pp2': expected at most 1,000 engine events in one simulated step" "event limit message"
expect_stderr_contains "found 1,001 (the run stopped there); \`stepsim --limit events=N\` raises the limit" "event limit flag"

finish
