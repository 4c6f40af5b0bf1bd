// Build: the per-call state of simulate() (task_graph.hpp): which ranks are simulated, their
// devices and streams, the costs of one layer, and the small helpers every builder uses.
#include <cmath>

#include "sim/plan/task_graph.hpp"

namespace stepsim::plan {
namespace {

bool use_symmetric(const Scenario& sc, const Strategy& st, const SimOptions& opt) {
  if (opt.fidelity == Fidelity::full) return false;
  if (opt.fidelity == Fidelity::symmetric) {
    if (!sc.faults.empty())
      throw config::ConfigError({sc.file, 0, 0}, "faults",
                                "symmetric fidelity needs interchangeable ranks; faults break that (use --fidelity full)");
    return true;
  }
  // ZeRO-3 overlaps its gathers with its reduce-scatters; symmetric times each alone (see
  // tests/sim/plan/symmetric_test.cpp), so automatic keeps such plans in full fidelity.
  return sc.faults.empty() && st.effective_zero_stage() < 3 && sc.cluster.gpu_count() > kSymmetricAboveGpus;
}

// Layers per virtual stage: L / (p·v), the remainder going one each to the earliest (uneven
// splits are allowed and reported per rank).
void split_layers(Build& b) {
  const int n = b.grid.pp() * b.schedule.chunks, layers = b.sc.model.layers;
  for (int u = 0, first = 0; u < n; ++u) {
    const int count = layers / n + (u < layers % n ? 1 : 0);
    b.layers_of_vstage.push_back(count);
    b.first_layer_of_vstage.push_back(first);
    first += count;
  }
  b.stage_params.assign(b.grid.pp(), 0);
  for (int u = 0; u < n; ++u) {
    std::int64_t p = b.layers_of_vstage[u] * b.layer.params;
    if (!b.opt.hooks.skip_embedding_and_head) {
      if (u == 0) p += b.embedding.params;
      if (u == n - 1) p += b.logits.params;
    }
    b.stage_params[u % b.grid.pp()] += p;
  }
}

bool tp_within_servers(const Scenario& sc, const RankGrid& grid) {
  for (int r = 0; r < grid.size(); ++r)
    for (int g : grid.tp_group(r))
      if (sc.cluster.server_of(g) != sc.cluster.server_of(r)) return false;
  return true;
}

void add_ranks(Build& b) {
  b.local_of.assign(b.grid.size(), -1);
  for (int g = 0; g < b.grid.size(); ++g) {
    if (b.symmetric && b.grid.coord(g).dp != 0) continue;
    if (b.symmetric && b.fused && b.grid.coord(g).tp != 0) continue;  // TP ranks run in lock step
    b.local_of[g] = static_cast<int>(b.global_of.size());
    b.global_of.push_back(g);
    const auto device = b.engine.add_device(b.sc.cluster.gpu.comm_slowdown);
    std::array<core::StreamId, kSlots> s{};
    s[0] = b.engine.add_stream(device, core::StreamKind::compute);
    for (int k = 1; k < kSlots; ++k) s[k] = b.engine.add_stream(device, core::StreamKind::communication);
    s[static_cast<int>(Slot::host)] = b.engine.add_stream(b.engine.add_device(), core::StreamKind::compute);
    b.streams.push_back(s);
    double slow = 1.0;
    for (const auto& f : b.sc.faults.gpus)
      if (f.gpu == g) slow *= f.compute_slowdown;
    b.slowdown.push_back(slow);
  }
  const std::size_t n = b.global_of.size();
  b.passes.resize(n);
  b.executed_flops.assign(n, 0.0);
  b.recompute_flops.assign(n, 0.0);
  b.backward_end.assign(n, core::TaskId{});
  b.last_on_dp.assign(n, std::nullopt);
  b.grad_ready.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const int stage = b.grid.coord(b.global_of[r]).pp;
    int count = 0;
    for (int c = 0; c < b.schedule.chunks; ++c) count += b.layers_of_vstage[c * b.grid.pp() + stage];
    b.grad_ready[r].assign(count, core::TaskId{});
  }
}

}  // namespace

