#include "sim/comm/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include "hardware/router.hpp"
#include "sim/comm/collective.hpp"
#include "sim/config/config_error.hpp"

namespace stepsim::comm {
namespace {

std::vector<int> all_gpus(const hw::Cluster& cluster) {
  std::vector<int> gpus;
  for (int g = 0; g < cluster.gpu_count(); ++g) gpus.push_back(g);
  return gpus;
}

// The machine under calibration and one router over it for the whole fit: routes depend on the
// topology only, so trying other comm parameters changes `cluster.comm` and nothing else.
struct Bench {
  explicit Bench(const hw::Cluster& c) : cluster(c), router(cluster), gpus(all_gpus(c)) {}
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;
  hw::Cluster cluster;
  hw::Router router;  // refers to `cluster`
  std::vector<int> gpus;
};

// The fit uses the rows of 64 MiB and more when the log has at least two, and times them under
// the Simple protocol, whose parameters it fits: NCCL runs Simple there (every shipped log sits on
// its Simple plateau), while our tuner, which lacks NCCL's per-channel LL128 caps (tuning.cc
// perChMaxRingLL128Bw), would take LL128 up to a few hundred MiB across servers. Smaller rows are
// timed under the protocol the tuner picks (LL, LL128), with the parameters of those protocols
// as the machine has them; the table shows every row. Training traffic that the fit matters for
// (gradient buckets, ZeRO shards) is large.
constexpr std::int64_t kLargeRow = 64LL << 20;

// The algorithm and protocol a row is timed with throughout the fit, as the algorithm alone was:
// re-running the tuner at every step of the search would triple its cost and let the choice jump.
struct RowChoice {
  Algorithm algorithm = Algorithm::ring;
  hw::Protocol protocol = hw::Protocol::simple;
};

// The request of a row as the fit times it: large rows under Simple (above), others left to the
// tuner.
CollectiveRequest row_request(const Bench& bench, const NcclLog& log, std::int64_t bytes, Algorithm algorithm) {
  CollectiveRequest req{.op = log.op, .gpus = bench.gpus, .bytes = bytes, .algorithm = algorithm};
  if (bytes >= kLargeRow) req.protocol = hw::Protocol::simple;
  return req;
}

std::vector<RowChoice> tuner_choices(const Bench& bench, const NcclLog& log) {
  std::vector<RowChoice> out;
  for (const auto& row : log.rows) {
    const auto choice = choose_with_estimate(bench.router, row_request(bench, log, row.size_bytes, Algorithm::automatic));
    out.push_back({choice.algorithm, choice.protocol});
  }
  return out;
}

// Which algorithm ran each row. nccl-tests does not log NCCL's choice, and NCCL's tuner has its
// own model (src/graph/tuning.cc: per-algorithm bandwidth caps and treeCorrectionFactor, which
// derates trees at medium sizes), so on 2 DGX A100 it keeps the ring up to 512 MiB where our
// estimate() would already take the tree; the OCI OKE log's jump from 156 to 219 GB/s busbw
// between 512 MiB and 1 GiB is that switch. The row itself says it better: per row, the supported
// algorithm whose time with the machine's stock parameters is closest (in log time) to the logged
// one, under the protocol our tuner gives it. Only across servers: inside one server our tuner and
// NCCL's agree (ring, or NVLS), and a chain-shaped tree is never the best match for a log written
// by a ring. Candidates are the algorithms NCCL has (ring, tree, NVLS); hierarchical and direct
// are this simulator's own compositions, which a log of NCCL never ran.
std::vector<RowChoice> closest_algorithms(const Bench& bench, const NcclLog& log) {
  if (bench.cluster.servers <= 1) return tuner_choices(bench, log);
  std::vector<RowChoice> out;
  for (const auto& row : log.rows) {
    const CollectiveRequest base{.op = log.op, .gpus = bench.gpus, .bytes = row.size_bytes};
    RowChoice best;
    double best_gap = std::numeric_limits<double>::max();
    for (Algorithm a : supported_algorithms(bench.cluster, base)) {
      if (a != Algorithm::ring && a != Algorithm::tree && a != Algorithm::nvls) continue;
      const auto choice = choose_with_estimate(bench.router, row_request(bench, log, row.size_bytes, a));
      const double gap = std::abs(std::log(row.time_us / (static_cast<double>(choice.time.ps) * 1e-6)));
      if (gap < best_gap) best = {a, choice.protocol}, best_gap = gap;
    }
    out.push_back(best);
  }
  return out;
}

// A fitted parameter: its YAML name and where it lives in CommParams (as a double view).
struct Knob {
  std::string name;
  std::function<double&(hw::CommParams&)> ref;
};

// Per row, on paper (estimate, which tracks the engine on idle machines) and with the algorithm
// and protocol picked for the uncalibrated machine, so that hundreds of evaluations stay cheap.
std::vector<double> simulate(Bench& bench, const hw::CommParams& params, const NcclLog& log,
                             const std::vector<RowChoice>& choices) {
  bench.cluster.comm = params;
  std::vector<double> us;
  for (std::size_t i = 0; i < log.rows.size(); ++i) {
    const CollectiveRequest req{.op = log.op, .gpus = bench.gpus, .bytes = log.rows[i].size_bytes,
                                .algorithm = choices[i].algorithm, .protocol = choices[i].protocol};
    us.push_back(static_cast<double>(estimate(bench.router, req).ps) * 1e-6);
  }
  return us;
}

// The indices of the rows to fit: those of kLargeRow and more, or all if fewer than 2 are.
std::vector<std::size_t> rows_to_fit(const NcclLog& log) {
  std::vector<std::size_t> large, all;
  for (std::size_t i = 0; i < log.rows.size(); ++i) {
    all.push_back(i);
    if (log.rows[i].size_bytes >= kLargeRow) large.push_back(i);
  }
  return large.size() >= 2 ? large : all;
}

// Sum of squared log errors: smooth, so a coordinate search does not stall on the ridges a
// largest-error objective has where two rows trade off.
double squared_error(const NcclLog& log, const std::vector<double>& us) {
  double sum = 0;
  for (std::size_t i = 0; i < us.size(); ++i) sum += std::pow(std::log(log.rows[i].time_us / us[i]), 2);
  return sum;
}

std::vector<Knob> efficiency_knobs() {
  return {{"nvlink_efficiency", [](hw::CommParams& p) -> double& { return p.nvlink_efficiency; }},
          {"pcie_efficiency", [](hw::CommParams& p) -> double& { return p.pcie_efficiency; }},
          {"network_efficiency", [](hw::CommParams& p) -> double& { return p.network_efficiency; }},
          {"nvls_efficiency", [](hw::CommParams& p) -> double& { return p.nvls_efficiency; }}};
}

// The efficiency that matters for the largest size: the one whose 10 % change moves it most.
Knob bandwidth_knob(Bench& bench, const hw::CommParams& stock, const NcclLog& log,
                    const std::vector<RowChoice>& choices) {
  const auto knobs = efficiency_knobs();
  NcclLog largest = log;
  largest.rows = {log.rows.back()};
  const std::vector<RowChoice> last{choices.back()};
  const double base = simulate(bench, stock, largest, last).front();
  std::size_t best = 0;
  double best_change = -1;
  for (std::size_t k = 0; k < knobs.size(); ++k) {
    hw::CommParams p = stock;
    knobs[k].ref(p) *= 0.9;
    const double change = std::abs(simulate(bench, p, largest, last).front() - base);
    if (change > best_change) best = k, best_change = change;
  }
  return knobs[best];
}

// Across servers a log can mix algorithms bound by different links (OCI OKE: rings bound by the
// NICs up to 512 MiB, trees bound by NVLink above), so there the fit also frees the other of the
// two: NVLink if the largest row is network-bound, the network if it is NVLink-bound.
std::vector<Knob> fitted_knobs(Bench& bench, const hw::CommParams& stock, const NcclLog& log,
                               const std::vector<RowChoice>& choices) {
  std::vector<Knob> out{bandwidth_knob(bench, stock, log, choices)};
  if (bench.cluster.servers <= 1) return out;
  const std::string& first = out.front().name;
  const std::string other = first == "nvlink_efficiency"    ? "network_efficiency"
                            : first == "network_efficiency" ? "nvlink_efficiency"
                                                            : "";
  for (auto& k : efficiency_knobs())
    if (k.name == other) out.push_back(std::move(k));
  return out;
}

}  // namespace

CalibrationResult calibrate(const hw::Cluster& cluster, const NcclLog& log) {
  CalibrationResult result{.before = cluster.comm, .after = cluster.comm};
  Bench bench(cluster);
  result.before_us = simulate(bench, cluster.comm, log, tuner_choices(bench, log));
  const auto choices = closest_algorithms(bench, log);
  const bool multi = cluster.servers > 1;
  const auto knobs = fitted_knobs(bench, cluster.comm, log, choices);
  // x = {efficiencies..., launch latency (us), step latency (us)}: doubles for the search, written
  // back to CommParams (latencies in integer ps) by apply().
  const std::size_t n_eff = knobs.size();
  auto apply = [&](const std::vector<double>& x) {
    hw::CommParams p = cluster.comm;
    for (std::size_t k = 0; k < n_eff; ++k) knobs[k].ref(p) = x[k];
    p.launch_latency_ps = static_cast<std::int64_t>(x[n_eff] * 1e6);
    (multi ? p.network_step_latency_ps : p.ring_step_latency_ps) = static_cast<std::int64_t>(x[n_eff + 1] * 1e6);
    // LL's and LL128's latencies move by two common factors, keeping NCCL's ratios between them.
    for (hw::ProtocolCost* c : {&p.ll, &p.ll128}) {
      c->launch_latency_ps = static_cast<std::int64_t>(static_cast<double>(c->launch_latency_ps) * x[n_eff + 2]);
      auto& c_step = multi ? c->network_step_latency_ps : c->ring_step_latency_ps;
      c_step = static_cast<std::int64_t>(static_cast<double>(c_step) * x[n_eff + 3]);
    }
    return p;
  };
  hw::CommParams start = cluster.comm;
  std::vector<double> x;
  for (const auto& k : knobs) x.push_back(k.ref(start));
  x.push_back(static_cast<double>(cluster.comm.launch_latency_ps) * 1e-6);
  x.push_back(static_cast<double>(multi ? cluster.comm.network_step_latency_ps : cluster.comm.ring_step_latency_ps) * 1e-6);
  x.insert(x.end(), {1.0, 1.0});  // the low-latency protocols' latency factors
  // Pattern search in log space on the rows `rows`: try ×/÷ e^step on x[first_free, end_free),
  // keep improvements, halve.
  auto search = [&](const std::vector<std::size_t>& rows, std::size_t first_free, std::size_t end_free) {
    NcclLog fit = log;
    fit.rows.clear();
    std::vector<RowChoice> fit_choices;
    for (std::size_t i : rows) {
      fit.rows.push_back(log.rows[i]);
      fit_choices.push_back(choices[i]);
    }
    auto cost = [&](const std::vector<double>& v) { return squared_error(fit, simulate(bench, apply(v), fit, fit_choices)); };
    double best = cost(x);
    for (double step = std::log(4.0); step > 0.004; step /= 2) {
      for (bool improved = true; improved;) {
        improved = false;
        for (std::size_t k = first_free; k < end_free; ++k)
          for (double sign : {1.0, -1.0}) {
            auto trial = x;
            trial[k] = std::max(trial[k], 1e-3) * std::exp(sign * step);
            if (k < n_eff) trial[k] = std::min(trial[k], 1.0);  // an efficiency
            if (const double c = cost(trial); c < best - 1e-12) best = c, x = trial, improved = true;
          }
      }
    }
  };
  // Simple's bandwidth and latency on the large rows (rows_to_fit, timed under Simple), then the
  // low-latency protocols' latency factors on the rows timed under LL or LL128 (the only ones
  // they move), the small ones, which see the latencies that the large ones barely can.
  search(rows_to_fit(log), 0, n_eff + 2);
  std::vector<std::size_t> low_latency;
  for (std::size_t i = 0; i < log.rows.size(); ++i)
    if (choices[i].protocol != hw::Protocol::simple) low_latency.push_back(i);
  if (!low_latency.empty()) search(low_latency, n_eff + 2, x.size());
  result.after = apply(x);
  for (const auto& k : knobs) result.fitted.push_back(k.name);
  result.fitted.insert(result.fitted.end(), {"launch_latency", multi ? "network_step_latency" : "ring_step_latency",
                                             multi ? "ll/ll128 launch and network step latencies" : "ll/ll128 launch and ring step latencies"});
  result.after_us = simulate(bench, result.after, log, choices);
  return result;
}

}  // namespace stepsim::comm
