#include "sim/comm/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "hardware/router.hpp"
#include "sim/comm/calibration_fit.hpp"
#include "sim/comm/collective.hpp"

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

// How far a row's two measurements lie apart in log time (nccl-tests times every size out of
// place and in place): closer than that, a model cannot tell better from worse.
double repeat_spread(const NcclLogRow& row) {
  return row.in_place_time_us && *row.in_place_time_us > 0 ? std::abs(std::log(row.time_us / *row.in_place_time_us)) : 0.0;
}

std::vector<Algorithm> tuner_algorithms(const Bench& bench, const NcclLog& log) {
  std::vector<Algorithm> out;
  for (const auto& row : log.rows)
    out.push_back(choose_algorithm(bench.router, {.op = log.op, .gpus = bench.gpus, .bytes = row.size_bytes}));
  return out;
}

// The algorithms NCCL has (ring, tree, NVLS) that run `op` on the machine: hierarchical and direct
// are this simulator's own compositions, which a log of NCCL never ran.
std::vector<Algorithm> nccl_algorithms(const Bench& bench, Op op) {
  std::vector<Algorithm> out;
  for (Algorithm a : supported_algorithms(bench.cluster, {.op = op, .gpus = bench.gpus}))
    if (a == Algorithm::ring || a == Algorithm::tree || a == Algorithm::nvls) out.push_back(a);
  return out;
}

// Which algorithm ran each row. nccl-tests does not log NCCL's choice, and NCCL's tuner has its
// own model (src/graph/tuning.cc: per-algorithm bandwidth caps and treeCorrectionFactor, which
// derates trees at medium sizes), so on 2 DGX A100 it keeps the ring up to 512 MiB where our
// estimate() would already take the tree; the OCI OKE log's jump from 156 to 219 GB/s busbw
// between 512 MiB and 1 GiB is that switch. The row itself says it better: per row, the supported
// algorithm whose time with the machine's parameters (under the protocol our tuner gives it) is
// closest in log time to the logged one, as the fit's objective has it (calibration_fit.hpp).
// Only across servers: inside one server our tuner and NCCL's agree (ring, or NVLS), and a
// chain-shaped tree is never the best match for a log written by a ring.
std::vector<Algorithm> closest_algorithms(const Bench& bench, const NcclLog& log) {
  if (bench.cluster.servers <= 1) return tuner_algorithms(bench, log);
  std::vector<Algorithm> out;
  for (const auto& row : log.rows) {
    Algorithm best = Algorithm::ring;
    double best_gap = std::numeric_limits<double>::max();
    for (Algorithm a : nccl_algorithms(bench, log.op)) {
      const CollectiveRequest req{.op = log.op, .gpus = bench.gpus, .bytes = row.size_bytes, .algorithm = a};
      const auto choice = choose_with_estimate(bench.router, req, PlanForm::copies);
      const double gap = std::abs(std::log(row.time_us / (static_cast<double>(choice.time.ps) * 1e-6)));
      if (gap < best_gap) best = a, best_gap = gap;
    }
    out.push_back(best);
  }
  return out;
}

double estimate_us(const Bench& bench, const CollectiveRequest& req) {
  return static_cast<double>(estimate(bench.router, req).ps) * 1e-6;
}

// A fitted parameter: its YAML name, where it lives in CommParams (latencies as microseconds),
// whether times are linear in its reciprocal (a rate), its bounds, and the protocol it belongs to
// (none: every protocol's bandwidth, an efficiency).
struct Knob {
  std::string name;
  std::function<double(const hw::CommParams&)> get;
  std::function<void(hw::CommParams&, double)> set;
  bool rate = false;
  double lower = 0;
  double upper = 1;
  std::optional<hw::Protocol> protocol{};
};

Knob efficiency_knob(std::string name, double hw::CommParams::*field) {
  return {std::move(name), [field](const hw::CommParams& p) { return p.*field; },
          [field](hw::CommParams& p, double v) { p.*field = v; }, true, 0.01, 1.0, std::nullopt};
}

std::vector<Knob> efficiency_knobs() {
  return {efficiency_knob("nvlink_efficiency", &hw::CommParams::nvlink_efficiency),
          efficiency_knob("pcie_efficiency", &hw::CommParams::pcie_efficiency),
          efficiency_knob("network_efficiency", &hw::CommParams::network_efficiency),
          efficiency_knob("nvls_efficiency", &hw::CommParams::nvls_efficiency)};
}

