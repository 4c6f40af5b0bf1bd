#include "sim/comm/calibration_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace stepsim::comm {
namespace {

// The coordinate a time is linear in: a latency itself, a rate by its reciprocal.
double coordinate(const FitParameter& p, double value) { return p.rate ? 1.0 / value : value; }

// Forward differences: a 2 % change, downwards where the upper bound leaves no room.
constexpr double kProbe = 0.02;
// The trust region's radius in log space: it starts at a factor of 4 either way, as the pattern
// search of the first fit did, and the loop ends once it is below 0.1 %.
constexpr double kStartRadius = 1.3862943611198906;  // log 4
constexpr double kMaxRadius = 4.1588830833596715;    // log 64
constexpr double kMinRadius = 1e-3;
constexpr int kMaxIterations = 60;
// Where the model stops predicting the true objective (a kink: a link that stops being the
// bottleneck, a ring lattice's other critical path), the radius shrinks to nothing while a
// larger step would still pay; the loop then starts again from the point it reached, at the
// first radius, while that improves the objective by 0.1 %.
constexpr int kMaxRestarts = 3;

struct LocalModel {
  std::vector<double> at;                  // each candidate's time at the centre
  std::vector<std::vector<double>> slope;  // per candidate, d time / d coordinate, per its parameter
  std::vector<char> probed;                // per candidate: else its slopes are 0
};

// A candidate more than this much slower than the fastest of its group is not what runs the row
// unless the parameters move far: it is not probed, and its time stays the centre's until the
// next centre. Every candidate is timed at every centre, so a step the model takes is judged on
// times at most one step old, and the result on all of them.
constexpr double kProbedSpread = 2.0;

template <class TimeOf>
LocalModel linearise(const FitProblem& problem, const std::vector<double>& x, const std::vector<double>& times, TimeOf& time_of) {
  const auto& params = problem.parameters;
  const auto& candidates = problem.candidates;
  std::vector<std::vector<double>> fastest(problem.rows.size());
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    auto& groups = fastest[candidates[c].row];
    if (groups.size() <= candidates[c].group) groups.resize(candidates[c].group + 1, std::numeric_limits<double>::infinity());
    groups[candidates[c].group] = std::min(groups[candidates[c].group], times[c]);
  }
  LocalModel model{.at = times, .slope = std::vector<std::vector<double>>(candidates.size()),
                   .probed = std::vector<char>(candidates.size(), 0)};
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    model.probed[c] = times[c] <= kProbedSpread * fastest[candidates[c].row][candidates[c].group];
    for (std::size_t k : candidates[c].parameters) {
      if (!model.probed[c]) {
        model.slope[c].push_back(0.0);
        continue;
      }
      auto probe = x;
      probe[k] = x[k] * std::exp(kProbe) <= params[k].upper ? x[k] * std::exp(kProbe) : x[k] * std::exp(-kProbe);
      const double dz = coordinate(params[k], probe[k]) - coordinate(params[k], x[k]);
      model.slope[c].push_back((time_of(probe, c) - times[c]) / dz);
    }
  }
  return model;
}

// The model's best point inside the box of `radius` around the centre x, in log values, by a
// pattern search from the centre; and the model's objective there.
std::pair<std::vector<double>, double> model_minimum(const FitProblem& problem, const LocalModel& model,
                                                     const std::vector<double>& x, double radius) {
  const auto& params = problem.parameters;
  const auto& candidates = problem.candidates;
  std::vector<double> centre_z(params.size()), trial_times(candidates.size());
  for (std::size_t k = 0; k < params.size(); ++k) centre_z[k] = coordinate(params[k], x[k]);
  // A linear model may dip below zero far from the centre: its times are floored at a thousandth
  // of the centre's.
  auto objective = [&](const std::vector<double>& u) {
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      double t = model.at[c];
      const auto& ks = candidates[c].parameters;
      for (std::size_t j = 0; j < ks.size(); ++j)
        t += model.slope[c][j] * (coordinate(params[ks[j]], std::exp(u[ks[j]])) - centre_z[ks[j]]);
      trial_times[c] = std::max(t, 1e-3 * model.at[c]);
    }
    return fit_objective(problem, trial_times);
  };
  std::vector<double> u(params.size()), lo(params.size()), hi(params.size());
  for (std::size_t k = 0; k < params.size(); ++k) {
    u[k] = std::log(x[k]);
    lo[k] = std::max(std::log(params[k].lower), u[k] - radius);
    hi[k] = std::min(std::log(params[k].upper), u[k] + radius);
  }
  double best = objective(u);
  for (double step = radius; step > radius / 512; step /= 2)
    for (bool improved = true; improved;) {
      improved = false;
      for (std::size_t k = 0; k < params.size(); ++k)
        for (double sign : {1.0, -1.0}) {
          auto trial = u;
          trial[k] = std::clamp(u[k] + sign * step, lo[k], hi[k]);
          if (trial[k] == u[k]) continue;
          if (const double m = objective(trial); m < best - 1e-12) best = m, u = trial, improved = true;
        }
    }
  return {u, best};
}

}  // namespace

