// The passes of one pipeline stage on all its simulated ranks, in lock step (the TP ranks of a
// stage run the same kernels, so their collectives pair up): each layer's fused compute segments,
// the TP collectives between them on the compute stream, when ZeRO-3 / FSDP parameters are
// gathered and gradients reduced (the collectives themselves: stage_dp_collectives.hpp), and the
// activation memory each pass keeps. Internal to sim/plan: the passes are emitted in
// task_builder_layers.cpp, what becomes of each pass's weight gradients in stage_gradients.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "sim/plan/host_thread.hpp"
#include "sim/plan/layer_groups.hpp"
#include "sim/plan/stage_dp_collectives.hpp"
#include "sim/plan/task_graph.hpp"

namespace stepsim::plan {

class StageEmitter {
 public:
  StageEmitter(Build& b, int stage);
  void emit(std::size_t index, const Pass& pass);

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
  PassSegments pass_segments() const;

  // The kernels that add this backward's weight gradients of `cost` into those kept across the
  // step (LayerCost::accumulate): Megatron's unfused main_grad adds on every microbatch,
  // autograd from the second on (it keeps the first gradient as it is). Every chunk's first
  // backward is microbatch 0's. Where W is its own pass they follow its GEMMs.
  std::span<const Segment> accumulation(const LayerCost& cost) const;
  // Emits them after `cost`'s backward (Build::accumulate_ps counts them).
  void accumulate_gradients(const LayerCost& cost, TaskCategory cat, int layer);
  // Their GPU and host time over the chunk's layers, embedding and head, for the passes that run
  // them inside one compute task; counted in Build::accumulate_ps.
  Segment accumulate_in_one_task();
  std::int64_t stored_bytes() const;
  void forward();
  void backward();

  // One compute task and one TP collective for the whole pass (task_builder_fused.cpp), or
  // `pieces` equal shares of both in turn, calling after_piece(k) after the k-th; `extra`'s
  // compute and host time (gradient accumulation) shared among the pieces.
  void fused(TaskCategory cat, int pieces = 1, const Segment& extra = {},
             const std::function<void(int)>& after_piece = {});

  // Zero Bubble's W: every weight-gradient GEMM of the chunk, no communication.
  void weight();
  // After a backward pass (or W): ZeRO-2's per-micro-step reduce-scatter, its activations
  // released, and in the chunk's last one FSDP's deferred reductions and releases.
  void end_backward();

  // One layer of a pass: ZeRO-3 gathers issued zero3_prefetch_layers() ahead (none where they
  // block), the segments, the recompute buffer of backward, the gathers DeepSpeed repeats between
  // the recompute and the backward, and ZeRO-3's gradient reduce-scatter.
  void layer_pass(int i, int n, int layer, const std::vector<Segment>& segs, TaskCategory cat);

  // ZeRO-3 / FSDP gradients of `layer` after its backward: reduce-scattered now, or, where FSDP
  // defers the reduction, accumulated unsharded from the chunk's first backward and reduced in
  // its last one (no_sync) or after it (a pipeline stage: end_backward).
  void backward_gradients(int layer);

  // ZeRO-Offload: each rank's slice of the `params` gradients just reduced goes to host memory
  // as this backward's place among the chunk's micro-steps says (optimizer_offload.hpp).
  void offload_gradients(const std::vector<std::pair<int, core::TaskId>>& reduced, std::int64_t params, int layer);

  // The reduction of gradients accumulated unsharded, which frees them as it ends. They are kept
  // in the reduce dtype, as FSDP2 does (FSDPParam.to_accumulated_grad_if_needed).
  void reduce_accumulated(int layer);

  // Recomputed activations of one layer live from the start to the end of its backward.
  void transient(std::int64_t delta);
  void segments(std::span<const Segment> segs, TaskCategory cat, int layer);

  // The collective on the tp stream beside the compute it overlaps (the weight-gradient GEMM, an
  // attention block); a marker on the compute stream joins them, so the next segment starts when
  // both are done.
  void overlapped(const Segment& seg, TaskCategory cat, int layer);
  void collective(const Segment& seg, int layer, Slot slot);
  void note_first_forward(int r, int layer, core::TaskId t);
  void tp_collective(comm::Op op, std::int64_t bytes, int layer, Slot slot);

  // A layer's collective over each of its groups other than TP (EP's all-to-alls, CP's ring
  // exchange: layer_groups.hpp), on the given stream; in symmetric fidelity only some members
  // are simulated and Collectives times the rest on the whole fabric.
  void group_collective(CommClass cls, const GroupMembers& groups, const Segment& seg, int layer, Slot slot);
  // In the chunk's last backward, `layer`'s gradients are ready for the DP reduction from here.
  void gradient_ready(int layer);

  std::size_t last_pass_of_chunk(int chunk) const { return plan::last_pass_of_chunk(b_.in.schedule, stage_, chunk); }
  // Looked up per layer, so found once per chunk (first_passes_of_chunks).
  std::size_t first_pass_of_chunk(PassKind kind, int chunk) const {
    return first_passes_[static_cast<std::size_t>(chunk)][kind == PassKind::forward ? 0 : 1];
  }

  std::vector<int> ranks_of_groups() const;  // the local ranks of groups_, group after group
  std::vector<std::vector<int>> global_tp_groups() const;

  Build& b_;
  int stage_;
  std::vector<std::vector<int>> groups_;
  std::vector<int> all_ = ranks_of_groups();
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

}  // namespace stepsim::plan
