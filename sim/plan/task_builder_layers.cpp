// The passes of one pipeline stage on all its simulated ranks, in lock step (the TP ranks of a
// stage run the same kernels, so their collectives pair up): each layer's fused compute segments,
// the TP collectives between them on the compute stream, when ZeRO-3 / FSDP parameters are
// gathered and gradients reduced (the collectives themselves: stage_dp_collectives.hpp), and the
// activation memory each pass keeps.
#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <span>

#include "sim/plan/host_thread.hpp"
#include "sim/plan/layer_groups.hpp"
#include "sim/plan/optimizer_offload.hpp"
#include "sim/plan/stage_dp_collectives.hpp"
#include "sim/plan/task_graph.hpp"
#include "sim/plan/zero3_gathers.hpp"

namespace stepsim::plan {
namespace {

// The local ranks of a stage's TP groups, group after group.
std::vector<int> ranks_of(const std::vector<std::vector<int>>& groups) {
  std::vector<int> out;
  for (const auto& g : groups) out.insert(out.end(), g.begin(), g.end());
  return out;
}

class StageEmitter {
 public:
  StageEmitter(Build& b, int stage) : b_(b), stage_(stage), groups_(b.stage_tp_groups(stage)) {
    for (int r : all_) b.passes[r].resize(b.in.schedule.passes[stage].size());
    final_backward_ = last_backward_index(b_.in.schedule, stage_);
  }

