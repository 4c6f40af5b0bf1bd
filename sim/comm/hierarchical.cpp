// Hierarchical all-reduce (Horovod's hierarchical allreduce; Jia et al. 2018 "2D ring"):
// reduce-scatter inside each server (L ranks, L−1 steps of S/L), all-reduce of each 1/L shard
// across servers over one ring per local index (2(N−1) steps of S/(L·N)), all-gather inside each
// server. Only S/L·2(N−1)/N crosses each NIC, against 2(n−1)/n·S/L for a flat ring with L channels.
#include <algorithm>

#include "sim/comm/algorithm.hpp"
#include "sim/comm/ring_phase.hpp"

namespace stepsim::comm {
namespace {

constexpr int kMaxSlices = 4;  // as the ring (ring.cpp)

class Hierarchical final : public CollectiveAlgorithm {
  std::string do_requirement() const override {
    return "all_reduce over 2 or more servers with the same number (2 or more) of GPUs each";
  }
  bool do_supports(const PlanInput& in) const override {
    const auto servers = ranks_by_server(in.server_of);
    const bool even = std::all_of(servers.begin(), servers.end(),
                                  [&](const auto& s) { return s.size() == servers.front().size(); });
    // With one rank per server there is nothing to do inside servers: the plan would be the ring's.
    return in.op == Op::all_reduce && servers.size() > 1 && even && servers.front().size() > 1;
  }

  StepPlan do_plan(const PlanInput& in) const override {
    StepPlan plan;
    plan.rank_done.resize(static_cast<std::size_t>(in.ranks));
    const auto servers = ranks_by_server(in.server_of);
    const std::int64_t local = static_cast<std::int64_t>(servers.front().size());
    const std::int64_t count = static_cast<std::int64_t>(servers.size());
    const std::int64_t shard = (in.bytes + local - 1) / local;
    std::vector<std::vector<int>> done(static_cast<std::size_t>(in.ranks));  // by rank
    auto run = [&](const std::vector<int>& members, std::int64_t steps, std::int64_t step_bytes, std::int64_t lat) {
      RingPhase phase{.members = members, .steps = static_cast<int>(steps), .step_bytes = step_bytes,
                      .step_latency_ps = lat, .max_slices = kMaxSlices, .coarse = in.coarse};
      for (int r : members) phase.entry.push_back(done[static_cast<std::size_t>(r)]);
      const auto out = append_ring_phase(plan, phase, in.params);
      for (std::size_t i = 0; i < members.size(); ++i) done[static_cast<std::size_t>(members[i])] = out[i];
    };
    for (const auto& s : servers) run(s, local - 1, shard, in.params.ring_step_latency_ps);
    for (std::size_t l = 0; l < servers.front().size(); ++l) {
      std::vector<int> rail;
      for (const auto& s : servers) rail.push_back(s[l]);
      run(rail, 2 * (count - 1), (shard + count - 1) / count, in.params.ring_step_latency_ps);
    }
    for (const auto& s : servers) run(s, local - 1, shard, in.params.ring_step_latency_ps);
    plan.rank_done = std::move(done);
    return plan;
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_hierarchical() { return std::make_unique<Hierarchical>(); }

}  // namespace stepsim::comm
