// Build: which ranks a simulate() call simulates and their devices and streams (task_graph.hpp).
#include "sim/plan/optimizer_offload.hpp"
#include "sim/plan/resource_guard.hpp"
#include "sim/plan/task_graph.hpp"

namespace stepsim::plan {
namespace {

void add_ranks(Build& b) {
  const auto& in = b.in;
  b.local_of.assign(in.grid.size(), -1);
  for (int g = 0; g < in.grid.size(); ++g) {
    if (in.symmetric && in.grid.coord(g).dp != 0) continue;
    if (in.symmetric && in.fused && in.grid.coord(g).tp != 0) continue;  // TP ranks run in lock step
    double slow = 1.0;
    for (const auto& f : in.sc.faults.gpus)
      if (f.gpu == g) slow *= f.compute_slowdown;
    b.local_of[g] = b.rec.add_rank(in.sc.cluster.gpu.comm_slowdown, slow);
    b.global_of.push_back(g);
  }
  const std::size_t n = b.global_of.size();
  b.passes.resize(n);
  b.executed_flops.assign(n, 0.0);
  b.accumulate_ps.assign(n, 0);
  b.recompute_flops.assign(n, 0.0);
  b.backward_end.assign(n, core::TaskId{});
  b.grad_ready.resize(n);
  b.first_forward.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const int stage = in.grid.coord(b.global_of[r]).pp;
    int count = 0;
    for (int c = 0; c < in.schedule.chunks; ++c) count += in.layers_of_vstage[c * in.grid.pp() + stage];
    b.grad_ready[r].assign(count, core::TaskId{});
    b.first_forward[r].assign(count, std::nullopt);
  }
}

}  // namespace

Build::Build(const Scenario& scenario, const Strategy& strategy, const SimOptions& options)
    : in(make_inputs(scenario, strategy, options)), rec(options.detail, resource_limits()), router(scenario.cluster) {
  network = std::make_unique<comm::Network>(rec.engine(), in.sc.cluster, router, in.opt.plans.get());
  for (const auto& fault : in.sc.faults.links)
    for (int link : fault.links) rec.engine().scale_link(network->link(link), fault.bandwidth_factor);
  add_ranks(*this);
}

Build::~Build() = default;

OptimizerOffload& Build::offload() {
  if (!offload_) offload_ = std::make_unique<OptimizerOffload>(*this);
  return *offload_;
}

std::vector<int> Build::dp_part(int global, DpPart part) const {
  const auto group = in.grid.dp_group(global);
  if (part == DpPart::all) return group;
  const int s = in.shard_degree, at = in.grid.coord(global).dp;
  std::vector<int> out;
  for (int k = 0; k < static_cast<int>(group.size()); ++k)
    if (part == DpPart::shard ? k / s == at / s : k % s == at % s) out.push_back(group[k]);
  return out;
}

std::vector<std::vector<int>> Build::stage_tp_groups(int pp) const {
  std::vector<std::vector<int>> out;
  for (int d = 0; d < in.grid.dp(); ++d) {
    std::vector<int> g;
    for (int t = 0; t < in.grid.tp(); ++t) {
      const int local = local_of[in.grid.rank({t, d, pp})];
      if (local >= 0) g.push_back(local);
    }
    if (!g.empty()) out.push_back(g);
  }
  return out;
}

}  // namespace stepsim::plan
