#!/usr/bin/env bash
# The CLI skeleton: help, version, exit codes, messages for unknown commands and options.
. "$(dirname "$0")/lib.sh"

run_stepsim --help
expect_status 0 "--help"
expect_stdout_contains "usage: stepsim [-v|-q] <command> [options]" "--help shows usage"

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

run_stepsim version --help
expect_status 0 "command --help"
expect_stdout_contains "usage: stepsim version" "command --help shows usage"

finish
