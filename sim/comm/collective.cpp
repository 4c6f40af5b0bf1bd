#include "sim/comm/collective.hpp"

#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "sim/comm/algorithm.hpp"
#include "sim/comm/folded_ring.hpp"
#include "sim/comm/plan_input.hpp"

namespace stepsim::comm {
namespace {

using core::TaskId;

// One planned transfer as engine tasks: a flow per equal-cost route (bytes split evenly), joined
// by a marker when there are several. Returns the task that finishes when all of it has.
TaskId join_all(core::Engine& engine, const std::vector<TaskId>& tasks) {
  const TaskId join = engine.add_marker();
  for (TaskId t : tasks) engine.add_dependency(t, join);
  return join;
}

TaskId emit_transfer(Network& net, const CollectiveRequest& req, const PlannedTransfer& t,
                     std::optional<std::int64_t> folded_latency_ps, const std::vector<TaskId>& deps) {
  core::Engine& engine = net.engine();
  if (t.is_join) return join_all(engine, deps);
  const auto routes = planned_routes(net.router(), req.gpus, t);
  const auto wire = static_cast<std::int64_t>(static_cast<double>(t.bytes) * t.wire_factor + 0.5);
  const auto shares = split_bytes(wire, static_cast<int>(routes.size()));
  std::vector<TaskId> parts;
  for (std::size_t i = 0; i < routes.size(); ++i) {
    const auto latency = core::picoseconds(folded_latency_ps ? *folded_latency_ps : transfer_latency_ps(net.cluster(), routes[i], t));
    parts.push_back(engine.add_transfer(net.engine_route(routes[i]), shares[i], latency));
    for (TaskId d : deps) engine.add_dependency(d, parts.back());
  }
  return parts.size() == 1 ? parts.front() : join_all(engine, parts);
}

void check_streams(const CollectiveRequest& req, std::size_t streams) {
  if (streams != req.gpus.size())
    throw std::invalid_argument(std::to_string(streams) + " member streams for " + std::to_string(req.gpus.size()) + " GPUs");
}

void check_request(const hw::Cluster& cluster, const CollectiveRequest& req, std::size_t streams) {
  if (req.gpus.empty()) throw std::invalid_argument("collective over no GPUs");
  check_streams(req, streams);
  std::set<int> seen;
  for (int g : req.gpus)
    if (g < 0 || g >= cluster.gpu_count() || !seen.insert(g).second)
      throw std::invalid_argument("collective GPU " + std::to_string(g) + " is unknown or repeated");
}

}  // namespace

CollectiveKey key_of(const CollectiveRequest& req) {
  return {.op = req.op, .algorithm = req.algorithm, .protocol = req.protocol, .bytes = req.bytes, .root = req.root,
          .coarse = req.coarse, .gpus = req.gpus};
}

PlannedCollective plan_collective(const hw::Router& router, const CollectiveRequest& req) {
  PlannedCollective out{.chosen = req.algorithm, .plan = make_algorithm(req.algorithm)->plan(plan_input(router.cluster(), req))};
  FoldedTiming folded = fold_rings(router, req.gpus, out.plan);
  out.folded_latency_ps = std::move(folded.latency_ps);
  out.lattice_end_ps = folded.lattice_end_ps;
  return out;
}

CollectiveTasks add_collective(Network& net, const CollectiveRequest& req, const std::vector<core::StreamId>& streams) {
  CollectiveKey key = key_of(req);
  if (const PlannedCollective* kept = net.planned(key)) return emit_collective(net, req, *kept, streams);
  check_request(net.cluster(), req, streams.size());
  CollectiveRequest fixed = req;
  std::optional<PlannedCollective> fresh;
  if (req.algorithm == Algorithm::automatic || !req.protocol) {
    AlgorithmChoice choice = choose_with_estimate(net.router(), req);
    fixed.algorithm = choice.algorithm;
    fixed.protocol = choice.protocol;
    // The tuner planned every candidate in coarse mode: a coarse request takes its plan as it is.
    if (req.coarse) fresh = std::move(choice.coarse_plan);
  }
  if (!fresh) fresh = plan_collective(net.router(), fixed);
  return emit_collective(net, req, net.remember(std::move(key), std::move(*fresh)), streams);
}

CollectiveTasks emit_collective(Network& net, const CollectiveRequest& req, const PlannedCollective& planned,
                                const std::vector<core::StreamId>& streams) {
  check_streams(req, streams.size());
  const StepPlan& plan = planned.plan;
  const auto& folded = planned.folded_latency_ps;
  CollectiveTasks out;
  out.chosen = planned.chosen;
  out.protocol = plan.protocol;

  core::Engine& engine = net.engine();
  for (auto s : streams) out.members.push_back(engine.add_hold(s));
  out.group = engine.add_group(out.members);
  const TaskId launch = engine.add_delay(core::picoseconds(plan.launch_latency_ps));
  engine.add_dependency(engine.arrival_marker(out.group), launch);

  std::vector<TaskId> done;
  done.reserve(plan.transfers.size());
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    std::vector<TaskId> deps;
    for (int a : t.after) deps.push_back(done[static_cast<std::size_t>(a)]);
    if (deps.empty()) deps.push_back(launch);
    done.push_back(emit_transfer(net, req, t, folded[i], deps));
  }
  for (std::size_t r = 0; r < out.members.size(); ++r) {
    std::vector<TaskId> mine;
    for (int t : plan.rank_done[r]) mine.push_back(done[static_cast<std::size_t>(t)]);
    if (mine.empty()) mine.push_back(launch);
    engine.hold_until(out.members[r], mine.size() == 1 ? mine.front() : join_all(engine, mine));
  }
  return out;
}

}  // namespace stepsim::comm