// The efficiency that matters for the largest size: the one whose 10 % change moves it most,
// under Simple, whose bandwidth the efficiencies are.
Knob bandwidth_knob(Bench& bench, const NcclLog& log, Algorithm algorithm) {
  const CollectiveRequest largest{.op = log.op, .gpus = bench.gpus, .bytes = log.rows.back().size_bytes,
                                  .algorithm = algorithm, .protocol = hw::Protocol::simple, .coarse = true};
  const hw::CommParams stock = bench.cluster.comm;
  const double base = estimate_us(bench, largest);
  auto knobs = efficiency_knobs();
  std::size_t best = 0;
  double best_change = -1;
  for (std::size_t k = 0; k < knobs.size(); ++k) {
    knobs[k].set(bench.cluster.comm, 0.9 * knobs[k].get(stock));
    const double change = std::abs(estimate_us(bench, largest) - base);
    bench.cluster.comm = stock;
    if (change > best_change) best = k, best_change = change;
  }
  return knobs[best];
}

// Across servers a log can mix algorithms bound by different links (OCI OKE: rings bound by the
// NICs up to 512 MiB, trees bound by NVLink above), so there the fit also frees the other of the
// two: NVLink if the largest row is network-bound, the network if it is NVLink-bound.
std::vector<Knob> bandwidth_knobs(Bench& bench, const NcclLog& log, Algorithm largest_row_algorithm) {
  std::vector<Knob> out{bandwidth_knob(bench, log, largest_row_algorithm)};
  if (bench.cluster.servers <= 1) return out;
  const std::string& first = out.front().name;
  const std::string other = first == "nvlink_efficiency"    ? "network_efficiency"
                            : first == "network_efficiency" ? "nvlink_efficiency"
                                                            : "";
  for (auto& k : efficiency_knobs())
    if (k.name == other) out.push_back(std::move(k));
  return out;
}

// A latency of protocol `p` in microseconds, at `field` of its cost (Simple's are CommParams'
// own fields, the low-latency protocols' in their ProtocolCost).
Knob latency_knob(hw::Protocol p, const std::string& name, std::int64_t hw::ProtocolCost::*field,
                  std::int64_t hw::CommParams::*simple_field) {
  auto where = [p, field, simple_field](hw::CommParams& c) -> std::int64_t& {
    if (p == hw::Protocol::ll) return c.ll.*field;
    if (p == hw::Protocol::ll128) return c.ll128.*field;
    return c.*simple_field;
  };
  return {name, [p, field](const hw::CommParams& c) { return static_cast<double>(c.cost(p).*field) * 1e-6; },
          [where](hw::CommParams& c, double us) { where(c) = static_cast<std::int64_t>(std::llround(us * 1e6)); },
          false, 1e-3, 1e5, p};
}

// Each protocol's launch latency and the step latency a log of this shape sees (the network step
// across servers, the ring step inside one), and the low-latency protocols' bandwidth shares:
// those set the small and medium rows, which a fit of Simple alone cannot reach (a log's busbw
// ramp is often the hand-over from LL to LL128 to Simple, as NCCL's tuner switches).
std::vector<Knob> protocol_knobs(hw::Protocol p, bool multi) {
  const std::string prefix = p == hw::Protocol::simple ? "" : p == hw::Protocol::ll ? "ll." : "ll128.";
  std::vector<Knob> out{latency_knob(p, prefix + "launch_latency", &hw::ProtocolCost::launch_latency_ps,
                                     &hw::CommParams::launch_latency_ps),
                        multi ? latency_knob(p, prefix + "network_step_latency", &hw::ProtocolCost::network_step_latency_ps,
                                             &hw::CommParams::network_step_latency_ps)
                              : latency_knob(p, prefix + "ring_step_latency", &hw::ProtocolCost::ring_step_latency_ps,
                                             &hw::CommParams::ring_step_latency_ps)};
  if (p != hw::Protocol::simple) {
    auto share = [p](hw::CommParams& c) -> double& { return p == hw::Protocol::ll ? c.ll.bandwidth_share : c.ll128.bandwidth_share; };
    out.push_back({prefix + "bandwidth_share", [p](const hw::CommParams& c) { return c.cost(p).bandwidth_share; },
                   [share](hw::CommParams& c, double v) { share(c) = v; }, true, 1e-3, 1.0, p});
  }
  return out;
}

}  // namespace

