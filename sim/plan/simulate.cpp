#include "sim/plan/simulate.hpp"

#include <chrono>
#include <string>

#include "sim/plan/link_loads.hpp"
#include "sim/plan/metrics.hpp"
#include "sim/plan/resource_guard.hpp"

namespace stepsim::plan {
namespace {

void fill_context(const Build& b, StepResult& r) {
  r.name = b.in.st.name;
  r.gpus = b.in.grid.size();
  r.tp = b.in.st.tp;
  r.ep = b.in.st.ep;
  r.etp = b.in.st.expert_tp();
  r.pp = b.in.st.pp;
  r.dp = b.in.st.dp;
  r.cp = b.in.st.cp;
  // DeepSpeed's BF16_Optimizer shards like ZeRO-1 (PlanInputs::bf16_optimizer) whatever stage
  // below 2 selected it: the plan keeps the stage it was written with.
  r.zero_stage = b.in.bf16_optimizer ? b.in.st.zero_stage : b.in.st.effective_zero_stage();
  r.offload_optimizer = b.in.st.offload_optimizer;
  r.offload_param = b.in.st.offload_param;
  r.micro_batch = b.in.st.micro_batch;
  r.microbatches = b.in.schedule.microbatches;
  r.v = b.in.schedule.chunks;
  r.schedule = to_string(b.in.st.schedule);
  r.recompute = to_string(b.in.st.recompute);
  // Selective recompute names its modules where they are not Megatron's default core_attn.
  if (b.in.st.recompute == Recompute::selective && b.in.st.selective_policy == models::SelectivePolicy::torch_ops)
    r.recompute += " (torch_ops)";
  else if (b.in.st.recompute == Recompute::selective && b.in.st.recompute_modules != models::RecomputeModules{})
    r.recompute += " (" + models::to_string(b.in.st.recompute_modules) + ")";
  r.sequence_parallel = b.in.cost_in.shape.sequence_parallel;
  r.stage_layers.assign(b.in.grid.pp(), 0);
  for (std::size_t u = 0; u < b.in.layers_of_vstage.size(); ++u) r.stage_layers[u % r.stage_layers.size()] += b.in.layers_of_vstage[u];
  r.symmetric = b.in.symmetric;
}

// One line a person can check the build's choices against (fidelity, fused passes, folded rings).
std::string describe(const Build& b, const core::RunStats& stats, double wall_ms) {
  std::string s = "simulated " + b.in.st.name + ": " + std::to_string(b.in.grid.size()) + " GPUs, ";
  const std::size_t ranks = b.global_of.size();
  s += b.in.symmetric ? "symmetric fidelity (" + std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks") + " simulated)" : "full fidelity";
  s += b.in.fused ? ", fused passes" : ", per-layer passes";
  s += b.in.large_cluster ? ", DP rings folded" : "";
  s += "; " + std::to_string(b.rec.meta().size()) + " tasks, " + std::to_string(stats.events) + " events, " +
       std::to_string(static_cast<long long>(wall_ms + 0.5)) + " ms";
  return s;
}

}  // namespace

StepResult simulate(const Scenario& scenario, const Strategy& strategy, const SimOptions& options) {
  const auto began = std::chrono::steady_clock::now();
  Build b(scenario, strategy, options);
  core::RunStats stats;
  LinkLoadRecorder link_loads;
  try {
    for (int s = 0; s < b.in.grid.pp(); ++s) build_stage_passes(b, s);
    build_pipeline_transfers(b);
    build_embedding_sync(b);
    for (int s = 0; s < b.in.grid.pp(); ++s) build_gradient_sync(b, s);
    stats = b.rec.engine().run(options.detail ? &link_loads : nullptr);
  } catch (const config::MemoryLimitExceeded& e) {
    throw memory_over_limit(b.in, e);
  } catch (const core::EventLimitReached&) {
    throw events_over_limit(b.in);  // a task graph that cannot finish stays a SimulationError: our bug
  }
  b.engine_makespan_ps = stats.makespan.ps;
  StepResult r;
  fill_context(b, r);
  r.events = stats.events;
  const RankTimes times = measure_ranks(b);
  fill_headline(b, times, r);
  fill_memory(b, r);
  fill_detail(b, times, r);
  if (options.detail) r.links = link_loads.loads(b.in.sc.cluster, *b.network, b.in.sc.faults.links);
  if (options.log.wants(config::LogLevel::debug))
    options.log.debug(describe(b, stats, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count()));
  return r;
}

}  // namespace stepsim::plan
