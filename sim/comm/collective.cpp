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

TaskId join_all(core::Engine& engine, const std::vector<TaskId>& tasks) {
  const TaskId join = engine.add_marker();
  for (TaskId t : tasks) engine.add_dependency(t, join);
  return join;
}

// One planned transfer as engine tasks: a flow per equal-cost route (bytes split evenly), joined
// by a marker when there are several. Returns the task that finishes when all of it has.
TaskId emit_transfer(core::Engine& engine, const PlannedTransfer& t, const std::vector<LaidOutCollective::Flow>& flows,
                     const std::vector<TaskId>& deps) {
  if (t.is_join) return join_all(engine, deps);
  std::vector<TaskId> parts;
  parts.reserve(flows.size());
  for (const LaidOutCollective::Flow& f : flows) {
    parts.push_back(engine.add_transfer(f.route, f.bytes, f.latency));
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

PlannedCollective plan_collective(const hw::Router& router, const CollectiveRequest& req, PlanForm form) {
  PlanInput in = plan_input(router.cluster(), req);
  in.copies = form == PlanForm::copies;
  return with_folded_rings(router, req, make_algorithm(req.algorithm)->plan(in));
}

PlannedCollective with_folded_rings(const hw::Router& router, const CollectiveRequest& req, StepPlan plan) {
  PlannedCollective out{.chosen = req.algorithm, .plan = std::move(plan)};
  FoldedTiming folded = fold_rings(router, req.gpus, out.plan);
  out.folded_latency_ps = std::move(folded.latency_ps);
  out.lattice_end_ps = folded.lattice_end_ps;
  return out;
}

PlannedCollective expanded(PlannedCollective planned) {
  if (planned.plan.copies <= 1) return planned;
  planned.plan = expanded(std::move(planned.plan));
  planned.folded_latency_ps.assign(planned.plan.transfers.size(), std::nullopt);
  return planned;
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
  return emit_collective(net, lay_out(net, req, planned), streams);
}

LaidOutCollective lay_out(const Network& net, const CollectiveRequest& req, const PlannedCollective& planned) {
  require_whole(planned.plan, "lay_out");
  LaidOutCollective out{.planned = &planned, .transfers = std::vector<std::vector<LaidOutCollective::Flow>>(planned.plan.transfers.size())};
  for (std::size_t i = 0; i < planned.plan.transfers.size(); ++i) {
    const PlannedTransfer& t = planned.plan.transfers[i];
    if (t.is_join) continue;
    const auto routes = planned_routes(net.router(), req.gpus, t);
    const auto wire = static_cast<std::int64_t>(static_cast<double>(t.bytes) * t.wire_factor + 0.5);
    const auto shares = split_bytes(wire, static_cast<int>(routes.size()));
    const auto& folded = planned.folded_latency_ps[i];
    for (std::size_t r = 0; r < routes.size(); ++r)
      out.transfers[i].push_back({.route = net.engine_route(routes[r]),
                                  .bytes = shares[r],
                                  .latency = core::picoseconds(folded ? *folded : transfer_latency_ps(net.cluster(), routes[r], t))});
  }
  return out;
}

CollectiveTasks emit_collective(Network& net, const LaidOutCollective& laid_out, const std::vector<core::StreamId>& streams) {
  const StepPlan& plan = laid_out.planned->plan;
  if (streams.size() != plan.rank_done.size())
    throw std::invalid_argument(std::to_string(streams.size()) + " member streams for " + std::to_string(plan.rank_done.size()) + " GPUs");
  CollectiveTasks out;
  out.chosen = laid_out.planned->chosen;
  out.protocol = plan.protocol;

  core::Engine& engine = net.engine();
  out.members.reserve(streams.size());
  for (auto s : streams) out.members.push_back(engine.add_hold(s));
  out.group = engine.add_group(out.members, core::picoseconds(plan.launch_latency_ps));
  const TaskId launch = engine.arrival_marker(out.group);

  std::vector<TaskId> done;
  done.reserve(plan.transfers.size());
  std::vector<TaskId> deps;
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    deps.clear();
    for (int a : t.after) deps.push_back(done[static_cast<std::size_t>(a)]);
    if (deps.empty()) deps.push_back(launch);
    done.push_back(emit_transfer(engine, t, laid_out.transfers[i], deps));
  }
  std::vector<TaskId> mine;
  for (std::size_t r = 0; r < out.members.size(); ++r) {
    mine.clear();
    for (int t : plan.rank_done[r]) mine.push_back(done[static_cast<std::size_t>(t)]);
    if (mine.empty()) mine.push_back(launch);
    engine.hold_until(out.members[r], mine.size() == 1 ? mine.front() : join_all(engine, mine));
  }
  return out;
}

}  // namespace stepsim::comm