Build::Build(const Scenario& scenario, const Strategy& strategy, const SimOptions& options)
    : sc(scenario),
      st(check_strategy(scenario, strategy)),
      opt(options),
      grid(st.tp, st.pp, st.dp, st.rank_order),
      schedule(make_schedule(st.schedule, st.pp, microbatches(scenario, st), st.v)),
      router(scenario.cluster) {
  symmetric = use_symmetric(sc, st, opt);
  coarse = sc.cluster.gpu_count() > kSymmetricAboveGpus;
  fused = coarse && st.effective_zero_stage() < 3 && tp_within_servers(sc, grid);
  network = std::make_unique<comm::Network>(engine, sc.cluster, router);
  for (const auto& fault : sc.faults.links)
    for (int link : fault.links) engine.scale_link(network->link(link), fault.bandwidth_factor);
  cost_in = cost_inputs(sc, st);
  if (opt.hooks.instant_host) cost_in.host_call_ps = 0;
  layer = layer_cost(cost_in);
  embedding = embedding_cost(cost_in);
  logits = logits_cost(cost_in);
  tp_bytes = plan::tp_bytes(cost_in);
  pp_bytes = cost_in.shape.sequence_parallel ? tp_bytes / st.tp : tp_bytes;
  split_layers(*this);
  add_ranks(*this);
}

void Build::depend(core::TaskId before, core::TaskId after) {
  engine.add_dependency(before, after);
  if (opt.detail) dep_log.emplace_back(before, after);
}

core::TaskId Build::compute(int local, std::int64_t ps, TaskCategory cat, int layer, int mb, int chunk) {
  const double slow = slowdown[local];
  const std::int64_t d = slow == 1.0 ? ps : static_cast<std::int64_t>(std::llround(static_cast<double>(ps) * slow));
  const core::TaskId id = engine.add_compute(stream(local, Slot::compute), core::Duration{d});
  meta.push_back({id, local, layer, mb, 0, cat, Slot::compute, static_cast<std::int8_t>(chunk), false, 0, -1});
  return id;
}

core::TaskId Build::host(int local, std::int64_t ps, int layer, int mb, int chunk) {
  const core::TaskId id = engine.add_compute(stream(local, Slot::host), core::Duration{ps});
  meta.push_back({id, local, layer, mb, 0, TaskCategory::host, Slot::host, static_cast<std::int8_t>(chunk), false, 0, -1});
  return id;
}

int Build::record_members(const std::vector<core::TaskId>& members, const std::vector<int>& locals, CommClass cls,
                          comm::Op op, std::int64_t bytes, int layer, int mb, int chunk, Slot slot, int group) {
  if (group < 0) group = collectives_recorded++;
  for (std::size_t k = 0; k < members.size(); ++k) {
    meta.push_back({members[k], locals[k], layer, mb, bytes, category_of(cls), slot, static_cast<std::int8_t>(chunk),
                    true, static_cast<std::int8_t>(op), -1, group});
    if (slot == Slot::dp) last_on_dp[locals[k]] = members[k];
  }
  return group;
}

std::vector<std::vector<int>> Build::stage_tp_groups(int pp) const {
  std::vector<std::vector<int>> out;
  for (int d = 0; d < grid.dp(); ++d) {
    std::vector<int> g;
    for (int t = 0; t < grid.tp(); ++t) {
      const int local = local_of[grid.rank({t, d, pp})];
      if (local >= 0) g.push_back(local);
    }
    if (!g.empty()) out.push_back(g);
  }
  return out;
}

CommClass class_of(TaskCategory c) {
  switch (c) {
    case TaskCategory::tp_comm: return CommClass::tp;
    case TaskCategory::pp_comm: return CommClass::pp;
    case TaskCategory::zero_comm: return CommClass::zero;
    default: return CommClass::dp;
  }
}

TaskCategory category_of(CommClass c) {
  switch (c) {
    case CommClass::tp: return TaskCategory::tp_comm;
    case CommClass::pp: return TaskCategory::pp_comm;
    case CommClass::dp: return TaskCategory::dp_comm;
    case CommClass::zero: return TaskCategory::zero_comm;
  }
  return TaskCategory::other;
}

}  // namespace stepsim::plan
