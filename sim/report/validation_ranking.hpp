// Plan ranking against published sweeps: where a source measured several plans of the same work
// (same model, batch and GPU count; the validation files name it with `group:`), what a user
// needs is the right winner, not only small errors. Per group: Spearman's rank correlation of
// predicted against measured, and the regret of the predicted-best plan (how much slower its
// measured figure is than the measured best). Groups of one plan say nothing and are skipped.
#pragma once

#include <string>
#include <vector>

#include "sim/report/validation.hpp"

namespace stepsim::report {

/// Whether a larger value of `metric` is better (throughput, MFU) or worse (step time).
bool higher_is_better(const std::string& metric);

/// Spearman's rho: Pearson's correlation of the ranks, ties given their average rank
/// (Spearman 1904; the tie rule of Kendall, "Rank Correlation Methods", ch. 3). Requires equal
/// sizes, at least 2 values; returns 1 when either side is constant (no order to get wrong).
double spearman(const std::vector<double>& a, const std::vector<double>& b);

struct GroupRanking {
  std::string source, group;
  int plans = 0;
  double spearman = 0;     ///< predicted vs measured, in (-1, 1]
  /// measured figure of the predicted-best plan against the measured best, as a slowdown:
  /// time(pick) / time(best) − 1 for step times, best / pick − 1 for throughputs. 0 = right pick.
  double regret = 0;
  bool picked_best = false;
  std::string predicted_best, measured_best;  ///< scenario names
};

struct RankingSummary {
  std::string source;  ///< "all" for the summary over every source
  int groups = 0, picked_best = 0;
  double mean_spearman = 0, median_regret = 0, max_regret = 0;
};

/// One entry per (source, group) with at least two plans, in order of first appearance.
std::vector<GroupRanking> rank_groups(const std::vector<ValidationRow>& rows);
/// Per source that has groups, then "all" when more than one source has them.
std::vector<RankingSummary> summarize_rankings(const std::vector<GroupRanking>& groups);

}  // namespace stepsim::report
