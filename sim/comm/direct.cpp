// Direct transfers: all-to-all (every rank sends S/n to every other rank at once, as NCCL's
// alltoall posts n−1 send/recv pairs) and send/recv (2 ranks: rank 0 sends S to rank 1, a pipeline
// hand-off; more ranks: each sends S to the next, nccl-tests' sendrecv_perf ring shift).
// On a mesh (PlanInput::mesh: GPUs joined pairwise, AMD's xGMI) also all-pairs reduce-scatter,
// all-gather and all-reduce, which keep every link of a GPU busy at once as RCCL does there
// (AMD ROCm blog "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X": the
// bus bandwidth of an 8-GPU all-reduce is capped by the 7 links together): reduce-scatter sends
// each other rank its S/n share of the buffer, all-gather sends each other rank the rank's own
// reduced share, and all-reduce is the first then the second, a rank's sends of the second
// waiting for the shares that reach it in the first.
#include "sim/comm/algorithm.hpp"

namespace stepsim::comm {
namespace {

class Direct final : public CollectiveAlgorithm {
  std::string do_requirement() const override {
    return "alltoall, sendrecv between 2 or more GPUs, or all_reduce, reduce_scatter or all_gather on GPUs of one server "
           "joined pairwise (a mesh)";
  }
  bool do_supports(const PlanInput& in) const override {
    const bool all_pairs = in.op == Op::all_reduce || in.op == Op::reduce_scatter || in.op == Op::all_gather;
    return in.op == Op::all_to_all || (in.op == Op::send_recv && in.ranks >= 2) || (all_pairs && in.mesh);
  }

  StepPlan do_plan(const PlanInput& in) const override {
    StepPlan plan;
    const int n = in.ranks;
    plan.rank_done.resize(static_cast<std::size_t>(n));
    auto send = [&](int src, int dst, std::int64_t bytes) {
      PlannedTransfer transfer{.src = src, .dst = dst, .bytes = bytes, .step_latency_ps = in.params.ring_step_latency_ps};
      const int t = plan.add(std::move(transfer));
      plan.rank_done[static_cast<std::size_t>(src)].push_back(t);
      plan.rank_done[static_cast<std::size_t>(dst)].push_back(t);
    };
    if (in.op == Op::send_recv) {
      if (n == 2) send(0, 1, in.bytes);
      else for (int r = 0; r < n; ++r) send(r, (r + 1) % n, in.bytes);
      return plan;
    }
    const auto shares = split_bytes(in.bytes, n);
    if (in.op == Op::all_to_all) {
      for (int src = 0; src < n; ++src)
        for (int k = 1; k < n; ++k) send(src, (src + k) % n, shares[static_cast<std::size_t>((src + k) % n)]);
      return plan;
    }
    auto share_to = [&](int src, int dst, std::int64_t bytes, std::vector<int> after) {
      PlannedTransfer t{.src = src, .dst = dst, .bytes = bytes, .step_latency_ps = in.params.ring_step_latency_ps};
      t.after = std::move(after);
      return plan.add(std::move(t));
    };
    // A rank's reduced share is ready when the others' parts of it have arrived: one join each.
    std::vector<std::vector<int>> ready(static_cast<std::size_t>(n));
    if (in.op != Op::all_gather) {
      std::vector<std::vector<int>> arrivals(static_cast<std::size_t>(n));
      for (int src = 0; src < n; ++src)
        for (int k = 1; k < n; ++k) {
          const int dst = (src + k) % n;
          arrivals[static_cast<std::size_t>(dst)].push_back(share_to(src, dst, shares[static_cast<std::size_t>(dst)], {}));
        }
      for (int r = 0; r < n; ++r) {
        PlannedTransfer join{.src = r, .dst = r};
        join.after = std::move(arrivals[static_cast<std::size_t>(r)]);
        join.is_join = true;
        ready[static_cast<std::size_t>(r)] = {plan.add(std::move(join))};
      }
    }
    if (in.op != Op::reduce_scatter)
      for (int src = 0; src < n; ++src)
        for (int k = 1; k < n; ++k) share_to(src, (src + k) % n, shares[static_cast<std::size_t>(src)], ready[static_cast<std::size_t>(src)]);
    for (int t = 0; t < static_cast<int>(plan.transfers.size()); ++t) {
      const auto& transfer = plan.transfers[static_cast<std::size_t>(t)];
      plan.rank_done[static_cast<std::size_t>(transfer.src)].push_back(t);
      if (transfer.dst != transfer.src) plan.rank_done[static_cast<std::size_t>(transfer.dst)].push_back(t);
    }
    return plan;
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_direct() { return std::make_unique<Direct>(); }

}  // namespace stepsim::comm
