// estimate() and the tuner: the plan timed on paper (collective.hpp says what it assumes).
#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "sim/comm/algorithm.hpp"
#include "sim/comm/collective.hpp"
#include "sim/comm/folded_ring.hpp"
#include "sim/comm/plan_input.hpp"

namespace stepsim::comm {
namespace {

struct Paper {
  std::vector<const std::vector<hw::Route>*> routes;  // per transfer, into the stores below
  std::vector<int> level;                             // dependency depth
  std::unordered_map<std::int64_t, std::vector<hw::Route>> point_to_point;  // node-based: stable
  std::deque<std::vector<hw::Route>> others;                                // joins, folded rings
};

// Paper is filled in place (it holds pointers into itself).
void lay_out(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan, Paper& p) {
  // A pipelined plan repeats the same (src, dst, hop) once per slice: route each pair once.
  const auto ranks = static_cast<std::int64_t>(gpus.size());
  p.routes.reserve(plan.transfers.size());
  p.level.reserve(plan.transfers.size());
  for (const auto& t : plan.transfers) {
    int level = 0;
    for (int a : t.after) level = std::max(level, p.level[static_cast<std::size_t>(a)] + (t.is_join ? 0 : 1));
    p.level.push_back(level);
    if (t.is_join || !t.ring.empty()) {
      p.others.push_back(planned_routes(router, gpus, t));
      p.routes.push_back(&p.others.back());
      continue;
    }
    const std::int64_t key = (static_cast<std::int64_t>(t.hop) * ranks + t.src) * ranks + t.dst;
    auto it = p.point_to_point.find(key);
    if (it == p.point_to_point.end()) it = p.point_to_point.emplace(key, planned_routes(router, gpus, t)).first;
    p.routes.push_back(&it->second);
  }
}

double wire_bytes(const PlannedTransfer& t) { return static_cast<double>(t.bytes) * t.wire_factor; }

// `folded`: the plan's folded_ring_latencies().
core::Duration on_paper(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan,
                        const std::vector<std::optional<std::int64_t>>& folded) {
  const hw::Cluster& cluster = router.cluster();
  Paper p;
  lay_out(router, gpus, plan, p);
  // The links the plan uses, numbered densely: a collective of a few ranks touches a few dozen
  // of a large cluster's links, and its tables need only those.
  std::vector<int> dense(cluster.links.size(), -1);
  std::vector<int> used;
  for (const auto* routes : p.routes)
    for (const auto& r : *routes)
      for (int l : r)
        if (dense[static_cast<std::size_t>(l)] < 0) {
          dense[static_cast<std::size_t>(l)] = static_cast<int>(used.size());
          used.push_back(l);
        }
  std::vector<double> rate(used.size());
  for (std::size_t u = 0; u < used.size(); ++u)
    rate[u] = effective_bytes_per_s(cluster.links[static_cast<std::size_t>(used[u])], cluster.comm);
  // (level, link) -> bytes that level puts on the link; total bytes per link. Flat when the
  // table is small enough (tens of MB), else hashed.
  const auto links = static_cast<std::int64_t>(used.size());
  const std::int64_t levels = p.level.empty() ? 1 : *std::max_element(p.level.begin(), p.level.end()) + 1;
  const bool flat = levels * links <= (std::int64_t{1} << 22);
  std::vector<double> flat_load(flat ? static_cast<std::size_t>(levels * links) : 0, 0.0);
  std::unordered_map<std::int64_t, double> hashed_load;
  auto load = [&](int level, int link) -> double& {
    const std::int64_t k = level * links + dense[static_cast<std::size_t>(link)];
    return flat ? flat_load[static_cast<std::size_t>(k)] : hashed_load[k];
  };
  std::vector<double> total(used.size(), 0.0);
  for (std::size_t i = 0; i < plan.transfers.size(); ++i)
    for (const auto& r : *p.routes[i])
      for (int l : r) {
        const double bytes = wire_bytes(plan.transfers[i]) / static_cast<double>(p.routes[i]->size());
        load(p.level[i], l) += bytes;
        total[static_cast<std::size_t>(dense[static_cast<std::size_t>(l)])] += bytes;
      }
  std::vector<double> finish(plan.transfers.size(), 0.0);  // seconds after launch
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    double start = 0;
    for (int a : t.after) start = std::max(start, finish[static_cast<std::size_t>(a)]);
    double busy = 0;
    for (const auto& r : *p.routes[i]) {
      double drain = 0;
      for (int l : r) drain = std::max(drain, load(p.level[i], l) / rate[static_cast<std::size_t>(dense[static_cast<std::size_t>(l)])]);
      const auto latency_ps = folded[i] ? *folded[i] : transfer_latency_ps(cluster, r, t);
      busy = std::max(busy, static_cast<double>(latency_ps) * 1e-12 + drain);
    }
    finish[i] = start + busy;
  }
  // No link can carry its bytes faster than its capacity, whatever the dependency levels say.
  double end = 0;
  for (std::size_t u = 0; u < total.size(); ++u)
    if (total[u] > 0) end = std::max(end, total[u] / rate[u]);
  for (const auto& done : plan.rank_done)
    for (int t : done) end = std::max(end, finish[static_cast<std::size_t>(t)]);
  return core::picoseconds(plan.launch_latency_ps) + core::seconds(end);
}

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

AlgorithmChoice choose_with_estimate(const hw::Router& router, const CollectiveRequest& req) {
  const auto algorithms = req.algorithm == Algorithm::automatic ? supported_algorithms(router.cluster(), req)
                                                                : std::vector<Algorithm>{req.algorithm};
  if (algorithms.empty()) throw std::invalid_argument("no algorithm runs " + to_string(req.op) + " on this group");
  const auto protocols = tuner_protocols(router, req);
  const PlanInput in = plan_input(router.cluster(), req);
  if (req.algorithm != Algorithm::automatic) make_algorithm(req.algorithm)->require(in, req.protocol);
  std::optional<AlgorithmChoice> best;
  std::optional<double> fastest;
  // Protocol by protocol (Simple first), so that the floor of the slower ones meets a best time.
  for (hw::Protocol p : protocols) {
    if (best) {
      if (!fastest) fastest = fastest_sender_bytes_per_s(router, req.gpus);
      if (bandwidth_floor_s(req, router.cluster().comm.cost(p), *fastest) > best->time.seconds()) continue;
    }
    for (Algorithm a : algorithms) {
      if (!make_algorithm(a)->supports(in, p)) continue;
      CollectiveRequest r = req;
      r.algorithm = a;
      r.protocol = p;
      // Rings (and hierarchical's ring phases) are timed by their step lattice (folded_ring.hpp)
      // at either fidelity: it is step mode's own time where the paper estimate of every step is
      // not, and the same estimate at both fidelities makes both pick the same algorithm.
      r.coarse = true;
      PlannedCollective planned = plan_collective(router, r);
      if (const auto t = on_paper(router, r.gpus, planned.plan, planned.folded_latency_ps); !best || t < best->time)
        best = AlgorithmChoice{a, p, t, std::move(planned)};
    }
  }
  if (!best) throw std::invalid_argument("no algorithm runs " + to_string(req.op) + " with the protocols asked for");
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
  if (req.algorithm == Algorithm::automatic || !req.protocol) return choose_with_estimate(router, req).time;
  const StepPlan plan = make_algorithm(req.algorithm)->plan(plan_input(router.cluster(), req));
  return on_paper(router, req.gpus, plan, folded_ring_latencies(router, req.gpus, plan));
}

core::Duration estimate_plan(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan) {
  return on_paper(router, gpus, plan, std::vector<std::optional<std::int64_t>>(plan.transfers.size()));
}

}  // namespace stepsim::comm
