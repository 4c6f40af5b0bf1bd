#include "sim/plan/simulate.hpp"

#include "sim/plan/metrics.hpp"

namespace stepsim::plan {
namespace {

void fill_context(const Build& b, StepResult& r) {
  r.name = b.st.name;
  r.gpus = b.grid.size();
  r.tp = b.st.tp;
  r.pp = b.st.pp;
  r.dp = b.st.dp;
  r.zero_stage = b.st.effective_zero_stage();
  r.micro_batch = b.st.micro_batch;
  r.microbatches = b.schedule.microbatches;
  r.v = b.schedule.chunks;
  r.schedule = to_string(b.st.schedule);
  r.recompute = to_string(b.st.recompute);
  r.sequence_parallel = b.cost_in.shape.sequence_parallel;
  r.symmetric = b.symmetric;
}

}  // namespace

StepResult simulate(const Scenario& scenario, const Strategy& strategy, const SimOptions& options) {
  Build b(scenario, strategy, options);
  for (int s = 0; s < b.grid.pp(); ++s) build_stage_passes(b, s);
  build_pipeline_transfers(b);
  build_embedding_sync(b);
  for (int s = 0; s < b.grid.pp(); ++s) build_gradient_sync(b, s);
  const core::RunStats stats = b.engine.run();
  b.engine_makespan_ps = stats.makespan.ps;
  StepResult r;
  fill_context(b, r);
  r.events = stats.events;
  const RankTimes times = measure_ranks(b);
  fill_headline(b, times, r);
  fill_memory(b, r);
  fill_detail(b, times, r);
  return r;
}

}  // namespace stepsim::plan