double fit_objective(const FitProblem& problem, const std::vector<double>& candidate_us) {
  // fastest[row][group]
  std::vector<std::vector<double>> fastest(problem.rows.size());
  for (std::size_t c = 0; c < problem.candidates.size(); ++c) {
    const auto& candidate = problem.candidates[c];
    auto& groups = fastest[candidate.row];
    if (groups.size() <= candidate.group) groups.resize(candidate.group + 1, std::numeric_limits<double>::infinity());
    groups[candidate.group] = std::min(groups[candidate.group], candidate_us[c]);
  }
  double sum = 0;
  for (std::size_t r = 0; r < problem.rows.size(); ++r) {
    double closest = std::numeric_limits<double>::infinity();
    for (double t : fastest[r]) closest = std::min(closest, std::abs(std::log(problem.rows[r].logged_us / t)));
    const FitRow& row = problem.rows[r];
    const double e = closest / row.tolerance;
    const double worse = std::max(0.0, closest - row.worse_from) / row.tolerance;
    sum += e * e + kWorsePenalty * worse * worse;
  }
  return sum;
}

FitResult fit_row_times(const FitProblem& problem) {
  const auto& params = problem.parameters;
  const auto& candidates = problem.candidates;
  FitResult result;
  for (const auto& p : params) result.x.push_back(std::clamp(p.value, p.lower, p.upper));
  auto time_of = [&](const std::vector<double>& x, std::size_t c) {
    ++result.time_evaluations;
    return problem.time_us(x, c);
  };
  std::vector<double> times(candidates.size());
  std::vector<char> stale(candidates.size(), 1);  // a time from an earlier centre
  auto refresh = [&] {
    for (std::size_t c = 0; c < candidates.size(); ++c)
      if (stale[c]) times[c] = time_of(result.x, c), stale[c] = 0;
  };
  refresh();
  result.objective = fit_objective(problem, times);
  double radius = kStartRadius;
  int restarts = 0;
  double objective_at_restart = result.objective;
  LocalModel model;
  bool moved = true;
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    if (radius <= kMinRadius) {
      if (restarts == kMaxRestarts || result.objective >= objective_at_restart * (1 - 1e-3)) break;
      ++restarts, objective_at_restart = result.objective, radius = kStartRadius;
    }
    if (moved) {
      refresh();
      model = linearise(problem, result.x, times, time_of);
      moved = false;
    }
    const double at_centre = fit_objective(problem, times);
    const auto [u, predicted] = model_minimum(problem, model, result.x, radius);
    if (at_centre - predicted <= 1e-9 * std::max(1.0, at_centre)) {  // the centre is the model's best
      radius = kMinRadius;
      continue;
    }
    std::vector<double> next(params.size());
    for (std::size_t k = 0; k < params.size(); ++k) next[k] = std::clamp(std::exp(u[k]), params[k].lower, params[k].upper);
    auto next_times = times;
    for (std::size_t c = 0; c < candidates.size(); ++c)
      if (model.probed[c]) next_times[c] = time_of(next, c);
    const double actual = fit_objective(problem, next_times);
    if (actual < result.objective) {
      const double agreement = (result.objective - actual) / (at_centre - predicted);
      result.x = std::move(next);
      times = std::move(next_times);
      for (std::size_t c = 0; c < candidates.size(); ++c) stale[c] = !model.probed[c];
      result.objective = actual;
      moved = true;
      if (agreement > 0.75) radius = std::min(2 * radius, kMaxRadius);
      else if (agreement < 0.25) radius /= 2;
    } else {
      radius /= 4;
    }
    if (problem.on_iteration) problem.on_iteration({iteration + 1, kMaxIterations, result.objective, result.time_evaluations});
  }
  refresh();
  result.objective = fit_objective(problem, times);
  return result;
}

}  // namespace stepsim::comm
