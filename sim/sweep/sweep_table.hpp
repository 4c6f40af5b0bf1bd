// What `stepsim sweep` prints: the ranking of the plans that fit, one row per plan with the
// metrics of `stepsim run` (throughput, step time, TFLOP/s per GPU, MFU, HFU, bubble, exposed
// TP/PP/DP/ZeRO communication and sync stalls as shares of the step, peak memory), and a line of
// counts (tried, invalid, out of memory). Text for a terminal; every number has its unit.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "sim/sweep/sweep_outcome.hpp"

namespace stepsim::sweep {

/// The best `top` plans that fit, best first ("no plan fits in memory" when none does).
std::string format_ranking(const SweepOutcome& outcome, std::size_t top);

/// "1,044 plans tried: 60 invalid, 984 simulated (312 out of memory, 672 fit)", plus the shards
/// covered and, when interrupted, how many plans were not run.
std::string format_counts(const SweepOutcome& outcome);

/// Every simulated plan as CSV (report::csv_header's columns after a `rank` column): the plans
/// that fit in ranking order, then those that do not (rank empty) by candidate index.
void write_ranking_csv(std::ostream& out, const SweepOutcome& outcome);

/// The progress line drawn on a terminal: bar, count, rate and time left.
/// "[#########...........]  412/984  17.3 plans/s  ETA 33 s" (`unit` names what is counted).
/// Requires: width ≥ 1.
std::string format_progress(std::size_t done, std::size_t total, double elapsed_s, std::size_t width = 30,
                            const std::string& unit = "plans");

}  // namespace stepsim::sweep
