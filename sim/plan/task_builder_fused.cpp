// Fused passes for large clusters: a pass (one microbatch through one model chunk) becomes one
// compute task with the summed time of its segments, then one TP collective with the summed time
// of its TP collectives. While the ranks of a TP group run in lock step (same kernels, same GPU)
// the step time is the same as with every segment apart; a slower GPU still delays its peers by
// the summed difference, now at one sync point per pass. A 1,024-GPU step needs ~12x fewer tasks.
// Megatron's backward overlap of a TP collective with a weight-gradient GEMM becomes compute time
// max(d_comm, d_w + d_comm·x/(1+x)) with x the GPU's comm_slowdown: the GEMM runs 1/(1+x) slower
// while the collective moves data (the segmented builder gets the same from the engine).
#include <algorithm>

#include "sim/plan/task_graph.hpp"

namespace stepsim::plan {
namespace {

void add_segments(Build& b, const std::vector<Segment>& segs, std::int64_t times, const std::vector<int>& group,
                  FusedPass& out) {
  const double x = b.in.sc.cluster.gpu.comm_slowdown;
  for (const Segment& seg : segs) {
    out.compute_ps += times * seg.compute_ps;
    out.host_ps += times * seg.host_ps;
    if (!seg.has_comm) continue;
    const core::Duration d = b.collectives.tp_time(seg.op, group, seg.bytes > 0 ? seg.bytes : b.in.tp_bytes);
    if (seg.overlap_ps > 0) {
      const double hidden = static_cast<double>(seg.overlap_ps) + static_cast<double>(d.ps) * x / (1 + x);
      out.compute_ps += times * std::max(d.ps, static_cast<std::int64_t>(hidden));
    } else {
      out.tp.ps += times * d.ps;
    }
  }
}

}  // namespace

FusedPass fused_pass(Build& b, PassKind kind, int vstage, const std::vector<int>& tp_group) {
  FusedPass out;
  const int n = b.in.layers_of_vstage[vstage];
  const bool ends = !b.in.opt.hooks.skip_embedding_and_head;
  const bool first = ends && vstage == 0, last = ends && vstage == b.in.grid.pp() * b.in.schedule.chunks - 1;
  if (kind == PassKind::weight) {
    out.compute_ps = b.in.sum_layers(b.in.first_layer_of_vstage[vstage], n, &LayerCost::weight_ps) + (first ? b.in.embedding.weight_ps : 0) + (last ? b.in.logits.weight_ps : 0);
    return out;
  }
  const bool fwd = kind == PassKind::forward;
  // Each kind of layer the chunk holds, as many times as it holds it (the sum does not depend on
  // their order).
  std::vector<std::int64_t> count(b.in.layer_kinds.size(), 0);
  for (int l = b.in.first_layer_of_vstage[vstage]; l < b.in.first_layer_of_vstage[vstage] + n; ++l)
    ++count[static_cast<std::size_t>(b.in.kind_of_layer[static_cast<std::size_t>(l)])];
  for (std::size_t k = 0; k < count.size(); ++k)
    if (count[k] > 0) add_segments(b, fwd ? b.in.layer_kinds[k].fwd : b.in.layer_kinds[k].bwd, count[k], tp_group, out);
  if (first) add_segments(b, fwd ? b.in.embedding.fwd : b.in.embedding.bwd, 1, tp_group, out);
  if (last) add_segments(b, fwd ? b.in.logits.fwd : b.in.logits.bwd, 1, tp_group, out);
  return out;
}

}  // namespace stepsim::plan
