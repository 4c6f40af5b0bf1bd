// Time and money: how long training on a token budget takes under each strategy, and what it costs
// at a price per GPU-hour. days = tokens / (tokens/s) / 86 400; GPU-hours = days · 24 · GPUs;
// cost = GPU-hours · price. Plans that do not fit are listed as such, not priced.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/plan/step_result.hpp"

namespace stepsim::report {

struct TrainingCost {
  double days = 0;
  double gpu_hours = 0;
  std::optional<double> dollars;  ///< when a price is known
};

/// Requires: result.tokens_per_s > 0 (otherwise days and hours are infinite).
TrainingCost training_cost(const plan::StepResult& result, double tokens, std::optional<double> price_per_gpu_hour);

/// 3e11 -> "300B", 1.5e12 -> "1.5T", 2e6 -> "2M": the form `training.tokens` is written in.
std::string compact_count(double n);

/// "Training on 300B tokens at $2.00 per GPU-hour:" then a table: strategy, GPUs, days, GPU-hours,
/// cost (or "-" without a price). Without a price the cost column says how to give one.
std::string format_time_and_money(const std::vector<plan::StepResult>& results, double tokens,
                                  std::optional<double> price_per_gpu_hour);

}  // namespace stepsim::report
