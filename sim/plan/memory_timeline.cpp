// Memory per rank as a measured timeline: model states from t = 0 (models::model_state_bytes for
// the parameters this rank holds, under its ZeRO stage), plus the events the builders recorded:
// stored activations of each microbatch from the end of its forward to the end of its backward
// (or weight pass), recompute buffers during one layer's backward, gathered ZeRO-3 parameters from
// the start of their all-gather to the end of the layer that used them, gradients FSDP accumulates
// unsharded from their first backward to their reduce-scatter. At equal times frees
// apply before allocations (a buffer freed as another is allocated is not counted twice).
#include <algorithm>
#include <cmath>

#include "models/memory.hpp"
#include "sim/config/units.hpp"
#include "sim/plan/metrics.hpp"
#include "sim/plan/optimizer_offload.hpp"

namespace stepsim::plan {
namespace {

struct Point {
  std::int64_t t = 0, delta = 0;
  MemKind kind = MemKind::activations;
};

MemoryBreakdown static_states(const Build& b, int stage) {
  // FSDP's SHARD_GRAD_OP keeps parameters sharded at rest like ZeRO-3 (gathered ones are counted
  // as they are gathered).
  const int zero = b.in.st.shards_parameters() ? 3 : b.in.st.effective_zero_stage();
  // Routed experts under EP are sharded over their own dp/ep replicas (Megatron-Core's
  // expert-data-parallel group); everything else over the shard group.
  const std::int64_t experts = b.in.stage_expert_params[stage];
  const auto grads = b.in.held_gradients;
  const auto& states = b.in.st.optimizer_states;
  const auto dense = models::model_state_bytes(b.in.stage_params[stage] - experts, zero, b.in.shard_degree, grads, states);
  const auto expert = models::model_state_bytes(experts, zero, std::max(1, b.in.st.expert_dp_degree()), grads, states);
  MemoryBreakdown m;
  m.parameters = dense.params + expert.params;
  m.gradients = dense.grads + expert.grads;
  m.optimizer_states = dense.optimizer + expert.optimizer;
  if (b.in.st.offload_optimizer) {
    // ZeRO-Offload keeps Adam's states and the fp32 gradients in host memory
    // (optimizer_offload.hpp): the GPU holds its 16-bit parameters, and under ZeRO-1 the 16-bit
    // gradients it accumulates (ZeRO-2/3 send each reduced slice out).
    m.optimizer_states = 0;
    if (zero >= 2) m.gradients = 0;
    if (b.in.st.offload_param) m.parameters = 0;  // gathered ones are counted as they arrive
  }
  // FP8 training keeps each FP8 GEMM's weight in FP8, and where the GPU needs it transposed too
  // (1 + 1 bytes), beside the 16-bit one for the whole step (TE caches them over the microbatches).
  // FP8 parameters (fp8_param_gather) are the FP8 weight itself: the 16-bit one goes (2 bytes
  // become 1) and only the transpose is extra. Sharded parameters are cast as they are gathered
  // and freed with them (not counted).
  if (!b.in.st.shards_parameters()) {
    const std::int64_t fp8 = b.in.stage_fp8_params[stage];
    const std::int64_t transpose = b.in.sc.cluster.gpu.fp8_transposes ? fp8 : 0;
    m.fp8_weights = (b.in.st.fp8_param_gather ? 0 : fp8) + transpose;
    if (b.in.st.fp8_param_gather) m.parameters -= fp8;
  }
  return m;
}

void add(MemoryBreakdown& m, MemKind k, std::int64_t delta) {
  if (k == MemKind::activations) m.activations += delta;
  if (k == MemKind::gathered) m.gathered_parameters += delta;
  if (k == MemKind::buffers) m.buffers += delta;
  if (k == MemKind::gradients) m.gradients += delta;
}

std::string dominant(const MemoryBreakdown& m) {
  std::vector<std::pair<std::int64_t, std::string>> parts{
      {m.parameters, "parameters"},         {m.fp8_weights, "FP8 weight copies"}, {m.gradients, "gradients"},
      {m.optimizer_states, "optimizer states"}, {m.activations, "stored activations"},
      {m.gathered_parameters, "gathered ZeRO-3 parameters"}, {m.buffers, "recompute buffers"}};
  std::sort(parts.rbegin(), parts.rend());
  return parts[0].second + " (" + config::format_bytes(static_cast<double>(parts[0].first)) + ")";
}

}  // namespace

std::int64_t memory_reserve_bytes(std::int64_t capacity) {
  return (std::int64_t{1} << 30) + capacity / 20;
}

// ZeRO-Offload's host memory on the fullest server: per parameter of each rank's shard, the fp32
// master, Adam's two moments and the fp32 gradient that stage_1_and_2.py / stage3.py keep there
// (16 B; DeepSpeed's estimate_zero2_model_states_mem_needs puts at least 16 B a parameter, with a
// 1.5x margin not counted here; check_strategy refuses narrowed states with offload), under
// accumulation with ZeRO-2/3 the 16-bit sum kept between micro-steps (2 B), and with the
// parameters offloaded their 16-bit partition (2 B). DeepSpeed's
// pinned staging buffers are tile-sized, not counted.
std::int64_t offload_host_bytes(const Build& b) {
  if (!b.in.st.offload_optimizer) return 0;
  const hw::Cluster& cluster = b.in.sc.cluster;
  const std::int64_t per_param = 16 + (b.in.st.effective_zero_stage() >= 2 && b.in.schedule.microbatches > 1 ? 2 : 0) +
                                 (b.in.st.offload_param ? 2 : 0);
  std::vector<std::int64_t> per_server(static_cast<std::size_t>(cluster.servers), 0);
  for (int g = 0; g < b.in.grid.size(); ++g)
    per_server[static_cast<std::size_t>(cluster.server_of(g))] += per_param * optimizer_shard_params(b, b.in.grid.coord(g).pp);
  return *std::max_element(per_server.begin(), per_server.end());
}

void fill_memory(const Build& b, StepResult& r) {
  r.host_memory_bytes = offload_host_bytes(b);
  const std::size_t n = b.global_of.size();
  std::vector<std::vector<Point>> points(n);
  for (const MemEvent& e : b.rec.mem()) {
    const auto t = e.at_start ? b.rec.engine().start_of(e.task) : b.rec.engine().finish_of(e.task);
    points[e.rank].push_back({t.ps, e.delta, e.kind});
  }
  r.ranks.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    auto& pts = points[k];
    std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& c) {
      return a.t != c.t ? a.t < c.t : a.delta < c.delta;
    });
    const int stage = b.in.grid.coord(b.global_of[k]).pp;
    MemoryBreakdown now = static_states(b, stage), peak = now;
    RankInfo& info = r.ranks[k];
    for (const Point& p : pts) {
      add(now, p.kind, p.delta);
      if (now.total() > peak.total()) peak = now;
      if (b.in.opt.detail) info.memory.push_back({p.t, now.total()});
    }
    info.peak_memory_bytes = peak.total();
    info.at_peak = peak;
    if (peak.total() > r.peak_memory_bytes) {
      r.peak_memory_bytes = peak.total();
      r.memory_at_peak = peak;
    }
  }
  r.memory_capacity_bytes = b.in.sc.cluster.gpu.memory_bytes;
  const std::int64_t reserve = memory_reserve_bytes(r.memory_capacity_bytes);
  r.memory_at_peak.reserve = reserve;
  r.fits = r.peak_memory_bytes + reserve <= r.memory_capacity_bytes;
  if (!r.fits) {
    r.memory_note = "needs " + config::format_bytes(static_cast<double>(r.peak_memory_bytes + reserve - r.memory_capacity_bytes)) +
                    " more than the " + config::format_bytes(static_cast<double>(r.memory_capacity_bytes)) + " of a GPU (" +
                    config::format_bytes(static_cast<double>(reserve)) + " reserved); largest: " + dominant(r.memory_at_peak);
  }
  // ZeRO-Offload's states must fit the server's RAM too, where the hardware states it.
  r.host_ram_bytes = b.in.sc.cluster.host_ram_bytes;
  if (r.host_ram_bytes > 0 && r.host_memory_bytes > r.host_ram_bytes) {
    r.fits = false;
    r.memory_note += std::string(r.memory_note.empty() ? "" : "; ") + "its offloaded optimizer needs " +
                     config::format_bytes(static_cast<double>(r.host_memory_bytes)) + " of host memory, more than the " +
                     config::format_bytes(static_cast<double>(r.host_ram_bytes)) + " of a server";
  }
}

}  // namespace stepsim::plan
