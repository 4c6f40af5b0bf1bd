// How each collective becomes engine tasks, chosen per class and fidelity:
// - flows: comm::add_collective on the shared Network, so it contends for links with everything
//   else: PP, DP and ZeRO collectives (DP and ZeRO in full fidelity), and TP collectives whose
//   traffic crosses anything but NVLink (a PCIe switch, a socket link, a NIC). On a PCIe box a TP
//   all-reduce and a DP bucket share each GPU's link to its switch, and each slows the other as
//   max-min says (tests/sim/plan/tp_contention_test.cpp).
// - timed: the members form a group and finish a fixed time after the group arrives.
//   * TP collectives that stay on NVLink (NVSwitch servers, NVLink bridges), and the fused passes
//     of large clusters (task_builder_fused.cpp): comm::estimate of the group on an idle server,
//     which matches the engine on idle symmetric topologies. TP and DP traffic do share a GPU's
//     NVLink ports; simulating that as flows moved no shipped scenario or validation row by more
//     than 0.1 % and made single-server sweeps 2-5x slower (each collective becomes a launch,
//     flows and joins), so on NVLink the idle time stands (a choice by topology, the same at every
//     size).
// - shared: DP/ZeRO (and a MoE layer's expert-parallel all-to-all, ring attention's K/V exchange) in symmetric fidelity. The time of the bucket when EVERY concurrent group of
//   that stage and shape (one per TP index) runs it at once on an idle machine
//   (comm::concurrent_idle_time), so NIC sharing between groups is what the full cluster sees;
//   split into a latency part, paid alone, and a bandwidth part that is a flow on one link per
//   group, so that collectives of one group that overlap in time (ZeRO-3's all-gather of the next
//   layer beside the reduce-scatter of the last) share its bandwidth max-min, as their rings share
//   the same links in full fidelity.
// Both caches are keyed by size, so a step with 100 identical buckets simulates one; and a shared
// time solved for one pipeline stage serves every stage whose groups the router answers for
// alike, up to renaming links and servers (hw::same_up_to_renaming, checked on the very route
// questions the solve asked), so 16 stages of a regular cluster solve once.
#include <algorithm>
#include <cmath>
#include <functional>

#include "hardware/route_equivalence.hpp"
#include "sim/comm/concurrent.hpp"
#include "sim/plan/task_graph.hpp"

namespace stepsim::plan {
namespace {
// A shared link's capacity: one byte per picosecond, so a flow's bytes are its alone-time in ps.
constexpr double kSharedLinkBytesPerS = 1e12;

// Records into `log` the pairs the router is asked for while alive, then hands the pairs on to
// the log it found (nested recordings: an outer solve sees what an inner one asked).
class Recording {
 public:
  Recording(const hw::Router& router, std::vector<std::pair<int, int>>& log)
      : router_(router), log_(log), outer_(router.recording()) {
    router_.record_pairs(&log_);
  }
  ~Recording() {
    router_.record_pairs(outer_);
    if (outer_) outer_->insert(outer_->end(), log_.begin(), log_.end());
  }
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

