#include "sim/plan/optimizer_offload.hpp"

#include "hardware/host_route.hpp"

namespace stepsim::plan {

MicroStep micro_step(bool first, bool last) {
  if (first) return last ? MicroStep::only : MicroStep::first;
  return last ? MicroStep::last : MicroStep::middle;
}

std::int64_t optimizer_shard_params(const Build& b, int stage) {
  const auto s = static_cast<std::size_t>(stage);
  if (b.in.st.effective_zero_stage() == 0) return b.in.stage_params[s];
  const std::int64_t shards = b.in.shard_degree, expert_shards = std::max(1, b.in.st.expert_dp_degree());
  const std::int64_t experts = b.in.stage_expert_params[s], dense = b.in.stage_params[s] - experts;
  return (dense + shards - 1) / shards + (experts + expert_shards - 1) / expert_shards;
}

const OptimizerOffload::HostWay& OptimizerOffload::way(int local) {
  if (ways_.empty()) ways_.resize(b_.global_of.size());
  std::optional<HostWay>& known = ways_[static_cast<std::size_t>(local)];
  if (!known) {
    const hw::Cluster& cluster = b_.in.sc.cluster;
    const int gpu = b_.global_of[static_cast<std::size_t>(local)];
    const hw::Route out = hw::gpu_to_host(cluster, gpu);
    std::int64_t latency = 0;
    for (int l : out) latency += cluster.links[static_cast<std::size_t>(l)].latency_ps;
    known = HostWay{b_.network->engine_route(out), b_.network->engine_route(hw::host_to_gpu(cluster, gpu)),
                    core::Duration{latency}};
  }
  return *known;
}

core::TaskId OptimizerOffload::copy(int local, bool to_host, std::int64_t bytes, int layer, int mb, Slot slot) {
  const HostWay& w = way(local);
  return b_.rec.transfer(local, slot, to_host ? w.out : w.in, bytes, w.latency, TaskCategory::host_transfer, layer, mb,
                         to_host);
}

core::TaskId OptimizerOffload::gradients_out(int local, core::TaskId reduced, std::int64_t elements, MicroStep when,
                                            int layer, int mb) {
  if (b_.in.st.effective_zero_stage() == 1) when = MicroStep::only;
  core::TaskId last = reduced;
  auto then = [&](bool to_host, std::int64_t bytes_per_element) {
    const core::TaskId t = copy(local, to_host, elements * bytes_per_element, layer, mb);
    b_.rec.depend(last, t);
    last = t;
  };
  if (when == MicroStep::middle || when == MicroStep::last) then(false, 2);  // the sum so far comes back
  then(true, when == MicroStep::only || when == MicroStep::last ? 4 : 2);
  return last;
}

std::int64_t OptimizerOffload::server_params(int global) {
  const hw::Cluster& cluster = b_.in.sc.cluster;
  const int server = cluster.server_of(global);
  if (server_params_.empty()) server_params_.resize(static_cast<std::size_t>(cluster.servers));
  std::optional<std::int64_t>& sum = server_params_[static_cast<std::size_t>(server)];
  if (!sum) {
    sum = 0;
    const int first = server * cluster.gpus_per_server;
    for (int g = first; g < first + cluster.gpus_per_server && g < b_.in.grid.size(); ++g)
      *sum += optimizer_shard_params(b_, b_.in.grid.coord(g).pp);
  }
  return *sum;
}

core::TaskId OptimizerOffload::step(int local, int stage, core::TaskId after) {
  const int global = b_.global_of[static_cast<std::size_t>(local)];
  const core::TaskId adam = b_.rec.delay(local, Slot::host, server_params(global) * b_.in.sc.cluster.comm.cpu_adam_param_ps,
                                         TaskCategory::cpu_optimizer);
  b_.rec.depend(after, adam);
  if (b_.in.st.offload_param) return adam;  // the CPU's copy is the one the next gathers fetch
  const core::TaskId back = copy(local, false, 2 * optimizer_shard_params(b_, stage), -1, -1);
  b_.rec.depend(adam, back);
  return back;
}

core::TaskId OptimizerOffload::parameters_in(int local, Slot slot, std::int64_t bytes, core::TaskId after, int layer, int mb) {
  const core::TaskId t = copy(local, false, bytes, layer, mb, slot);
  b_.rec.depend(after, t);
  return t;
}

}  // namespace stepsim::plan
