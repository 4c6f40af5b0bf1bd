// Ring algorithm (NCCL ring; Patarasuk & Yuan 2009 for the bandwidth-optimal all-reduce).
#include <algorithm>

#include "sim/comm/algorithm.hpp"
#include "sim/comm/ring_phase.hpp"

namespace stepsim::comm {
namespace {

// Ring all-reduce moves S/n per step, so a slice cap of 4 already lets a slow hop overlap the
// next; more slices only cost events (on an idle ring slicing changes nothing, ring_phase.hpp).
constexpr int kRingMaxSlices = 4;
// A chain (broadcast) takes (hops + K − 1)/K · S/B with K slices, so it needs many to approach
// S/B as NCCL does with its 512 KiB steps: K = 256 costs 2.3 % over 7 hops.
constexpr int kChainMaxSlices = 256;

// One ring per local rank when the group spans servers with equal counts: ring c visits each
// server's ranks starting at local c, so each ring leaves every server from a different GPU (and
// NIC) — NCCL's channels, which is why multi-node busbw is NICs × per-NIC bandwidth.
std::vector<std::vector<int>> ring_orders(const PlanInput& in) {
  const auto servers = ranks_by_server(in.server_of);
  const std::size_t local = servers.front().size();
  const bool even = std::all_of(servers.begin(), servers.end(), [&](const auto& s) { return s.size() == local; });
  const std::size_t channels = (servers.size() > 1 && even) ? local : 1;
  std::vector<std::vector<int>> orders(channels);
  for (std::size_t c = 0; c < channels; ++c)
    for (const auto& server : servers)
      for (std::size_t i = 0; i < server.size(); ++i) orders[c].push_back(server[(i + c) % server.size()]);
  return orders;
}

void add_chain(StepPlan& plan, const PlanInput& in, std::vector<int> order, std::int64_t bytes) {
  std::rotate(order.begin(), std::find(order.begin(), order.end(), in.root), order.end());
  const int slices = slice_count(bytes, in.params, kChainMaxSlices);
  const auto parts = split_bytes(bytes, slices);
  std::vector<int> prev_hop(static_cast<std::size_t>(slices), -1);
  for (std::size_t h = 0; h + 1 < order.size(); ++h) {
    std::vector<int> hop(static_cast<std::size_t>(slices));
    for (std::size_t j = 0; j < hop.size(); ++j) {
      PlannedTransfer t{.src = order[h], .dst = order[h + 1], .bytes = parts[j],
                        .step_latency_ps = in.params.ring_step_latency_ps};
      if (prev_hop[j] >= 0) t.after.push_back(prev_hop[j]);
      if (j > 0) t.after.push_back(hop[j - 1]);
      hop[j] = plan.add(std::move(t));
    }
    plan.rank_done[static_cast<std::size_t>(order[h + 1])].push_back(hop.back());
    if (h == 0) plan.rank_done[static_cast<std::size_t>(order[0])].push_back(hop.back());
    prev_hop = std::move(hop);
  }
}

class Ring final : public CollectiveAlgorithm {
  std::string do_requirement() const override {
    return "all_reduce, all_gather, reduce_scatter or broadcast";
  }
  bool do_supports(const PlanInput& in) const override {
    return in.op == Op::all_reduce || in.op == Op::all_gather || in.op == Op::reduce_scatter ||
           in.op == Op::broadcast;
  }

  StepPlan do_plan(const PlanInput& in) const override {
    StepPlan plan;
    plan.rank_done.resize(static_cast<std::size_t>(in.ranks));
    if (in.ranks == 1) return plan;
    const auto orders = ring_orders(in);
    const auto channel_bytes = split_bytes(in.bytes, static_cast<int>(orders.size()));
    const std::int64_t n = in.ranks;
    for (std::size_t c = 0; c < orders.size(); ++c) {
      if (in.op == Op::broadcast) {
        add_chain(plan, in, orders[c], channel_bytes[c]);
        continue;
      }
      RingPhase phase{.members = orders[c],
                      .steps = static_cast<int>(in.op == Op::all_reduce ? 2 * (n - 1) : n - 1),
                      .step_bytes = (channel_bytes[c] + n - 1) / n,
                      .entry = std::vector<std::vector<int>>(static_cast<std::size_t>(n)),
                      .step_latency_ps = in.params.ring_step_latency_ps,
                      .max_slices = kRingMaxSlices,
                      .coarse = in.coarse};
      const auto done = append_ring_phase(plan, phase, in.params);
      for (std::size_t p = 0; p < orders[c].size(); ++p) {
        auto& rank = plan.rank_done[static_cast<std::size_t>(orders[c][p])];
        rank.insert(rank.end(), done[p].begin(), done[p].end());
      }
    }
    return plan;
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_ring() { return std::make_unique<Ring>(); }

}  // namespace stepsim::comm
