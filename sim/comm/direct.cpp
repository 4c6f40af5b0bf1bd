// Direct transfers: all-to-all (every rank sends S/n to every other rank at once, as NCCL's
// alltoall posts n−1 send/recv pairs) and send/recv (2 ranks: rank 0 sends S to rank 1, a pipeline
// hand-off; more ranks: each sends S to the next, nccl-tests' sendrecv_perf ring shift).
#include "sim/comm/algorithm.hpp"

namespace stepsim::comm {
namespace {

class Direct final : public CollectiveAlgorithm {
  std::string do_requirement() const override { return "alltoall, or sendrecv between 2 or more GPUs"; }
  bool do_supports(const PlanInput& in) const override {
    return in.op == Op::all_to_all || (in.op == Op::send_recv && in.ranks >= 2);
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
    for (int src = 0; src < n; ++src)
      for (int k = 1; k < n; ++k) send(src, (src + k) % n, shares[static_cast<std::size_t>((src + k) % n)]);
    return plan;
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_direct() { return std::make_unique<Direct>(); }

}  // namespace stepsim::comm
