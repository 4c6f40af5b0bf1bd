// What becomes of one pipeline stage's weight gradients in its passes (stage_emitter.hpp): the
// kernels that accumulate them over microbatches, when they count as ready for the DP reduction,
// ZeRO-2's per-micro-step and ZeRO-3 / FSDP's per-layer reduce-scatters, FSDP's deferred
// reduction, and ZeRO-Offload's copies to host memory.
#include "sim/plan/optimizer_offload.hpp"
#include "sim/plan/stage_emitter.hpp"

namespace stepsim::plan {

std::span<const Segment> StageEmitter::accumulation(const LayerCost& cost) const {
  const bool after_weights = pass_.kind == PassKind::weight || !b_.in.schedule.splits_weight_gradient;
  const bool now = after_weights &&
                   (b_.in.st.grad_accumulation != GradAccumulation::autograd || pass_.microbatch > 0);
  return now ? std::span<const Segment>(cost.accumulate) : std::span<const Segment>();
}

void StageEmitter::accumulate_gradients(const LayerCost& cost, TaskCategory cat, int layer) {
  const auto segs = accumulation(cost);
  segments(segs, cat, layer);
  for (const Segment& seg : segs)
    for (int r : all_) b_.accumulate_ps[r] += seg.compute_ps;
}

Segment StageEmitter::accumulate_in_one_task() {
  Segment sum;
  auto add = [&](const LayerCost& c) {
    for (const Segment& seg : accumulation(c)) sum.compute_ps += seg.compute_ps, sum.host_ps += seg.host_ps;
  };
  for (int i = 0; i < layer_count(); ++i) add(b_.in.layer(first_layer() + i));
  if (first_vstage()) add(b_.in.embedding);
  if (last_vstage()) add(b_.in.logits);
  for (int r : all_) b_.accumulate_ps[r] += sum.compute_ps;
  return sum;
}

void StageEmitter::gradient_ready(int layer) {
  if (index_ != last_pass_of_chunk(pass_.chunk)) return;
  for (int r : all_) b_.grad_ready[r][stage_layer(layer)] = tail_[r];
}

void StageEmitter::end_backward() {
  if (b_.in.st.effective_zero_stage() == 2 && !b_.in.st.shards_parameters() && index_ != last_pass_of_chunk(pass_.chunk)) {
    // ZeRO-2 (DeepSpeed) reduce-scatters gradients at every micro-step, not only the last: one
    // collective of the chunk's gradients after each earlier backward (the last microbatch's go
    // out in buckets, task_builder_dp.cpp). Without DP only ZeRO-Offload's copies remain.
    std::int64_t params = layers_sum(&LayerCost::params);
    if (first_vstage()) params += b_.in.embedding.params;
    if (last_vstage()) params += b_.in.logits_own_params;
    std::vector<std::pair<int, core::TaskId>> reduced;
    if (b_.in.grid.dp() > 1) reduced = dp_.dp_collective(CommClass::dp, comm::Op::reduce_scatter, 2 * params, -1);
    else
      for (int r : all_) reduced.emplace_back(r, tail_[r]);
    offload_gradients(reduced, params, -1);
  }
  for (int r : all_) {
    b_.rec.memory({tail_[r], false, r, -stored_bytes(), MemKind::activations});
    if (index_ == final_backward_) b_.backward_end[r] = tail_[r];
  }
  // torch.distributed.pipelining after the stage's last backward (stage.py,
  // backward_maybe_with_nosync): post_backward() of every FSDP unit in the order of its states
  // (the modules' forward order) reduces its gradients and reshards its parameters. Without PP
  // only the parameters SHARD_GRAD_OP kept under no_sync are released here.
  const bool reduce = b_.in.st.fsdp_defers_gradient_reduction() && b_.in.grid.pp() > 1;
  const bool release = b_.in.st.fsdp_keeps_gathered();
  if ((reduce || release) && b_.in.shard_degree > 1 && index_ == last_pass_of_chunk(pass_.chunk)) {
    for (int i = 0; i < layer_count(); ++i) {
      const int layer = first_layer() + i;
      if (reduce) reduce_accumulated(layer);
      if (release)
        for (int r : all_) b_.rec.memory({tail_[r], false, r, -dp_.gathered_total(layer), MemKind::gathered});
    }
  }
}

void StageEmitter::backward_gradients(int layer) {
  if (!b_.in.st.fsdp_defers_gradient_reduction()) {
    offload_gradients(dp_.reduce_gradients(layer), dp_.gradient_bytes(layer) / b_.in.grad_bytes, layer);
    return;
  }
  if (index_ == first_pass_of_chunk(PassKind::backward, pass_.chunk))
    for (int r : all_) b_.rec.memory({tail_[r], false, r, dp_.gradient_bytes(layer), MemKind::gradients});
  if (b_.in.grid.pp() == 1 && index_ == last_pass_of_chunk(pass_.chunk)) reduce_accumulated(layer);
}

void StageEmitter::offload_gradients(const std::vector<std::pair<int, core::TaskId>>& reduced, std::int64_t params, int layer) {
  if (!b_.in.st.offload_optimizer) return;
  const MicroStep when = micro_step(index_ == first_pass_of_chunk(PassKind::backward, pass_.chunk),
                                    index_ == last_pass_of_chunk(pass_.chunk));
  const std::int64_t slice = (params + b_.in.shard_degree - 1) / b_.in.shard_degree;
  for (const auto& [r, member] : reduced) b_.offload().gradients_out(r, member, slice, when, layer, pass_.microbatch);
}

void StageEmitter::reduce_accumulated(int layer) {
  for (const auto& [r, member] : dp_.reduce_gradients(layer))
    b_.rec.memory({member, false, r, -dp_.gradient_bytes(layer), MemKind::gradients});
}

}  // namespace stepsim::plan
