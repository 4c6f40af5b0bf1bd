// The side-by-side summary of strategies that `stepsim run` prints, and the plain sentences under
// it that say why the best plan wins. Input: StepResults as sim/plan fills them (headline metrics
// only; no timeline needed). Output: text for a terminal, every number with its unit.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "sim/plan/step_result.hpp"

namespace stepsim::report {

/// The best plan: highest tokens/s among those that fit in memory; ties go to the earlier one.
/// nullopt when none fits (or the list is empty).
std::optional<std::size_t> best_index(const std::vector<plan::StepResult>& results);

struct ComparisonOptions {
  bool mark_best = true;  ///< put '*' before the best plan's name and a footnote under the table
};

/// One column per strategy, one row per metric: step time, tokens/s, TFLOP/s per GPU, MFU, HFU,
/// bubble, exposed TP/PP/DP/ZeRO communication, sync stalls, peak memory / capacity, fits.
std::string format_comparison(const std::vector<plan::StepResult>& results, const ComparisonOptions& options = {});

/// A few sentences generated from the numbers: which plan wins and by how much, what the winner
/// still loses, and for each other plan the largest shares of its step lost to bubbles, exposed
/// communication or stalls (or that it does not fit). Empty for an empty list.
std::string explain_winner(const std::vector<plan::StepResult>& results);

/// One cost a plan pays, as a share of its step: "pipeline bubbles", 0.31.
struct Loss {
  std::string what;
  double fraction = 0;
};
/// A plan's losses (bubble, exposed TP/PP/DP/ZeRO communication, sync stalls), largest first.
std::vector<Loss> losses_of(const plan::StepResult& result);

}  // namespace stepsim::report
