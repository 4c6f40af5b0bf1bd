// estimate() and the tuner: each candidate timed on paper (paper.hpp), the fastest chosen.
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "sim/comm/algorithm.hpp"
#include "sim/comm/collective.hpp"
#include "sim/comm/folded_ring.hpp"
#include "sim/comm/paper.hpp"
#include "sim/comm/plan_input.hpp"

namespace stepsim::comm {
namespace {

// NCCL enables LL128 by default only where consecutive GPUs of its rings and chains inside a
// server talk over NVLink (tuning.cc: typeIntra <= PATH_NVB), as on NVSwitch and NVLink-bridged
// boxes. The group's rank order is the ring order inside each server.
bool nvlink_inside_servers(const hw::Router& router, const std::vector<int>& gpus) {
  const hw::Cluster& cluster = router.cluster();
  for (std::size_t a = 0; a < gpus.size(); ++a) {
    const int from = gpus[a], to = gpus[(a + 1) % gpus.size()];
    if (from == to || cluster.server_of(from) != cluster.server_of(to)) continue;
    for (const auto& route : router.routes(from, to))
      for (int l : route)
        if (cluster.links[static_cast<std::size_t>(l)].kind != hw::LinkKind::nvlink) return false;
  }
  return true;
}

// The most a GPU of the group can send at once: the sum of its outgoing links' rates, for the
// fastest GPU (the group's own links, not a pass over a large cluster's).
double fastest_sender_bytes_per_s(const hw::Router& router, const std::vector<int>& gpus) {
  const hw::Cluster& cluster = router.cluster();
  double fastest = 0;
  for (int g : gpus) {
    double sends = 0;
    for (int l : router.links_from(g)) sends += effective_bytes_per_s(cluster.links[static_cast<std::size_t>(l)], cluster.comm);
    fastest = std::max(fastest, sends);
  }
  return fastest;
}

// A floor under estimate() of `req` under a protocol of `cost`, from bandwidth alone: some rank
// must send at least the bus factor times S (the average over ranks: an all-reduce moves
// 2(n−1)·S, an all-gather or reduce-scatter (n−1)·S in all; a broadcast's root sends S), as
// 1/share wire bytes, at most at `fastest` (fastest_sender_bytes_per_s). The tuner skips a
// protocol whose floor is already slower than its best so far: LL at large sizes.
double bandwidth_floor_s(const CollectiveRequest& req, const hw::ProtocolCost& cost, double fastest) {
  if (req.gpus.size() < 2 || req.bytes <= 0 || fastest <= 0) return 0;
  const double wire = bus_factor(req.op, static_cast<int>(req.gpus.size())) * static_cast<double>(req.bytes) / cost.bandwidth_share;
  return static_cast<double>(cost.launch_latency_ps) * 1e-12 + wire / fastest;
}

}  // namespace

PlanInput plan_input(const hw::Cluster& cluster, const CollectiveRequest& req) {
  const hw::Protocol protocol = req.protocol.value_or(hw::Protocol::simple);
  const hw::ProtocolCost cost = cluster.comm.cost(protocol);
  PlanInput in{.op = req.op, .ranks = static_cast<int>(req.gpus.size()), .bytes = req.bytes, .root = req.root,
               .coarse = req.coarse, .params = cluster.comm, .protocol = protocol, .bandwidth_share = cost.bandwidth_share};
  in.params.launch_latency_ps = cost.launch_latency_ps;
  in.params.ring_step_latency_ps = cost.ring_step_latency_ps;
  in.params.tree_step_latency_ps = cost.tree_step_latency_ps;
  in.params.network_step_latency_ps = cost.network_step_latency_ps;
  for (int g : req.gpus) in.server_of.push_back(cluster.server_of(g));
  in.mesh = cluster.gpu_mesh && std::all_of(in.server_of.begin(), in.server_of.end(),
                                            [&](int s) { return s == in.server_of.front(); });
  return in;
}

std::vector<hw::Protocol> tuner_protocols(const hw::Router& router, const CollectiveRequest& req) {
  std::vector<hw::Protocol> out;
  const PlanInput in = plan_input(router.cluster(), req);
  const auto algorithm = req.algorithm == Algorithm::automatic ? nullptr : make_algorithm(req.algorithm);
  for (hw::Protocol p : req.protocol ? std::vector<hw::Protocol>{*req.protocol} : all_protocols()) {
    if (!req.protocol && p == hw::Protocol::ll128 && !nvlink_inside_servers(router, req.gpus)) continue;
    if (!algorithm || algorithm->supports(in, p)) out.push_back(p);
  }
  return out;
}

std::vector<Algorithm> supported_algorithms(const hw::Cluster& cluster, const CollectiveRequest& req) {
  const PlanInput in = plan_input(cluster, req);
  std::vector<Algorithm> out;
  for (Algorithm a : {Algorithm::ring, Algorithm::tree, Algorithm::nvls, Algorithm::hierarchical, Algorithm::direct})
    if (make_algorithm(a)->supports(in)) out.push_back(a);
  return out;
}

AlgorithmChoice choose_with_estimate(const hw::Router& router, const CollectiveRequest& req, PlanForm form, PaperMemo* memo) {
  PaperMemo own;
  PaperMemo& kept = memo ? *memo : own;
  const auto algorithms = req.algorithm == Algorithm::automatic ? supported_algorithms(router.cluster(), req)
                                                                : std::vector<Algorithm>{req.algorithm};
  if (algorithms.empty()) throw std::invalid_argument("no algorithm runs " + to_string(req.op) + " on this group");
  const auto protocols = tuner_protocols(router, req);
  const PlanInput in = plan_input(router.cluster(), req);
  if (req.algorithm != Algorithm::automatic) make_algorithm(req.algorithm)->require(in, req.protocol);
  // The candidates in the order that breaks ties (Simple, LL128, LL; then ring, tree, ...), timed
  // those without rings first: a plan of point-to-point transfers costs little to time, and its
  // time lets a ring whose floor is slower skip its lattice, the costliest part of the tuner. A
  // candidate is skipped only when its floor is strictly slower than the best so far, so the
  // order of timing does not change the choice.
  struct Candidate {
    Algorithm algorithm;
    hw::Protocol protocol;
    std::size_t tie_rank;
  };
  std::vector<Candidate> candidates;
  for (hw::Protocol p : protocols)
    for (Algorithm a : algorithms)
      if (make_algorithm(a)->supports(in, p)) candidates.push_back({a, p, candidates.size()});
  std::stable_partition(candidates.begin(), candidates.end(),
                        [&](const Candidate& c) { return !has_folded_form(req.op, c.algorithm); });
  std::optional<AlgorithmChoice> best;
  std::size_t best_rank = 0;
  std::optional<double> fastest;
  for (const Candidate& c : candidates) {
    // The bandwidth floor holds for what the protocols after the first run (NVLS, which moves
    // less than the floor counts, runs Simple only); a picosecond of margin for the time's rounding.
    if (best && c.protocol != protocols.front()) {
      if (!fastest) fastest = fastest_sender_bytes_per_s(router, req.gpus);
      if (bandwidth_floor_s(req, router.cluster().comm.cost(c.protocol), *fastest) > best->time.seconds() + 1e-12) continue;
    }
    CollectiveRequest r = req;
    r.algorithm = c.algorithm;
    r.protocol = c.protocol;
    // Rings (and hierarchical's ring phases) are timed by their step lattice (folded_ring.hpp)
    // at either fidelity: it is step mode's own time where the paper estimate of every step is
    // not, and the same estimate at both fidelities makes both pick the same algorithm.
    r.coarse = true;
    std::optional<PlannedCollective> planned;
    if (best && has_folded_form(r.op, r.algorithm)) {
      StepPlan plan = make_algorithm(r.algorithm)->plan(plan_input(router.cluster(), r));
      if (on_paper(router, r.gpus, plan, folded_ring_latencies(router, r.gpus, plan, IdleTiming::floor), kept) > best->time) continue;
      planned = with_folded_rings(router, r, std::move(plan));
    } else {
      planned = plan_collective(router, r, PlanForm::copies);
    }
    const auto t = on_paper(router, r.gpus, planned->plan, planned->folded_latency_ps, kept);
    if (!best || t < best->time || (t == best->time && c.tie_rank < best_rank)) {
      best = AlgorithmChoice{c.algorithm, c.protocol, t, std::move(*planned)};
      best_rank = c.tie_rank;
    }
  }
  if (!best) throw std::invalid_argument("no algorithm runs " + to_string(req.op) + " with the protocols asked for");
  if (form == PlanForm::whole) best->coarse_plan = expanded(std::move(best->coarse_plan));
  return std::move(*best);
}

Algorithm choose_algorithm(const hw::Router& router, const CollectiveRequest& req) {
  return choose_with_estimate(router, req).algorithm;
}

core::Duration estimate(Network& net, const CollectiveRequest& request) {
  CollectiveKey key = key_of(request);
  if (const auto kept = net.estimated(key)) return *kept;
  const core::Duration d = estimate(net.router(), request);
  net.remember_estimate(std::move(key), d);
  return d;
}

core::Duration estimate(const hw::Router& router, const CollectiveRequest& req) {
  if (req.algorithm == Algorithm::automatic || !req.protocol) return choose_with_estimate(router, req, PlanForm::copies).time;
  PlanInput in = plan_input(router.cluster(), req);
  in.copies = true;
  const StepPlan plan = make_algorithm(req.algorithm)->plan(in);
  PaperMemo memo;
  return on_paper(router, req.gpus, plan, folded_ring_latencies(router, req.gpus, plan), memo);
}

}  // namespace stepsim::comm
