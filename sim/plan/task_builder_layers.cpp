// The passes of one pipeline stage (stage_emitter.hpp): forward, backward and Zero Bubble's W,
// layer by layer — the segments, the TP and other layer collectives between them, ZeRO-3 / FSDP
// gathers and the activation memory each pass keeps.
#include <algorithm>

#include "sim/plan/optimizer_offload.hpp"
#include "sim/plan/stage_emitter.hpp"
#include "sim/plan/zero3_gathers.hpp"

namespace stepsim::plan {

StageEmitter::StageEmitter(Build& b, int stage) : b_(b), stage_(stage), groups_(b.stage_tp_groups(stage)) {
  for (int r : all_) b.passes[r].resize(b.in.schedule.passes[stage].size());
  final_backward_ = last_backward_index(b_.in.schedule, stage_);
}

std::vector<int> StageEmitter::ranks_of_groups() const {
  std::vector<int> out;
  for (const auto& g : groups_) out.insert(out.end(), g.begin(), g.end());
  return out;
}

std::vector<std::vector<int>> StageEmitter::global_tp_groups() const {
  std::vector<std::vector<int>> out;
  for (const auto& g : groups_) out.push_back(b_.in.grid.tp_group(b_.global_of[g.front()]));
  return out;
}

void StageEmitter::emit(std::size_t index, const Pass& pass) {
  index_ = index;
  pass_ = pass;
  dp_.set_pass(pass);
  vstage_ = pass.chunk * b_.in.grid.pp() + stage_;
  for (int r : all_) tail_[r] = b_.passes[r][index].start = b_.rec.engine().add_marker(b_.rec.stream(r, Slot::compute));
  const bool keeps_ahead = b_.in.cost_in.host_call_ps <= 0 || pass.kind == PassKind::weight ||
                           host_keeps_ahead(pass_segments());
  host_.start_pass(all_, tail_, pass, keeps_ahead);
  if (pass.kind == PassKind::forward) forward();
  if (pass.kind == PassKind::backward) backward();
  if (pass.kind == PassKind::weight) weight();
  host_.end_pass(all_);
  for (int r : all_) b_.passes[r][index].end = tail_[r];
}

PassSegments StageEmitter::pass_segments() const {
  PassSegments out;
  const bool fwd = pass_.kind == PassKind::forward;
  const LayerCost& head = fwd ? b_.in.embedding : b_.in.logits;
  const LayerCost& tail = fwd ? b_.in.logits : b_.in.embedding;
  auto add = [&](const LayerCost& c) {
    out.push_back(fwd ? &c.fwd : &c.bwd);
    if (!fwd && !accumulation(c).empty()) out.push_back(&c.accumulate);
  };
  if (fwd ? first_vstage() : last_vstage()) add(head);
  for (int i = 0; i < layer_count(); ++i)
    add(b_.in.layer(fwd ? first_layer() + i : first_layer() + layer_count() - 1 - i));
  if (fwd ? last_vstage() : first_vstage()) add(tail);
  return out;
}

std::int64_t StageEmitter::stored_bytes() const {
  return layers_sum(&LayerCost::stored_activation_bytes) + (first_vstage() ? b_.in.embedding.stored_activation_bytes : 0) +
         (last_vstage() ? b_.in.logits.stored_activation_bytes : 0);
}

void StageEmitter::forward() {
  const int n = layer_count();
  double flops = layers_sum(&LayerCost::fwd_flops);
  if (first_vstage()) flops += b_.in.embedding.fwd_flops;
  if (last_vstage()) flops += b_.in.logits.fwd_flops;
  if (b_.in.fused) {
    fused(TaskCategory::forward);
  } else {
    if (first_vstage()) segments(b_.in.embedding.fwd, TaskCategory::forward, -1);
    for (int i = 0; i < n; ++i) layer_pass(i, n, first_layer() + i, b_.in.layer(first_layer() + i).fwd, TaskCategory::forward);
    if (last_vstage()) segments(b_.in.logits.fwd, TaskCategory::forward, -1);
  }
  for (int r : all_) {
    b_.rec.memory({tail_[r], false, r, stored_bytes(), MemKind::activations});
    b_.executed_flops[r] += flops;
  }
}

void StageEmitter::backward() {
  const int n = layer_count();
  // The head's own: a multi-token-prediction layer's.
  const double recompute_flops =
      layers_sum(&LayerCost::recompute_flops) + (last_vstage() ? b_.in.logits.recompute_flops : 0);
  double flops = layers_sum(&LayerCost::bwd_flops) + recompute_flops;
  if (last_vstage()) flops += b_.in.logits.bwd_flops;
  if (first_vstage()) flops += b_.in.embedding.bwd_flops;
  if (b_.in.fused) {
    // One layer's recomputed activations are alive at a time: the largest of the chunk's.
    std::int64_t transient_bytes = 0;
    for (int i = 0; i < n; ++i) transient_bytes = std::max(transient_bytes, b_.in.layer(first_layer() + i).transient_bytes);
    const bool recomputes = transient_bytes > 0;
    if (recomputes) transient(+transient_bytes);
    // The pass that completes the chunk's gradients is cut into one piece per layer, so that
    // DP buckets leave as their layers finish (DDP's overlap) instead of after the whole pass.
    const bool buckets_overlap = b_.in.grid.dp() > 1 && b_.in.st.dp_overlap && !b_.in.schedule.splits_weight_gradient &&
                                 index_ == last_pass_of_chunk(pass_.chunk);
    fused(TaskCategory::backward_input, buckets_overlap ? n : 1, accumulate_in_one_task(), [&](int piece) {
      if (buckets_overlap) gradient_ready(first_layer() + n - 1 - piece);
    });
    if (recomputes) transient(-transient_bytes);
    for (int i = 0; i < n && !b_.in.schedule.splits_weight_gradient && !buckets_overlap; ++i)
      gradient_ready(first_layer() + i);
  } else {
    if (last_vstage()) {
      segments(b_.in.logits.bwd, TaskCategory::backward_input, -1);
      accumulate_gradients(b_.in.logits, TaskCategory::backward_input, -1);
    }
    for (int i = 0; i < n; ++i) {
      const int layer = first_layer() + n - 1 - i;
      layer_pass(i, n, layer, b_.in.layer(layer).bwd, TaskCategory::backward_input);
      if (!b_.in.schedule.splits_weight_gradient) gradient_ready(layer);
    }
    if (first_vstage()) {
      segments(b_.in.embedding.bwd, TaskCategory::backward_input, -1);
      accumulate_gradients(b_.in.embedding, TaskCategory::backward_input, -1);
    }
  }
  for (int r : all_) {
    b_.executed_flops[r] += flops;
    b_.recompute_flops[r] += recompute_flops;
  }
  if (!b_.in.schedule.splits_weight_gradient) end_backward();
}

void StageEmitter::fused(TaskCategory cat, int pieces, const Segment& extra, const std::function<void(int)>& after_piece) {
  const auto key = std::make_pair(static_cast<int>(pass_.kind), vstage_);
  auto it = fused_cache_.find(key);
  if (it == fused_cache_.end())
    it = fused_cache_.emplace(key, fused_pass(b_, pass_.kind, vstage_, b_.in.grid.tp_group(b_.global_of[all_.front()]))).first;
  FusedPass fp = it->second;
  fp.compute_ps += extra.compute_ps;
  fp.host_ps += extra.host_ps;
  for (int k = 0; k < pieces; ++k) {
    const bool last = k == pieces - 1;
    const std::int64_t compute = last ? fp.compute_ps - (pieces - 1) * (fp.compute_ps / pieces) : fp.compute_ps / pieces;
    const core::Duration tp{last ? fp.tp.ps - (pieces - 1) * (fp.tp.ps / pieces) : fp.tp.ps / pieces};
    const std::int64_t host = last ? fp.host_ps - (pieces - 1) * (fp.host_ps / pieces) : fp.host_ps / pieces;
    for (int r : all_) {
      host_.issue(r, host, compute, tp.ps > 0, -1);
      tail_[r] = b_.rec.compute(r, compute, cat, -1, pass_.microbatch, pass_.chunk);
      host_.after_first_call(r, tail_[r]);
      if (cat == TaskCategory::forward && k == 0) note_first_forward(r, first_layer(), tail_[r]);
    }
    if (tp.ps > 0) {
      for (const auto& g : groups_) {
        std::vector<core::StreamId> streams;
        for (int r : g) streams.push_back(b_.rec.stream(r, Slot::compute));
        auto members = b_.collectives.timed(streams, tp);
        b_.rec.record_members(members, g, CommClass::tp, comm::Op::all_reduce, b_.in.tp_bytes, -1, pass_.microbatch,
                          pass_.chunk, Slot::compute);
        for (std::size_t m = 0; m < g.size(); ++m) {
          host_.after_all_calls(g[m], members[m]);
          tail_[g[m]] = members[m];
        }
      }
    }
    if (after_piece) after_piece(k);
  }
}

void StageEmitter::weight() {
  std::int64_t ps = layers_sum(&LayerCost::weight_ps) + accumulate_in_one_task().compute_ps;
  if (first_vstage()) ps += b_.in.embedding.weight_ps;
  if (last_vstage()) ps += b_.in.logits.weight_ps;
  for (int r : all_) tail_[r] = b_.rec.compute(r, ps, TaskCategory::backward_weight, -1, pass_.microbatch, pass_.chunk);
  for (int i = 0; i < layer_count(); ++i) gradient_ready(first_layer() + i);
  end_backward();
}

void StageEmitter::layer_pass(int i, int n, int layer, const std::vector<Segment>& segs, TaskCategory cat) {
  const bool zero3 = b_.in.st.shards_parameters() && b_.in.shard_degree > 1;
  const bool fwd = cat == TaskCategory::forward;
  // SHARD_GRAD_OP: gathered in the forward, kept until the layer's backward has used them.
  const bool kept = b_.in.st.effective_zero_stage() == 2;
  // Kept across microbatches: gathered in the chunk's first forward only, released after its
  // gradients are reduced (end_backward).
  const bool kept_across = b_.in.st.fsdp_keeps_gathered();
  const bool gathers = !kept_across || (fwd && index_ == first_pass_of_chunk(PassKind::forward, pass_.chunk));
  const int step = fwd ? 1 : -1;
  const int base = fwd ? first_layer() : first_layer() + n - 1;
  const int ahead = zero3_prefetch_layers(b_.in.st, !fwd);
  const bool prefetch_after = !fwd && zero3_prefetch_after_gradients(b_.in.st);
  if (zero3 && (fwd || !kept) && gathers) {
    if (i == 0)
      for (int k = 0; k <= std::min(prefetch_after ? 0 : ahead, n - 1); ++k) dp_.gather(base + step * k);
    else if (!prefetch_after && i + ahead < n)
      dp_.gather(base + step * (i + ahead));
  }
  const LayerCost& cost = b_.in.layer(layer);
  const bool recomputes = cat != TaskCategory::forward && cost.transient_bytes > 0;
  if (recomputes) transient(+cost.transient_bytes);
  const auto regathers = zero3 && cat != TaskCategory::forward && !kept_across
                             ? zero3_backward_regathers(b_.in.st, zero3_gathers(b_.in.st, cost.op_params, 0))
                             : std::vector<std::int64_t>{};
  if (regathers.empty()) {
    segments(segs, cat, layer);
  } else {
    const auto backward = std::find_if(segs.begin(), segs.end(), [](const Segment& s) { return !s.recompute; });
    segments({segs.begin(), backward}, cat, layer);
    for (std::int64_t params : regathers) dp_.fetch(layer, 2 * params, false);
    segments({backward, segs.end()}, cat, layer);
  }
  if (!fwd) accumulate_gradients(cost, cat, layer);
  if (recomputes) transient(-cost.transient_bytes);
  if (zero3) {
    if (!kept_across && (!fwd || !kept))
      for (int r : all_) b_.rec.memory({tail_[r], false, r, -dp_.gathered_total(layer), MemKind::gathered});
    if (prefetch_after && !kept && !kept_across && i + 1 < n) dp_.gather(base + step * (i + 1));
    if (!fwd) backward_gradients(layer);
  } else if (!fwd && b_.in.st.shards_parameters() && b_.in.st.offload_optimizer) {
    // ZeRO-3 without DP reduces nothing, but its gradients still go to host memory.
    std::vector<std::pair<int, core::TaskId>> done;
    for (int r : all_) done.emplace_back(r, tail_[r]);
    offload_gradients(done, dp_.gradient_bytes(layer) / b_.in.grad_bytes, layer);
  }
}

void StageEmitter::transient(std::int64_t delta) {
  for (int r : all_) b_.rec.memory({tail_[r], false, r, delta, MemKind::buffers});
}

void StageEmitter::segments(std::span<const Segment> segs, TaskCategory cat, int layer) {
  for (const Segment& seg : segs) {
    for (int r : all_) host_.issue(r, seg.host_ps, seg.compute_ps, seg.has_comm, layer);
    if (seg.compute_ps > 0) {
      for (int r : all_) {
        const core::TaskId t = b_.rec.compute(r, seg.compute_ps, seg.recompute ? TaskCategory::recompute : cat, layer,
                                          pass_.microbatch, pass_.chunk);
        host_.after_first_call(r, t);
        dp_.consume_gathers(r, layer, t);
        if (cat == TaskCategory::forward && layer >= 0) note_first_forward(r, layer, t);
        tail_[r] = t;
      }
    }
    if (seg.has_comm && seg.overlap_ps > 0) overlapped(seg, cat, layer);
    else if (seg.has_comm) collective(seg, layer, Slot::compute);
  }
}

void StageEmitter::overlapped(const Segment& seg, TaskCategory cat, int layer) {
  std::vector<core::TaskId> before(tail_.size());
  for (int r : all_) before[r] = tail_[r];
  collective(seg, layer, Slot::tp);
  for (int r : all_) {
    b_.rec.depend(before[r], tail_[r]);
    const core::TaskId member = tail_[r];
    b_.rec.compute(r, seg.overlap_ps, seg.recompute ? TaskCategory::recompute : cat, layer, pass_.microbatch,
                   pass_.chunk);
    const core::TaskId join = b_.rec.engine().add_marker(b_.rec.stream(r, Slot::compute));
    b_.rec.depend(member, join);
    tail_[r] = join;
  }
}

void StageEmitter::collective(const Segment& seg, int layer, Slot slot) {
  if (seg.group == LayerGroup::tp)
    tp_collective(seg.op, seg.bytes > 0 ? seg.bytes : b_.in.tp_bytes, layer, slot);
  else
    group_collective(seg.group == LayerGroup::cp ? CommClass::cp : CommClass::ep, layer_groups_.of(seg.group), seg, layer,
                     slot);
}

void StageEmitter::note_first_forward(int r, int layer, core::TaskId t) {
  auto& first = b_.first_forward[r][stage_layer(layer)];
  if (!first) first = t;
}

void StageEmitter::tp_collective(comm::Op op, std::int64_t bytes, int layer, Slot slot) {
  for (std::size_t i = 0; i < groups_.size(); ++i) {
    const auto& g = groups_[i];
    streams_.clear();
    for (int r : g) streams_.push_back(b_.rec.stream(r, slot));
    auto members = b_.collectives.add(CommClass::tp, op, tp_global_[i], bytes, streams_, stage_);
    b_.rec.record_members(members, g, CommClass::tp, op, bytes, layer, pass_.microbatch, pass_.chunk, slot);
    for (std::size_t k = 0; k < g.size(); ++k) {
      host_.after_all_calls(g[k], members[k]);
      tail_[g[k]] = members[k];
    }
  }
}

void StageEmitter::group_collective(CommClass cls, const GroupMembers& groups, const Segment& seg, int layer, Slot slot) {
  for (const auto& [group, locals] : groups) {
    std::vector<core::StreamId> streams;
    for (int r : locals) streams.push_back(b_.rec.stream(r, slot));
    auto members = b_.collectives.add(cls, seg.op, group, seg.bytes, streams, stage_);
    b_.rec.record_members(members, locals, cls, seg.op, seg.bytes, layer, pass_.microbatch, pass_.chunk, slot);
    for (std::size_t k = 0; k < locals.size(); ++k) {
      host_.after_all_calls(locals[k], members[k]);
      tail_[locals[k]] = members[k];
    }
  }
}

void build_stage_passes(Build& b, int stage) {
  StageEmitter emitter(b, stage);
  const auto& list = b.in.schedule.passes[stage];
  for (std::size_t i = 0; i < list.size(); ++i) emitter.emit(i, list[i]);
}

}  // namespace stepsim::plan
