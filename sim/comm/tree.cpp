// Double binary tree all-reduce (NCCL 2.4+; Sanders, Speck & Träff 2009), one tree pair per
// channel. Inside each server a chain, across servers two binary trees, the second the mirror of
// the first so that a server that is a leaf in one is interior in the other; each tree reduces its
// share of the buffer up to its root and broadcasts it back down, pipelined in slices.
//
// Channels (NCCL src/graph/search.cc, connect.cc; "Massively Scale Your Deep Learning Training
// with NCCL 2.4", NVIDIA blog 2019): NCCL runs one tree per channel and splits the buffer across
// channels, and each channel's chain starts at the GPU next to a different NIC. With a single
// chain per tree, two trees would leave a DGX A100 through 2 of its 8 NICs; with one channel per
// local GPU (as ring.cpp does for rings) channel c's chain starts at local GPU c, so every NIC
// carries one tree head each way and the trees reach the busbw above the ring's ceiling that
// nccl-tests issue #196 reports at 2 nodes.
#include <algorithm>

#include "sim/comm/algorithm.hpp"
#include "sim/comm/ring_phase.hpp"

namespace stepsim::comm {
namespace {

// A tree is a pipeline d hops up and d down: (2d + K − 1)/K · S/B with K slices per tree. NCCL's
// 512 KiB chunks make K large for big buffers; the simulation caps K (an event-count bound, not
// physics) so that all of a collective's trees together have at most kTreeSliceBudget slices:
// one server keeps 128 per tree, as before channels; 2 servers of 8 get 32 per tree (16 trees,
// ~15k transfers, as many as the 8 rings). The fill costs less than (2d + K − 1)/K says: the 16
// trees' hops of different depths share each GPU's links, so one tree's fill is another's work
// (2 x dgx-a100 at 8 GiB: 252 GB/s busbw with K = 32, 257 with K = 64 and the bound 257).
constexpr int kTreeSliceBudget = 256;
// Never fewer slices per tree than this, however many channels there are.
constexpr int kTreeMinSlices = 32;

// Channel c's view of the servers: each server's ranks rotated to start at local rank c, so the
// chain's head (the rank that talks to other servers) differs per channel. One channel per local
// rank when the group spans servers with equal counts (ring.cpp's rule), else one.
std::vector<std::vector<std::vector<int>>> channel_servers(const PlanInput& in) {
  const auto servers = ranks_by_server(in.server_of);
  const std::size_t local = servers.front().size();
  const bool even = std::all_of(servers.begin(), servers.end(), [&](const auto& s) { return s.size() == local; });
  const std::size_t channels = (servers.size() > 1 && even) ? local : 1;
  std::vector<std::vector<std::vector<int>>> out(channels, servers);
  for (std::size_t c = 0; c < channels; ++c)
    for (auto& s : out[c]) std::rotate(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(c % s.size()), s.end());
  return out;
}

// parent[r] = the rank r sends to on the way up; -1 at the root. The mirror reverses the server
// order and each chain, so its head is the last rank of the channel's rotated chain.
std::vector<int> tree_parents(int ranks, std::vector<std::vector<int>> servers, bool mirrored) {
  if (mirrored) {
    std::reverse(servers.begin(), servers.end());
    for (auto& s : servers) std::reverse(s.begin(), s.end());
  }
  std::vector<int> parent(static_cast<std::size_t>(ranks), -1);
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

void add_tree(StepPlan& plan, const PlanInput& in, const std::vector<int>& parent, std::int64_t bytes, int max_slices) {
  const auto order = bottom_up(parent);
  const auto parts = split_bytes(bytes, slice_count(bytes, in.params, max_slices));
  const auto n = parent.size();
  std::vector<int> up(n, -1), down(n, -1);  // last transfer into r's parent / into r, this slice
  std::vector<std::vector<int>> from_children(n);
  for (std::size_t j = 0; j < parts.size(); ++j) {
    for (auto& c : from_children) c.clear();
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
  std::string do_requirement() const override { return "all_reduce"; }

  // Each channel runs both trees of the pair on its share of the buffer (NCCL's connect.cc
  // duplicates every channel, one copy per tree), so the 2·C trees each carry S/(2C).
  StepPlan do_plan(const PlanInput& in) const override {
    StepPlan plan;
    plan.rank_done.resize(static_cast<std::size_t>(in.ranks));
    if (in.ranks == 1) return plan;
    const auto channels = channel_servers(in);
    const int trees = 2 * static_cast<int>(channels.size());
    const int max_slices = std::max(kTreeMinSlices, kTreeSliceBudget / trees);
    const auto shares = split_bytes(in.bytes, trees);
    // Channel c is channel 0 with every rank turned c places on inside its server: the plan is
    // channel 0's trees in copies, where every tree carries the same share and each server's
    // ranks are consecutive (bottom_up orders ranks of one depth by number, and turning ranks
    // inside servers keeps that order only where no server's ranks lie between another's).
    const auto consecutive = [](const std::vector<int>& s) {
      return std::adjacent_find(s.begin(), s.end(), [](int a, int b) { return b != a + 1; }) == s.end();
    };
    const bool copies = in.copies && channels.size() > 1 && in.bytes % trees == 0 &&
                        std::all_of(channels.front().begin(), channels.front().end(), consecutive);
    for (std::size_t c = 0; c < (copies ? 1 : channels.size()); ++c) {
      add_tree(plan, in, tree_parents(in.ranks, channels[c], false), shares[2 * c], max_slices);
      add_tree(plan, in, tree_parents(in.ranks, channels[c], true), shares[2 * c + 1], max_slices);
    }
    if (copies) {
      plan.copies = static_cast<int>(channels.size());
      plan.copy_rank.resize(static_cast<std::size_t>(in.ranks));
      for (const auto& s : channels.front())
        for (std::size_t i = 0; i < s.size(); ++i) plan.copy_rank[static_cast<std::size_t>(s[i])] = s[(i + 1) % s.size()];
    }
    return plan;
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_tree() { return std::make_unique<Tree>(); }

}  // namespace stepsim::comm
