// What `collective --calibrate` and `advise --nccl-log` share: a user's nccl-tests log completed
// by the command line (--op, and --nodes/--gpus for a table pasted without its rank lines).
#pragma once

#include "sim/comm/nccl_log.hpp"
#include "tools/cli_common.hpp"

namespace stepsim::cli {

/// The op (--op, where the command has it, over the log's binary name) and, for a table without
/// rank lines, the GPU count (--nodes, --gpus). Options that contradict the rank lines are a
/// UsageError, and a log whose columns fit two ops alike without --op a ConfigError at its first
/// row, not a silent choice.
void complete_nccl_log(const po::variables_map& vm, comm::NcclLog& log);

}  // namespace stepsim::cli
