// The numerical fit behind calibration (calibration.hpp): parameters chosen so that each row of a
// measured log is explained by one of its candidates, the ways the row may have run. Candidates
// come in groups: within a group the machine chooses, so the fastest runs (NCCL's tuner picking
// a protocol); between groups the log does not say, so the group whose fastest is closest to the
// logged time explains the row (which algorithm NCCL ran). It knows nothing of NCCL: a
// candidate's time is a function the caller gives, costly to evaluate (an estimate() of a plan).
//
// Method: a trust-region loop on a local model (Nocedal & Wright, "Numerical Optimization",
// ch. 4). At the current point each candidate's time is linearised by forward differences in
// the coordinate it is nearly linear in — a latency itself, a rate (efficiency, bandwidth share)
// by its reciprocal, since a transfer takes latency + bytes / rate — and the model objective is
// minimised inside a box of the current radius in log space by a pattern search, which handles
// the min over candidates that a gradient method would stall on. The true objective decides:
// a step that does not improve it is refused and the radius shrinks. So the costly function is
// called at most (1 + its parameters) times per candidate and iteration, not at every point the
// pattern search tries.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

namespace stepsim::comm {

struct FitParameter {
  double value = 1;  ///< the starting value
  double lower = 0;  ///< bounds; lower > 0
  double upper = 1;
  bool rate = false;  ///< times are nearly linear in 1/value (else in value)
};

/// One way a row may have run, and the parameters its time depends on (the others are not
/// probed for it).
struct FitCandidate {
  std::size_t row = 0;
  std::size_t group = 0;  ///< small: groups of a row are numbered from 0
  std::vector<std::size_t> parameters{};
};

struct FitRow {
  double logged_us = 1;
  /// The relative error the row is held to: the objective weighs each row's log error by
  /// 1/tolerance², so every row counts in proportion to how close it must come.
  double tolerance = 0.1;
  /// The |log error| a row may reach before it costs extra: a fit must not leave a row further
  /// from its measurement than it found it (beyond the measurement's own spread), so going past
  /// this costs many times more than the error itself.
  double worse_from = std::numeric_limits<double>::infinity();
};

/// Where a fit stands after each of its iterations, for a progress line.
struct FitProgress {
  int iteration = 0;
  int max_iterations = 0;
  double objective = 0;
  std::size_t time_evaluations = 0;
};

struct FitProblem {
  std::vector<FitParameter> parameters{};
  std::vector<FitCandidate> candidates{};  ///< every row has at least one
  std::vector<FitRow> rows{};
  /// The candidate's time in microseconds (> 0) at parameter values x.
  std::function<double(const std::vector<double>& x, std::size_t candidate)> time_us{};
  std::function<void(const FitProgress&)> on_iteration{};  ///< optional
};

struct FitResult {
  std::vector<double> x;            ///< the fitted parameter values
  double objective = 0;             ///< fit_objective() at x
  std::size_t time_evaluations = 0;  ///< calls of time_us
};

/// Requires: a valid problem (bounds around each start, every candidate's row and parameters in
/// range, every row with a candidate). Deterministic.
FitResult fit_row_times(const FitProblem& problem);

/// The objective when the candidates take `candidate_us` (one time per candidate): per row, with
/// e = |log(logged / explaining candidate's time)|, (e / tolerance)² plus
/// kWorsePenalty · (max(0, e − worse_from) / tolerance)².
constexpr double kWorsePenalty = 30;
double fit_objective(const FitProblem& problem, const std::vector<double>& candidate_us);

}  // namespace stepsim::comm
