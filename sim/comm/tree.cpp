// Double binary tree all-reduce (NCCL 2.4+; Sanders, Speck & Träff 2009): inside each server a
// chain, across servers two binary trees, the second the mirror of the first so that a server
// that is a leaf in one is interior in the other; each tree reduces half the buffer up to its
// root and broadcasts it back down, pipelined in slices.
#include <algorithm>

#include "sim/comm/algorithm.hpp"
#include "sim/comm/ring_phase.hpp"

namespace stepsim::comm {
namespace {

// A tree is a pipeline d hops up and d down: (2d + K − 1)/K · S/B with K slices. NCCL's 512 KiB
// chunks make K large for big buffers; 128 bounds the event count (fill 10 % at d = 7).
constexpr int kTreeMaxSlices = 128;

// parent[r] = the rank r sends to on the way up; -1 at the root.
std::vector<int> tree_parents(const PlanInput& in, bool mirrored) {
  auto servers = ranks_by_server(in.server_of);
  if (mirrored) {
    std::reverse(servers.begin(), servers.end());
    for (auto& s : servers) std::reverse(s.begin(), s.end());
  }
  std::vector<int> parent(static_cast<std::size_t>(in.ranks), -1);
  for (std::size_t k = 0; k < servers.size(); ++k) {
    const auto& s = servers[k];
    for (std::size_t i = 1; i < s.size(); ++i) parent[static_cast<std::size_t>(s[i])] = s[i - 1];
    if (k > 0) parent[static_cast<std::size_t>(s[0])] = servers[(k - 1) / 2][0];  // heap order
  }
  return parent;
}

// Ranks ordered so that every child comes before its parent (deepest first).
std::vector<int> bottom_up(const std::vector<int>& parent) {
  std::vector<int> depth(parent.size(), 0), order(parent.size());
  for (std::size_t r = 0; r < parent.size(); ++r)
    for (int p = parent[r]; p >= 0; p = parent[static_cast<std::size_t>(p)]) ++depth[r];
  for (std::size_t r = 0; r < order.size(); ++r) order[r] = static_cast<int>(r);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return depth[static_cast<std::size_t>(a)] > depth[static_cast<std::size_t>(b)];
  });
  return order;
}

void add_tree(StepPlan& plan, const PlanInput& in, const std::vector<int>& parent, std::int64_t bytes) {
  const auto order = bottom_up(parent);
  const int slices = slice_count(bytes, in.params, kTreeMaxSlices);
  const auto parts = split_bytes(bytes, slices);
  const auto n = parent.size();
  std::vector<int> up(n, -1), down(n, -1);  // last transfer into r's parent / into r, this slice
  for (std::size_t j = 0; j < parts.size(); ++j) {
    std::vector<std::vector<int>> from_children(n);
    for (int r : order) {  // reduce: children before parents
      const auto ru = static_cast<std::size_t>(r);
      if (parent[ru] < 0) continue;
      PlannedTransfer t{.src = r, .dst = parent[ru], .bytes = parts[j], .step_latency_ps = in.params.tree_step_latency_ps,
                        .after = from_children[ru]};
      if (up[ru] >= 0) t.after.push_back(up[ru]);
      up[ru] = plan.add(std::move(t));
      from_children[static_cast<std::size_t>(parent[ru])].push_back(up[ru]);
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {  // broadcast: parents first
      const auto ru = static_cast<std::size_t>(*it);
      if (parent[ru] < 0) continue;
      const auto pu = static_cast<std::size_t>(parent[ru]);
      PlannedTransfer t{.src = parent[ru], .dst = *it, .bytes = parts[j], .step_latency_ps = in.params.tree_step_latency_ps,
                        .after = parent[pu] < 0 ? from_children[pu] : std::vector<int>{down[pu]}};
      if (down[ru] >= 0) t.after.push_back(down[ru]);
      down[ru] = plan.add(std::move(t));
    }
  }
  for (std::size_t r = 0; r < n; ++r) {
    if (down[r] >= 0) plan.rank_done[r].push_back(down[r]);
    else for (std::size_t c = 0; c < n; ++c) if (parent[c] == static_cast<int>(r)) plan.rank_done[r].push_back(down[c]);
  }
}

class Tree final : public CollectiveAlgorithm {
  bool do_supports(const PlanInput& in) const override { return in.op == Op::all_reduce; }

  StepPlan do_plan(const PlanInput& in) const override {
    StepPlan plan;
    plan.rank_done.resize(static_cast<std::size_t>(in.ranks));
    if (in.ranks == 1) return plan;
    const auto halves = split_bytes(in.bytes, 2);
    add_tree(plan, in, tree_parents(in, false), halves[0]);
    add_tree(plan, in, tree_parents(in, true), halves[1]);
    return plan;
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_tree() { return std::make_unique<Tree>(); }

}  // namespace stepsim::comm
