// The log sink every command passes down to the layers (config::Log), writing to the spdlog
// logger main() sets up on stderr: warnings by default, everything with -v, errors only with -q.
#pragma once

#include <spdlog/common.h>

#include "models/model_spec.hpp"
#include "sim/config/log.hpp"
#include "sim/plan/scenario.hpp"

namespace stepsim::cli {

/// Installs the stderr logger at `level` (main, once, before any command runs).
void set_up_logging(spdlog::level::level_enum level);

/// A sink to spdlog's logger at its current level; thread-safe (a sweep's workers share it).
config::Log cli_log();

/// One warning per field of the model's file that changes cost and is not modelled.
void warn_unmodelled(const models::ModelSpec& model);
/// The model's, then each strategy's (its DeepSpeed config's unmodelled keys).
void warn_unmodelled(const plan::Scenario& scenario);

}  // namespace stepsim::cli