 private:
  const hw::Router& router_;
  std::vector<std::pair<int, int>>& log_;
  std::vector<std::pair<int, int>>* outer_;
};

}  // namespace

std::vector<core::TaskId> Collectives::add(CommClass cls, comm::Op op, const std::vector<int>& group,
                                           std::int64_t bytes, const std::vector<core::StreamId>& streams, int stage) {
  if (const auto& bw = b_.in.opt.hooks.comm_bytes_per_s) {
    const bool free = std::isinf(*bw) || bytes == 0;
    return timed(streams, free ? core::Duration{} : core::transfer_time(bytes, *bw));
  }
  if ((cls == CommClass::dp || cls == CommClass::zero || cls == CommClass::ep || cls == CommClass::cp) &&
      streams.size() < group.size())
    return shared(streams, group, concurrent_dp_time(op, bytes, stage, group));
  if (cls == CommClass::tp && !leaves_nvlink(group)) return timed(streams, isolated_time(op, group, bytes));
  comm::CollectiveRequest request;
  request.op = op;
  request.gpus = group;
  request.bytes = bytes;
  request.coarse = comm::use_coarse_mode(group.size(), b_.in.large_cluster);
  return add_flows(request, streams);
}

// The tuner reads the machine only through the routes it asks for, so a group whose routes are
// another's up to renaming (hw::same_up_to_renaming, checked on the very pairs that choice asked)
// gets that choice of algorithm and protocol without tuning again: pipeline sends between alike
// stage pairs, and the DP buckets of alike TP indices, are tuned once. Not under link faults,
// which the routes do not show.
std::vector<core::TaskId> Collectives::add_flows(const comm::CollectiveRequest& request,
                                                 const std::vector<core::StreamId>& streams) {
  comm::Network& net = *b_.network;
  const bool tuned_here = request.algorithm == comm::Algorithm::automatic && !request.protocol;
  if (last_laid_out_ != nullptr && request == last_request_) return comm::emit_collective(net, *last_laid_out_, streams).members;
  if (const comm::PlannedCollective* kept = net.planned(comm::key_of(request))) {
    comm::LaidOutCollective& laid_out = laid_out_[kept];
    if (laid_out.planned == nullptr) laid_out = comm::lay_out(net, request, *kept);
    last_request_ = request;
    last_laid_out_ = &laid_out;
    return comm::emit_collective(net, laid_out, streams).members;
  }
  if (!tuned_here || !b_.in.sc.faults.links.empty()) return comm::add_collective(net, request, streams).members;
  auto& solved = tuned_choices_[{static_cast<int>(request.op), request.bytes, request.gpus.size(), request.coarse}];
  // The latest few only: on a fabric with no alike groups each check would fail, and tuning is
  // then what it was.
  constexpr std::size_t kChecked = 8;
  for (std::size_t i = solved.size() > kChecked ? solved.size() - kChecked : 0; i < solved.size(); ++i) {
    const TunedChoice& c = solved[i];
    if (!hw::same_up_to_renaming(b_.router, c.asked, c.gpus, request.gpus)) continue;
    comm::CollectiveRequest fixed = request;
    fixed.algorithm = c.algorithm;
    fixed.protocol = c.protocol;
    auto members = comm::add_collective(net, fixed, streams).members;
    // Kept under the request as asked too, so its next call finds it without the check.
    net.remember(comm::key_of(request), *net.planned(comm::key_of(fixed)));
    return members;
  }
  std::vector<std::pair<int, int>> asked;
  comm::CollectiveTasks tasks;
  {
    const Recording recording(b_.router, asked);
    tasks = comm::add_collective(net, request, streams);
  }
  std::sort(asked.begin(), asked.end());
  asked.erase(std::unique(asked.begin(), asked.end()), asked.end());
  solved.push_back({request.gpus, std::move(asked), tasks.chosen, tasks.protocol});
  return tasks.members;
}

std::vector<core::TaskId> Collectives::timed(const std::vector<core::StreamId>& streams, core::Duration d) {
  std::vector<core::TaskId> holds;
  for (auto s : streams) holds.push_back(b_.rec.engine().add_hold(s));
  const core::TaskId done = b_.rec.engine().arrival_marker(b_.rec.engine().add_group(holds, d));
  for (auto h : holds) b_.rec.engine().hold_until(h, done);
  return holds;
}

std::vector<core::TaskId> Collectives::shared(const std::vector<core::StreamId>& streams, const std::vector<int>& group,
                                              SplitTime t) {
  core::Engine& engine = b_.rec.engine();
  auto [link, inserted] = shared_links_.try_emplace(group);
  if (inserted) link->second = engine.add_link(kSharedLinkBytesPerS);
  std::vector<core::TaskId> holds;
  for (auto s : streams) holds.push_back(engine.add_hold(s));
  const core::TaskId arrival = engine.arrival_marker(engine.add_group(holds));
  const core::TaskId done = engine.add_transfer({link->second}, t.bandwidth.ps, t.latency);
  engine.add_dependency(arrival, done);
  for (auto h : holds) engine.hold_until(h, done);
  return holds;
}

// Once per TP group (named by its first rank), not per collective: the routes do not change.
bool Collectives::leaves_nvlink(const std::vector<int>& group) {
  if (leaves_nvlink_.empty()) leaves_nvlink_.assign(static_cast<std::size_t>(b_.in.grid.size()), -1);
  std::int8_t& known = leaves_nvlink_[static_cast<std::size_t>(group.front())];
  if (known >= 0) return known == 1;
  bool leaves = false;
  const auto& links = b_.in.sc.cluster.links;
  for (std::size_t a = 0; a < group.size() && !leaves; ++a)
    for (std::size_t c = 0; c < group.size() && !leaves; ++c)
      if (a != c)
        for (const auto& route : b_.router.routes(group[a], group[c]))
          for (int link : route) leaves = leaves || links[static_cast<std::size_t>(link)].kind != hw::LinkKind::nvlink;
  known = leaves ? 1 : 0;
  return leaves;
}

core::Duration Collectives::tp_time(comm::Op op, const std::vector<int>& group, std::int64_t bytes) {
  if (const auto& bw = b_.in.opt.hooks.comm_bytes_per_s)
    return (std::isinf(*bw) || bytes == 0) ? core::Duration{} : core::transfer_time(bytes, *bw);
  return isolated_time(op, group, bytes);
}

core::Duration Collectives::isolated_time(comm::Op op, const std::vector<int>& group, std::int64_t bytes) {
  // Servers of one preset are alike: key by the local positions of the group's GPUs.
  shape_.clear();
  for (int g : group) shape_.push_back(b_.in.sc.cluster.local_index(g));
  auto& by_shape = isolated_cache_[{static_cast<int>(op), bytes}];
  if (auto it = by_shape.find(shape_); it != by_shape.end()) return it->second;
  comm::CollectiveRequest request;
  request.op = op;
  request.gpus = group;
  request.bytes = bytes;
  const core::Duration d = b_.in.sc.faults.links.empty() ? comm::estimate(*b_.network, request)
                                                      : concurrent_time(requests_for({group}, op, bytes));
  // With link faults the estimate would not see the degraded link; a scratch engine does.
  if (b_.in.sc.faults.links.empty()) by_shape.emplace(shape_, d);
  return d;
}

Collectives::SplitTime Collectives::concurrent_dp_time(comm::Op op, std::int64_t bytes, int stage,
                                                      const std::vector<int>& group) {
  // The group's shape: which DP indices it spans (all of them, a shard group, its replicas), and
  // which TP indices where it spans several (an EP group folded over TP × DP).
  std::vector<int> dp_indices, tp_indices;
  for (int g : group) {
    dp_indices.push_back(b_.in.grid.coord(g).dp);
    tp_indices.push_back(b_.in.grid.coord(g).tp);
  }
  const bool spans_tp = std::adjacent_find(tp_indices.begin(), tp_indices.end(), std::not_equal_to<>()) != tp_indices.end();
  if (!spans_tp) tp_indices.clear();
  const auto key = std::make_tuple(static_cast<int>(op), bytes, stage, dp_indices, tp_indices);
  if (auto it = concurrent_cache_.find(key); it != concurrent_cache_.end()) return it->second;
  std::vector<std::vector<int>> groups;
  const int pp = b_.in.grid.coord(group.front()).pp;
  // One group of the same DP indices per TP index; a folded EP group is timed alone, as the
  // other EP blocks of a DP-only EP are left out (their traffic shares servers only partly).
  for (int t = 0; t < b_.in.grid.tp() && !spans_tp; ++t) {
    std::vector<int>& same_shape = groups.emplace_back();
    for (int d : dp_indices) same_shape.push_back(b_.in.grid.rank({t, d, pp}));
  }
  if (spans_tp) groups.push_back(group);
  std::vector<int> gpus;
  for (const auto& g : groups) gpus.insert(gpus.end(), g.begin(), g.end());
  // Link faults degrade links by name, which a renaming does not see: every stage solves then.
  const bool reusable = b_.in.sc.faults.links.empty();
  auto& solved = solved_groups_[std::make_tuple(static_cast<int>(op), bytes, dp_indices, tp_indices)];
  for (const SolvedGroups& s : solved)
    if (reusable && hw::same_up_to_renaming(b_.router, s.pairs, s.gpus, gpus)) return concurrent_cache_[key] = s.time;
  std::vector<std::pair<int, int>> asked;
  core::Duration whole, half;
  {
    const Recording recording(b_.router, asked);
    // Hockney's α–β model, T(n) = α + β·n, from two sizes: α = 2·T(n/2) − T(n), both under the
    // algorithm and protocol the tuner picks at n (the line of one algorithm; tuned again at n/2
    // it could be a chord between two lines). α is kept within [0, T(n)].
    std::vector<comm::CollectiveRequest> requests = requests_for(groups, op, bytes);
    const auto tuned = choose_for_all(requests);
    whole = concurrent_time(requests, tuned);
    for (comm::CollectiveRequest& r : requests) r.bytes = bytes / 2;
    // At n/2 the groups the tuner found alike share the first's plan, as at n: planned once. Alike
    // was checked on the pairs the tuner asked at n, which include every pair the chosen
    // algorithm's plan asks at any size (the plan's shape does not depend on the bytes).
    std::vector<std::shared_ptr<const comm::PlannedCollective>> halved(requests.size());
    if (bytes >= 2 && requests.front().coarse) {
      const auto first = std::make_shared<const comm::PlannedCollective>(comm::plan_collective(b_.router, requests.front()));
      for (std::size_t k = 0; k < requests.size(); ++k)
        if (tuned[k] == tuned.front()) halved[k] = first;
    }
    half = bytes >= 2 ? concurrent_time(requests, halved) : whole;
  }
  const core::Duration latency{std::clamp<std::int64_t>(2 * half.ps - whole.ps, 0, whole.ps)};
  const SplitTime t{latency, core::Duration{whole.ps - latency.ps}};
  concurrent_cache_[key] = t;
  std::sort(asked.begin(), asked.end());
  asked.erase(std::unique(asked.begin(), asked.end()), asked.end());
  if (reusable) solved.push_back({std::move(gpus), std::move(asked), t});
  return t;
}

std::vector<std::shared_ptr<const comm::PlannedCollective>> Collectives::choose_for_all(
    std::vector<comm::CollectiveRequest>& requests) {
  std::vector<std::shared_ptr<const comm::PlannedCollective>> tuned;
  std::vector<std::pair<int, int>> first_asked;  // what the first request's choice asked the router
  for (std::size_t k = 0; k < requests.size(); ++k) {
    comm::CollectiveRequest& r = requests[k];
    if (k > 0 && b_.in.sc.faults.links.empty() &&
        hw::same_up_to_renaming(b_.router, first_asked, requests.front().gpus, r.gpus)) {
      r.algorithm = requests.front().algorithm;
      r.protocol = requests.front().protocol;
      tuned.push_back(tuned.front());
      continue;
    }
    std::vector<std::pair<int, int>> asked;
    const Recording recording(b_.router, asked);
    comm::AlgorithmChoice choice = comm::choose_with_estimate(b_.router, r);
    r.algorithm = choice.algorithm;
    r.protocol = choice.protocol;
    tuned.push_back(std::make_shared<const comm::PlannedCollective>(std::move(choice.coarse_plan)));
    if (k == 0) first_asked = asked;
  }
  return tuned;
}

std::vector<comm::CollectiveRequest> Collectives::requests_for(const std::vector<std::vector<int>>& groups, comm::Op op,
                                                             std::int64_t bytes) const {
  std::vector<comm::CollectiveRequest> requests;
  for (const auto& g : groups)
    requests.push_back({.op = op, .gpus = g, .bytes = bytes, .coarse = comm::use_coarse_mode(g.size(), b_.in.large_cluster)});
  return requests;
}

// All `requests` run at once on an otherwise idle copy of the machine.
core::Duration Collectives::concurrent_time(const std::vector<comm::CollectiveRequest>& requests,
                                           const std::vector<std::shared_ptr<const comm::PlannedCollective>>& tuned) {
  std::vector<comm::LinkScale> degraded;
  for (const auto& fault : b_.in.sc.faults.links)
    for (int link : fault.links) degraded.push_back({link, fault.bandwidth_factor});
  std::vector<const comm::PlannedCollective*> plans;
  for (const auto& p : tuned) plans.push_back(p.get());
  return comm::concurrent_idle_time(b_.router, requests, degraded, plans);
}

}  // namespace stepsim::plan