  void emit(std::size_t index, const Pass& pass) {
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

 private:
  bool first_vstage() const { return vstage_ == 0 && !b_.in.opt.hooks.skip_embedding_and_head; }
  bool last_vstage() const {
    return vstage_ == b_.in.grid.pp() * b_.in.schedule.chunks - 1 && !b_.in.opt.hooks.skip_embedding_and_head;
  }
  int layer_count() const { return b_.in.layers_of_vstage[vstage_]; }
  int first_layer() const { return b_.in.first_layer_of_vstage[vstage_]; }
  template <class T>
  T layers_sum(T LayerCost::*field) const {
    return b_.in.sum_layers(first_layer(), layer_count(), field);
  }
  // Index of a global layer among this stage's layers (chunks in order).
  int stage_layer(int layer) const {
    int base = 0;
    for (int c = 0; c < pass_.chunk; ++c) base += b_.in.layers_of_vstage[c * b_.in.grid.pp() + stage_];
    return base + layer - first_layer();
  }

  // This pass's segments in program order, for host_keeps_ahead().
  PassSegments pass_segments() const {
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

  // The kernels that add this backward's weight gradients of `cost` into those kept across the
  // step (LayerCost::accumulate): Megatron's unfused main_grad adds on every microbatch,
  // autograd from the second on (it keeps the first gradient as it is). Every chunk's first
  // backward is microbatch 0's. Where W is its own pass they follow its GEMMs.
  std::span<const Segment> accumulation(const LayerCost& cost) const {
    const bool after_weights = pass_.kind == PassKind::weight || !b_.in.schedule.splits_weight_gradient;
    const bool now = after_weights &&
                     (b_.in.st.grad_accumulation != GradAccumulation::autograd || pass_.microbatch > 0);
    return now ? std::span<const Segment>(cost.accumulate) : std::span<const Segment>();
  }
  // Their time over the chunk's layers, embedding and head, for the passes that time it as one.
  std::int64_t accumulation_ps() const {
    std::int64_t ps = 0;
    auto add = [&](const LayerCost& c) {
      for (const Segment& seg : accumulation(c)) ps += seg.compute_ps;
    };
    for (int i = 0; i < layer_count(); ++i) add(b_.in.layer(first_layer() + i));
    if (first_vstage()) add(b_.in.embedding);
    if (last_vstage()) add(b_.in.logits);
    return ps;
  }

  std::int64_t stored_bytes() const {
    return layers_sum(&LayerCost::stored_activation_bytes) + (first_vstage() ? b_.in.embedding.stored_activation_bytes : 0) +
           (last_vstage() ? b_.in.logits.stored_activation_bytes : 0);
  }

  void forward() {
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

  void backward() {
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
      fused(TaskCategory::backward_input, buckets_overlap ? n : 1, accumulation_ps(), [&](int piece) {
        if (buckets_overlap) gradient_ready(first_layer() + n - 1 - piece);
      });
      if (recomputes) transient(-transient_bytes);
      for (int i = 0; i < n && !b_.in.schedule.splits_weight_gradient && !buckets_overlap; ++i)
        gradient_ready(first_layer() + i);
    } else {
      if (last_vstage()) {
        segments(b_.in.logits.bwd, TaskCategory::backward_input, -1);
        segments(accumulation(b_.in.logits), TaskCategory::backward_input, -1);
      }
      for (int i = 0; i < n; ++i) {
        const int layer = first_layer() + n - 1 - i;
        layer_pass(i, n, layer, b_.in.layer(layer).bwd, TaskCategory::backward_input);
        if (!b_.in.schedule.splits_weight_gradient) gradient_ready(layer);
      }
      if (first_vstage()) {
        segments(b_.in.embedding.bwd, TaskCategory::backward_input, -1);
        segments(accumulation(b_.in.embedding), TaskCategory::backward_input, -1);
      }
    }
    for (int r : all_) {
      b_.executed_flops[r] += flops;
      b_.recompute_flops[r] += recompute_flops;
    }
    if (!b_.in.schedule.splits_weight_gradient) end_backward();
  }

  // One compute task and one TP collective for the whole pass (task_builder_fused.cpp), or
  // `pieces` equal shares of both in turn, calling after_piece(k) after the k-th; `extra_ps` of
  // compute (gradient accumulation) shared among the pieces.
  void fused(TaskCategory cat, int pieces = 1, std::int64_t extra_ps = 0,
             const std::function<void(int)>& after_piece = {}) {
    const auto key = std::make_pair(static_cast<int>(pass_.kind), vstage_);
    auto it = fused_cache_.find(key);
    if (it == fused_cache_.end())
      it = fused_cache_.emplace(key, fused_pass(b_, pass_.kind, vstage_, b_.in.grid.tp_group(b_.global_of[all_.front()]))).first;
    FusedPass fp = it->second;
    fp.compute_ps += extra_ps;
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

  // Zero Bubble's W: every weight-gradient GEMM of the chunk, no communication.
  void weight() {
    std::int64_t ps = layers_sum(&LayerCost::weight_ps) + accumulation_ps();
    if (first_vstage()) ps += b_.in.embedding.weight_ps;
    if (last_vstage()) ps += b_.in.logits.weight_ps;
    for (int r : all_) tail_[r] = b_.rec.compute(r, ps, TaskCategory::backward_weight, -1, pass_.microbatch, pass_.chunk);
    for (int i = 0; i < layer_count(); ++i) gradient_ready(first_layer() + i);
    end_backward();
  }

  void end_backward() {
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

  // One layer of a pass: ZeRO-3 gathers issued zero3_prefetch_layers() ahead (none where they
  // block), the segments, the recompute buffer of backward, the gathers DeepSpeed repeats between
  // the recompute and the backward, and ZeRO-3's gradient reduce-scatter.
  void layer_pass(int i, int n, int layer, const std::vector<Segment>& segs, TaskCategory cat) {
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
    if (!fwd) segments(accumulation(cost), cat, layer);
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

  // ZeRO-3 / FSDP gradients of `layer` after its backward: reduce-scattered now, or, where FSDP
  // defers the reduction, accumulated unsharded from the chunk's first backward and reduced in
  // its last one (no_sync) or after it (a pipeline stage: end_backward).
  void backward_gradients(int layer) {
    if (!b_.in.st.fsdp_defers_gradient_reduction()) {
      offload_gradients(dp_.reduce_gradients(layer), dp_.gradient_bytes(layer) / b_.in.grad_bytes, layer);
      return;
    }
    if (index_ == first_pass_of_chunk(PassKind::backward, pass_.chunk))
      for (int r : all_) b_.rec.memory({tail_[r], false, r, dp_.gradient_bytes(layer), MemKind::gradients});
    if (b_.in.grid.pp() == 1 && index_ == last_pass_of_chunk(pass_.chunk)) reduce_accumulated(layer);
  }

  // ZeRO-Offload: each rank's slice of the `params` gradients just reduced goes to host memory
  // as this backward's place among the chunk's micro-steps says (optimizer_offload.hpp).
  void offload_gradients(const std::vector<std::pair<int, core::TaskId>>& reduced, std::int64_t params, int layer) {
    if (!b_.in.st.offload_optimizer) return;
    const MicroStep when = micro_step(index_ == first_pass_of_chunk(PassKind::backward, pass_.chunk),
                                      index_ == last_pass_of_chunk(pass_.chunk));
    const std::int64_t slice = (params + b_.in.shard_degree - 1) / b_.in.shard_degree;
    for (const auto& [r, member] : reduced) b_.offload().gradients_out(r, member, slice, when, layer, pass_.microbatch);
  }

  // The reduction of gradients accumulated unsharded, which frees them as it ends. They are kept
  // in the reduce dtype, as FSDP2 does (FSDPParam.to_accumulated_grad_if_needed).
  void reduce_accumulated(int layer) {
    for (const auto& [r, member] : dp_.reduce_gradients(layer))
      b_.rec.memory({member, false, r, -dp_.gradient_bytes(layer), MemKind::gradients});
  }

  // Recomputed activations of one layer live from the start to the end of its backward.
  void transient(std::int64_t delta) {
    for (int r : all_) b_.rec.memory({tail_[r], false, r, delta, MemKind::buffers});
  }

  void segments(std::span<const Segment> segs, TaskCategory cat, int layer) {
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

  // The collective on the tp stream beside the compute it overlaps (the weight-gradient GEMM, an
  // attention block); a marker on the compute stream joins them, so the next segment starts when
  // both are done.
  void overlapped(const Segment& seg, TaskCategory cat, int layer) {
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

  void collective(const Segment& seg, int layer, Slot slot) {
    if (seg.group == LayerGroup::tp)
      tp_collective(seg.op, seg.bytes > 0 ? seg.bytes : b_.in.tp_bytes, layer, slot);
    else
      group_collective(seg.group == LayerGroup::cp ? CommClass::cp : CommClass::ep, layer_groups_.of(seg.group), seg, layer,
                       slot);
  }

  void note_first_forward(int r, int layer, core::TaskId t) {
    auto& first = b_.first_forward[r][stage_layer(layer)];
    if (!first) first = t;
  }

  void tp_collective(comm::Op op, std::int64_t bytes, int layer, Slot slot) {
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

  // A layer's collective over each of its groups other than TP (EP's all-to-alls, CP's ring
  // exchange: layer_groups.hpp), on the given stream; in symmetric fidelity only some members
  // are simulated and Collectives times the rest on the whole fabric.
  void group_collective(CommClass cls, const GroupMembers& groups, const Segment& seg, int layer, Slot slot) {
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

  void gradient_ready(int layer) {
    if (index_ != last_pass_of_chunk(pass_.chunk)) return;
    for (int r : all_) b_.grad_ready[r][stage_layer(layer)] = tail_[r];
  }

  std::size_t last_pass_of_chunk(int chunk) const { return plan::last_pass_of_chunk(b_.in.schedule, stage_, chunk); }
  // Looked up per layer, so found once per chunk (first_passes_of_chunks).
  std::size_t first_pass_of_chunk(PassKind kind, int chunk) const {
    return first_passes_[static_cast<std::size_t>(chunk)][kind == PassKind::forward ? 0 : 1];
  }

  std::vector<std::vector<int>> global_tp_groups() const {
    std::vector<std::vector<int>> out;
    for (const auto& g : groups_) out.push_back(b_.in.grid.tp_group(b_.global_of[g.front()]));
    return out;
  }

  Build& b_;
  int stage_;
  std::vector<std::vector<int>> groups_;
  std::vector<int> all_ = ranks_of(groups_);
  std::vector<std::vector<int>> tp_global_ = global_tp_groups();  // per TP group: its global ranks
  std::vector<core::StreamId> streams_;  // scratch: one collective's member streams
  LayerGroups layer_groups_{b_, all_};
  std::vector<core::TaskId> tail_ = std::vector<core::TaskId>(b_.global_of.size());
  HostThread host_{b_};
  StageDpCollectives dp_{b_, stage_, groups_, tail_};
  std::size_t index_ = 0, final_backward_ = 0;
  // per chunk: first forward, first backward
  std::vector<std::array<std::size_t, 2>> first_passes_ = first_passes_of_chunks(b_.in.schedule, stage_);
  Pass pass_;
  int vstage_ = 0;
  std::map<std::pair<int, int>, FusedPass> fused_cache_;
};

}  // namespace

void build_stage_passes(Build& b, int stage) {
  StageEmitter emitter(b, stage);
  const auto& list = b.in.schedule.passes[stage];
  for (std::size_t i = 0; i < list.size(); ++i) emitter.emit(i, list[i]);
}

}  // namespace stepsim::plan
