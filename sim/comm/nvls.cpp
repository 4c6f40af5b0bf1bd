// NVLS: NVLink SHARP all-reduce on NVSwitch (H100 and later; NCCL 2.17+). The switch reduces:
// each GPU's uplink carries its whole buffer once as the switch gathers every chunk
// (multimem.ld_reduce) plus its reduced 1/n chunk once (multimem.st), and its downlink the
// reduced 1/n chunk once plus the whole reduced buffer as the switch multicasts it: S·(n+1)/n
// each way per GPU, against 2(n−1)/n·S for a ring. Latency: params.nvls_latency_ps per
// collective, half up, half down. Efficiency: params.nvls_efficiency of line rate.
#include <algorithm>

#include "sim/comm/algorithm.hpp"

namespace stepsim::comm {
namespace {

// Up of slice j overlaps down of slice j−1: (K + 1)/K · S/B, so K = 64 costs 1.6 %.
constexpr int kNvlsMaxSlices = 64;

class Nvls final : public CollectiveAlgorithm {
  std::string do_requirement() const override {
    return "all_reduce over 2 or more GPUs of one server whose NVSwitch reduces (comm: nvls: true, H100 and later)";
  }
  bool do_supports(const PlanInput& in) const override {
    const bool one_server = std::all_of(in.server_of.begin(), in.server_of.end(),
                                        [&](int s) { return s == in.server_of.front(); });
    return in.op == Op::all_reduce && in.params.nvls && one_server && in.ranks >= 2;
  }
  // NCCL's NVLS runs the Simple protocol only (tuning.cc: baseLat and hwLat of NVLS are 0 for LL
  // and LL128, which it treats as not supported).
  bool do_supports_protocol(hw::Protocol p) const override { return p == hw::Protocol::simple; }

  StepPlan do_plan(const PlanInput& in) const override {
    StepPlan plan;
    const int n = in.ranks;
    plan.rank_done.resize(static_cast<std::size_t>(n));
    const std::int64_t per_gpu = in.bytes + (in.bytes + n - 1) / n;  // S·(n+1)/n
    const int slices = slice_count(per_gpu, in.params, kNvlsMaxSlices);
    const auto parts = split_bytes(per_gpu, slices);
    const double wire = in.params.nvlink_efficiency / in.params.nvls_efficiency;
    std::vector<int> up(static_cast<std::size_t>(n), -1), down(static_cast<std::size_t>(n), -1);
    for (const std::int64_t part : parts) {
      std::vector<int> ups;
      for (int r = 0; r < n; ++r) {
        PlannedTransfer t{.src = r, .dst = (r + 1) % n, .bytes = part, .hop = Hop::up,
                          .step_latency_ps = in.params.nvls_latency_ps / 2, .wire_factor = wire};
        if (up[static_cast<std::size_t>(r)] >= 0) t.after.push_back(up[static_cast<std::size_t>(r)]);
        ups.push_back(up[static_cast<std::size_t>(r)] = plan.add(std::move(t)));
      }
      for (int r = 0; r < n; ++r) {  // the switch multicasts a slice once every GPU's part is in
        PlannedTransfer t{.src = (r + n - 1) % n, .dst = r, .bytes = part, .hop = Hop::down,
                          .step_latency_ps = in.params.nvls_latency_ps / 2, .wire_factor = wire, .after = ups};
        if (down[static_cast<std::size_t>(r)] >= 0) t.after.push_back(down[static_cast<std::size_t>(r)]);
        down[static_cast<std::size_t>(r)] = plan.add(std::move(t));
      }
    }
    for (int r = 0; r < n; ++r) plan.rank_done[static_cast<std::size_t>(r)].push_back(down[static_cast<std::size_t>(r)]);
    return plan;
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_nvls() { return std::make_unique<Nvls>(); }

}  // namespace stepsim::comm
