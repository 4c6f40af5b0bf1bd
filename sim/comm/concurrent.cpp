#include "sim/comm/concurrent.hpp"

#include <algorithm>
#include <deque>
#include <optional>
#include <stdexcept>
#include <vector>

#include "sim/comm/network.hpp"
#include "sim/comm/plan_dag.hpp"
#include "sim/core/engine.hpp"

namespace stepsim::comm {
namespace {

// The scratch engine: every request's flows on one idle copy of the machine.
core::Duration engine_time(const hw::Router& router, const std::vector<CollectiveRequest>& requests,
                           const std::vector<LinkScale>& degraded, const std::vector<const PlannedCollective*>& tuned) {
  core::Engine engine;
  Network network(engine, router.cluster(), router);
  for (const LinkScale& d : degraded) engine.scale_link(network.link(d.link), d.factor);
  for (std::size_t i = 0; i < tuned.size() && i < requests.size(); ++i)
    if (tuned[i] && requests[i].coarse) network.remember(key_of(requests[i]), *tuned[i]);
  for (const CollectiveRequest& req : requests) {
    std::vector<core::StreamId> streams;
    for (std::size_t i = 0; i < req.gpus.size(); ++i)
      streams.push_back(engine.add_stream(engine.add_device(), core::StreamKind::communication));
    add_collective(network, req, streams);
  }
  return engine.run().makespan - core::TimePoint{};
}

// The requests' plans, filled in place (it points into itself).
struct Plans {
  std::deque<StepPlan> made;                  ///< the plans made here (a deque: they never move)
  std::vector<const StepPlan*> per_request;   ///< into `made` or a tuned plan
};

// Each request's plan as add_collective() would make it (the tuner's coarse plan for a coarse
// request, `tuned`'s where given), or false when one of them is a ring (or has ring phases):
// rings stay flows in the engine, folded or step by step, whose symmetric steps tie as the
// engine's do. A tuned plan is read where the tuner keeps it, not copied: the DP groups of a
// stage often share one (tens of thousands of transfers each at 128 servers).
bool unfolded_plans(const hw::Router& router, const std::vector<CollectiveRequest>& requests,
                    const std::vector<const PlannedCollective*>& tuned, Plans& plans) {
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const CollectiveRequest& req = requests[i];
    CollectiveRequest fixed = req;
    std::optional<PlannedCollective> fresh;
    const PlannedCollective* planned = nullptr;
    if (i < tuned.size() && tuned[i] && req.coarse) {
      planned = tuned[i];
      fixed.algorithm = planned->chosen;
    } else if (req.algorithm == Algorithm::automatic || !req.protocol) {
      AlgorithmChoice choice = choose_with_estimate(router, req);
      fixed.algorithm = choice.algorithm;
      fixed.protocol = choice.protocol;
      if (req.coarse) fresh = std::move(choice.coarse_plan);
    }
    if (has_folded_form(req.op, fixed.algorithm)) return false;
    if (!planned) {
      if (!fresh) fresh = plan_collective(router, fixed);
      planned = &*fresh;
    }
    for (const auto& t : planned->plan.transfers)
      if (!t.ring.empty()) return false;
    if (fresh) plans.made.push_back(std::move(fresh->plan));
    plans.per_request.push_back(fresh ? &plans.made.back() : &planned->plan);
  }
  return true;
}

}  // namespace

StepPlan merge_plans(const std::vector<StepPlan>& plans, const std::vector<std::vector<int>>& gpus,
                     std::vector<int>& merged_gpus) {
  if (plans.size() != gpus.size()) throw std::invalid_argument("merge_plans: one GPU list per plan");
  StepPlan merged;
  merged_gpus.clear();
  for (std::size_t p = 0; p < plans.size(); ++p) {
    const StepPlan& plan = plans[p];
    require_whole(plan, "merge_plans");
    if (p == 0) merged.protocol = plan.protocol, merged.launch_latency_ps = plan.launch_latency_ps;
    if (plan.launch_latency_ps != merged.launch_latency_ps)
      throw std::invalid_argument("merge_plans: plans start after different launch latencies");
    const int rank_base = static_cast<int>(merged_gpus.size());
    const int transfer_base = static_cast<int>(merged.transfers.size());
    for (PlannedTransfer t : plan.transfers) {
      if (!t.ring.empty()) throw std::invalid_argument("merge_plans: a folded ring is timed by its lattice");
      t.src += rank_base;
      t.dst += rank_base;
      for (int& a : t.after) a += transfer_base;
      merged.add(std::move(t));
    }
    for (std::vector<int> done : plan.rank_done) {
      for (int& t : done) t += transfer_base;
      merged.rank_done.push_back(std::move(done));
    }
    merged_gpus.insert(merged_gpus.end(), gpus[p].begin(), gpus[p].end());
  }
  return merged;
}

std::optional<StepPlan> merged_as_copies(const std::vector<const StepPlan*>& plans) {
  if (plans.size() < 2 || plans.front()->copies != 1) return std::nullopt;
  const StepPlan& first = *plans.front();
  for (const StepPlan* p : plans)
    if (p != &first && !(*p == first)) return std::nullopt;
  for (const PlannedTransfer& t : first.transfers)
    if (!t.ring.empty()) return std::nullopt;  // merge_plans refuses those
  StepPlan copies = first;
  const std::size_t ranks = copies.rank_done.size(), all = ranks * plans.size();
  copies.rank_done.resize(all);  // the other groups' ranks do nothing in the first copy
  copies.copies = static_cast<int>(plans.size());
  copies.copy_rank.resize(all);
  for (std::size_t r = 0; r < all; ++r) copies.copy_rank[r] = static_cast<int>((r + ranks) % all);
  return copies;
}

core::Duration concurrent_idle_time(const hw::Router& router, const std::vector<CollectiveRequest>& requests,
                                    const std::vector<LinkScale>& degraded,
                                    const std::vector<const PlannedCollective*>& tuned) {
  if (requests.empty()) return {};
  if (!degraded.empty()) return engine_time(router, requests, degraded, tuned);
  Plans plans;
  if (!unfolded_plans(router, requests, tuned, plans)) return engine_time(router, requests, degraded, tuned);
  const auto& each = plans.per_request;
  const bool same_launch = std::all_of(each.begin(), each.end(), [&](const StepPlan* p) {
    return p->launch_latency_ps == each.front()->launch_latency_ps;
  });
  if (!same_launch) return engine_time(router, requests, degraded, tuned);
  std::vector<std::vector<int>> gpus;
  for (const CollectiveRequest& req : requests) gpus.push_back(req.gpus);
  std::vector<int> all_gpus;
  std::optional<StepPlan> merged = merged_as_copies(each);
  if (merged) {
    for (const auto& g : gpus) all_gpus.insert(all_gpus.end(), g.begin(), g.end());
  } else {
    std::vector<StepPlan> copied;
    for (const StepPlan* p : each) copied.push_back(*p);
    merged = merge_plans(copied, gpus, all_gpus);
  }
  if (const auto solved = step_plan_time(router, all_gpus, *merged)) return *solved;
  return estimate_plan(router, all_gpus, *merged);
}

}  // namespace stepsim::comm