CalibrationResult calibrate(const hw::Cluster& cluster, const NcclLog& log,
                            const std::function<void(const FitProgress&)>& on_iteration) {
  CalibrationResult result{.before = cluster.comm, .after = cluster.comm};
  Bench bench(cluster);
  const bool multi = cluster.servers > 1;
  // Coarse, as the tuner plans every candidate (estimate.cpp), so that the fit's times of a row
  // are the tuner's.
  auto request = [&](std::size_t row, Algorithm algorithm) {
    return CollectiveRequest{.op = log.op, .gpus = bench.gpus, .bytes = log.rows[row].size_bytes, .algorithm = algorithm, .coarse = true};
  };
  for (std::size_t i = 0; i < log.rows.size(); ++i) result.before_us.push_back(estimate_us(bench, request(i, Algorithm::automatic)));
  // The knobs: the efficiencies that bound the largest row, then each protocol's (every protocol
  // the tuner may try on this group).
  std::vector<Knob> knobs = bandwidth_knobs(bench, log, closest_algorithms(bench, log).back());
  const std::size_t shared_knobs = knobs.size();
  for (hw::Protocol p : tuner_protocols(bench.router, request(log.rows.size() - 1, Algorithm::automatic)))
    for (auto& k : protocol_knobs(p, multi)) knobs.push_back(std::move(k));
  auto apply = [&](const std::vector<double>& x) {
    hw::CommParams p = cluster.comm;
    for (std::size_t k = 0; k < knobs.size(); ++k) knobs[k].set(p, x[k]);
    return p;
  };
  // The candidates: each row under each algorithm that may have run it (a group: the log does not
  // say which, closest_algorithms() says why) and every protocol the tuner would try for it.
  FitProblem problem;
  std::vector<CollectiveRequest> requests;  // per candidate
  const auto stock_algorithms = tuner_algorithms(bench, log);
  for (std::size_t i = 0; i < log.rows.size(); ++i) {
    problem.rows.push_back({.logged_us = log.rows[i].time_us,
                            .tolerance = log.rows[i].size_bytes >= kCalibrationLargeRow ? kLargeRowTolerance : kSmallRowTolerance,
                            .worse_from = std::abs(std::log(log.rows[i].time_us / result.before_us[i])) + repeat_spread(log.rows[i])});
    const auto algorithms = multi ? nccl_algorithms(bench, log.op) : std::vector<Algorithm>{stock_algorithms[i]};
    for (std::size_t g = 0; g < algorithms.size(); ++g) {
      CollectiveRequest req = request(i, algorithms[g]);
      for (hw::Protocol p : tuner_protocols(bench.router, req)) {
        FitCandidate candidate{.row = i, .group = g};
        for (std::size_t k = 0; k < knobs.size(); ++k)
          if (k < shared_knobs || knobs[k].protocol == p) candidate.parameters.push_back(k);
        problem.candidates.push_back(std::move(candidate));
        req.protocol = p;
        requests.push_back(req);
      }
    }
  }
  for (const auto& k : knobs) problem.parameters.push_back({k.get(cluster.comm), k.lower, k.upper, k.rate});
  problem.time_us = [&](const std::vector<double>& x, std::size_t c) {
    bench.cluster.comm = apply(x);
    return std::max(estimate_us(bench, requests[c]), 1e-6);
  };
  problem.on_iteration = on_iteration;
  result.after = apply(fit_row_times(problem).x);
  for (const auto& k : knobs) result.fitted.push_back(k.name);
  // The table's after column: each row under the algorithm that explains it with the fitted
  // parameters, the tuner choosing the protocol, as a simulation would.
  bench.cluster.comm = result.after;
  const auto algorithms = closest_algorithms(bench, log);
  for (std::size_t i = 0; i < log.rows.size(); ++i) result.after_us.push_back(estimate_us(bench, request(i, algorithms[i])));
  return result;
}

}  // namespace stepsim::comm
