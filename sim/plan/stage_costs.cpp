#include "sim/plan/stage_costs.hpp"

#include <algorithm>
#include <string>

#include "models/compute_time.hpp"

namespace stepsim::plan {
namespace {

using models::OpCost;

constexpr std::size_t kNoOp = static_cast<std::size_t>(-1);

// A communication point after op `after` (index): what it does in forward and in backward, and
// under TP communication overlap the op whose GEMM runs beside it (fwd_beside: its forward;
// bwd_beside: its input-gradient GEMM).
struct CommPoint {
  std::size_t after = 0;
  bool fwd = false, bwd = false;
  comm::Op fwd_op = comm::Op::all_reduce, bwd_op = comm::Op::all_reduce;
  std::size_t fwd_beside = kNoOp, bwd_beside = kNoOp;
  LayerGroup group = LayerGroup::tp;
  std::int64_t bytes = 0;  ///< 0: the TP payload
};

// Marks the segment that ends at point `p` as ending in p's collective.
void close_with(Segment& seg, const CommPoint& p, comm::Op op) {
  seg.has_comm = true;
  seg.op = op;
  seg.group = p.group;
  seg.bytes = p.bytes;
}

std::size_t index_of(const std::vector<OpCost>& ops, const std::string& name) {
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].name == name) return i;
  return ops.size();
}

// Before op i (an "f"/all-gather point) and after op j (a "g"/reduce point). With TP
// communication overlap (TransformerEngine userbuffers, which need SP): the all-gather before a
// column-parallel GEMM runs beside that GEMM (ring exchange of chunks), the reduce-scatter after a
// row-parallel GEMM beside it (its chunks reduce as they finish), and in backward the all-gather
// of the gradient beside the row-parallel GEMM's input-gradient GEMM; the backward reduce-scatter
// runs beside the weight-gradient GEMM as without it (tp_overlap). Defaults of TE's initialize_ub
// (transformer_engine/pytorch/module/base.py): ring exchange for qkv/fc1 forward and proj/fc2
// input gradient, a 4-chunk pipeline for proj/fc2 forward, bulk for the backward's rest. Not
// modelled: the pipeline's last chunk of reduce-scatter, exposed after the GEMM (NeMo's
// communication-overlap guide), and the ring's first step.
// `before_bytes`: the first point's payload where it is not the TP one (latent attention's latents).
void add_pair(std::vector<CommPoint>& out, std::size_t before, std::size_t after, bool sp, bool comm_overlap,
              std::int64_t before_bytes = 0) {
  using comm::Op;
  if (sp) {
    out.push_back({before - 1, true, true, Op::all_gather, Op::reduce_scatter});
    out.back().bytes = before_bytes;
    out.push_back({after, true, true, Op::reduce_scatter, Op::all_gather});
    if (comm_overlap) {
      out[out.size() - 2].fwd_beside = before;
      out.back().fwd_beside = after;
      out.back().bwd_beside = after;
    }
  } else {
    out.push_back({before - 1, false, true, Op::all_reduce, Op::all_reduce});
    out.back().bytes = before_bytes;
    out.push_back({after, true, false, Op::all_reduce, Op::all_reduce});
  }
}

// A MoE layer under expert parallelism (MoEAlltoAllTokenDispatcher): the dispatch all-to-all
// after the permute, then (TP, which needs SP) the all-gather of what arrived; the reduce-scatter
// after the experts, then the combine all-to-all. The shared expert runs on the rank's own tokens
// between a TP pair of its own.
void add_expert_parallel_points(std::vector<CommPoint>& points, const std::vector<OpCost>& ops, const CostInputs& in) {
  const std::int64_t bytes = models::moe_dispatch_bytes(*in.model, in.shape);
  const CommPoint all_to_all{.fwd = true, .bwd = true, .fwd_op = comm::Op::all_to_all, .bwd_op = comm::Op::all_to_all,
                             .group = LayerGroup::ep, .bytes = bytes};
  // DeepEP across servers (DeepSeek-V3 report §3.2.2; deepseek-ai/DeepEP's internode kernels): a
  // token goes once to each other server holding any of its experts, to the GPU of its own local
  // index (an all-to-all over that rail: S chunks of its tokens × moe_server_share each), then
  // over NVLink to the GPUs holding its experts there (the k copies, within the server).
  const bool two_part = in.moe_deepep && in.ep_servers > 1;
  const double rail_copies = in.ep_servers * models::moe_server_share(*in.model, in.ep_servers);
  const double k = in.model->moe.top_k;
  CommPoint rail = all_to_all, server = all_to_all;
  rail.group = LayerGroup::ep_rail;
  rail.bytes = static_cast<std::int64_t>(static_cast<double>(bytes) * rail_copies / k);
  server.group = LayerGroup::ep_server;
  auto exchange = [&](std::size_t after, bool dispatch) {
    if (!two_part) {
      CommPoint p = all_to_all;
      p.after = after;
      points.push_back(p);
      return;
    }
    rail.after = server.after = after;
    points.push_back(dispatch ? rail : server);
    points.push_back(dispatch ? server : rail);
  };
  const bool tp = in.shape.tp > 1;
  if (tp && in.model->moe.shared_ffn > 0) {
    const std::size_t last_shared = in.model->moe.shared_gate ? index_of(ops, "shared_gate") : index_of(ops, "shared_down");
    add_pair(points, index_of(ops, "shared_up"), last_shared, true, false);
  }
  exchange(index_of(ops, "moe_permute"), true);
  // Whole experts (etp 1) need no TP collective around them: each rank keeps its own tokens.
  if (tp && in.shape.etp > 1) add_pair(points, index_of(ops, "expert_up"), index_of(ops, "expert_down"), true, false);
  exchange(index_of(ops, "expert_down"), false);
}

// Ring attention under context parallelism (TransformerEngine's AttnFuncWithCPAndKVP2P,
// transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py): the attention
// runs as cp blocks, one per K/V chunk. Forward, step j sends the chunk it holds to the next rank
// while computing block j (cp − 1 exchanges; the last block waits for the last one). Backward,
// step i sends beside block i's gradient the K/V the next step needs and the dK/dV accumulated so
// far: K/V alone first, both in the middle, dK/dV alone last (cp exchanges, 2(cp − 1) chunks).
// comm's send_recv between 2 ranks moves one way; the other direction uses the reverse of the
// same links, which carry each direction separately, so the time is the same.
void add_ring_attention_points(std::vector<CommPoint>& points, const std::vector<OpCost>& ops, const CostInputs& in) {
  const std::int64_t kv = models::cp_kv_bytes(*in.model, in.shape);
  const int cp = in.shape.cp;
  std::size_t first = 0;
  while (first < ops.size() && ops[first].kind != models::OpKind::flash_attention &&
         ops[first].kind != models::OpKind::cudnn_attention)
    ++first;
  const CommPoint exchange{.fwd_op = comm::Op::send_recv, .bwd_op = comm::Op::send_recv, .group = LayerGroup::cp, .bytes = kv};
  for (int j = 0; j + 1 < cp; ++j) {
    CommPoint p = exchange;
    p.after = first + j - 1;
    p.fwd = true;
    p.fwd_beside = first + j;
    points.push_back(p);
  }
  for (int k = 0; k < cp; ++k) {
    CommPoint p = exchange;
    p.after = first + k;
    p.bwd = true;
    p.bwd_beside = first + k;
    p.bytes = k == 0 || k == cp - 1 ? kv : 2 * kv;
    points.push_back(p);
  }
}

// Host time per op: its forward calls and its backward autograd nodes (one per kernel).
struct HostTime {
  std::int64_t fwd_ps = 0, bwd_ps = 0;
};

std::vector<Segment> forward_segments(const std::vector<models::OpTime>& t, const std::vector<HostTime>& host,
                                      const std::vector<CommPoint>& points) {
  std::vector<Segment> out(1);
  for (std::size_t i = 0; i < t.size(); ++i) {
    std::size_t into = out.size() - 1;
    bool beside = false;
    for (const auto& p : points)
      if (p.fwd && p.fwd_beside == i) {
        beside = true;
        if (p.after + 1 == i) into = out.size() - 2;  // beside the collective just before it
      }
    (beside ? out[into].overlap_ps : out.back().compute_ps) += t[i].fwd_ps;
    out.back().host_ps += host[i].fwd_ps;
    for (const auto& p : points)
      if (p.after == i && p.fwd) {
        close_with(out.back(), p, p.fwd_op);
        out.emplace_back();
      }
  }
  return out;
}

std::vector<Segment> backward_segments(const std::vector<models::OpTime>& t, const std::vector<HostTime>& host,
                                       const std::vector<CommPoint>& points, bool split_weight, bool full_recompute,
                                       bool tp_overlap) {
  std::vector<Segment> out(1);
  for (std::size_t k = t.size(); k-- > 0;) {
    bool input_beside = false;  // op k's input-gradient GEMM runs beside the collective before it
    bool closed_here = false;   // a point after op k closed a segment: the next one there may be empty
    // Points after the same op run in reverse in backward (an all-to-all then a TP gather
    // forward: the TP reduce-scatter, then the all-to-all).
    for (auto it = points.rbegin(); it != points.rend(); ++it)
      if (const CommPoint& p = *it;
          p.after == k && p.bwd && (out.back().compute_ps > 0 || closed_here || p.bwd_beside == k)) {
        // Only the first collective after op k has the next op's weight-gradient GEMM to run
        // beside, and only a TP one (Megatron's async TP reduction); an all-to-all blocks.
        const bool first_here = !closed_here;
        closed_here = true;
        close_with(out.back(), p, p.bwd_op);
        if (first_here && p.group == LayerGroup::tp && tp_overlap && !split_weight && k + 1 < t.size()) {
          out.back().overlap_ps = t[k + 1].bwd_weight_ps;
          out.back().compute_ps -= t[k + 1].bwd_weight_ps;
        }
        if (p.bwd_beside == k) {
          out.back().overlap_ps += t[k].bwd_input_ps;
          input_beside = true;
        }
        out.emplace_back();
      }
    out.back().compute_ps += (input_beside ? 0 : t[k].bwd_input_ps) + (split_weight ? 0 : t[k].bwd_weight_ps) +
                             (full_recompute ? 0 : t[k].recompute_ps);
    // A re-run op's forward calls are all made again, a partly re-run one's too: torch's
    // checkpointing replays the block's Python and hands back the outputs its policy saved.
    out.back().host_ps += host[k].bwd_ps + (full_recompute || t[k].recompute_ps == 0 ? 0 : host[k].fwd_ps);
  }
  return out;
}

// The ops after the last communication point (the closing residual add, the first norm's
// backward) join the first segment: one task fewer per layer, the same total time.
std::vector<Segment> fold_tail(std::vector<Segment> segs) {
  if (segs.size() > 1 && !segs.back().has_comm) {
    segs.front().compute_ps += segs.back().compute_ps;
    segs.front().host_ps += segs.back().host_ps;
    segs.pop_back();
  }
  return segs;
}

LayerCost cost_of(const std::vector<OpCost>& ops, const std::vector<CommPoint>& points, const CostInputs& in) {
  std::vector<models::OpTime> times;
  std::vector<HostTime> host;
  LayerCost c;
  const bool full = in.shape.recompute == models::Recompute::full;
  for (const auto& op : ops) {
    times.push_back(models::time_op(op, *in.gpu, in.dtype));
    host.push_back({op.fwd_host_calls * in.host_call_ps, op.bwd_kernels * in.host_call_ps});
    c.weight_ps += times.back().bwd_weight_ps;
    c.stored_activation_bytes += op.activation_bytes;
    c.params += op.params;
    if (op.expert) c.expert_params += op.params;
    if (op.params > 0) c.op_params.push_back(op.params);
    c.param_tensors += op.param_tensors;
    if (op.fp8) c.fp8_params += op.params;
    if (op.fp8_cast) c.fp8_cast_ps += times.back().fwd_ps + times.back().bwd_ps();
    c.fwd_flops += op.fwd_flops;
    c.bwd_flops += op.bwd_input_flops + op.bwd_weight_flops;
    if (op.recompute) c.recompute_flops += op.fwd_flops * op.recompute_share;
  }
  c.fwd = fold_tail(forward_segments(times, host, points));
  if (full) {
    for (const Segment& s : c.fwd) {
      Segment again = s;
      again.recompute = true;
      c.bwd.push_back(again);
    }
  }
  for (const Segment& s : fold_tail(backward_segments(times, host, points, in.split_weight, full, in.tp_overlap)))
    c.bwd.push_back(s);
  if (!in.split_weight) c.weight_ps = 0;
  c.accumulate = accumulation_segments(in, c.params, c.param_tensors);
  return c;
}

}  // namespace

std::vector<Segment> accumulation_segments(const CostInputs& in, std::int64_t params, int tensors) {
  if (in.accumulate_kept_bytes <= 0 || params <= 0) return {};
  const auto op = models::gradient_accumulation_op(params, tensors, in.shape.bytes_per_element, in.accumulate_kept_bytes,
                                                   in.accumulate_casts);
  Segment add;
  add.compute_ps = models::time_op(op, *in.gpu, in.dtype).bwd_ps();
  add.host_ps = op.bwd_kernels * in.host_call_ps;
  return {add};
}

CostInputs cost_inputs(const Scenario& sc, const Strategy& s) {
  CostInputs in;
  in.model = &sc.model;
  in.gpu = &sc.cluster.gpu;
  in.dtype = dtype_of(precision_of(sc.training, s));
  in.shape.micro_batch = s.micro_batch;
  in.shape.seq = sc.training.seq_len;
  in.shape.tp = s.tp;
  in.shape.ep = s.ep;
  in.shape.etp = s.expert_tp();
  in.shape.cp = s.cp;
  in.shape.sequence_parallel = s.sequence_parallel && s.tp > 1;
  in.shape.recompute = s.recompute;
  in.shape.recompute_modules = s.recompute_modules;
  in.shape.eager = s.eager_ops;
  in.shape.selective_policy = s.selective_policy;
  in.shape.flash_attention = s.flash_attention;
  in.shape.fp8 = fp8_recipe_of(sc.training, s);
  in.shape.fp8_transposes = sc.cluster.gpu.fp8_transposes;
  // TransformerEngine, which Megatron-Core runs by default, prefers cuDNN's fused attention on
  // Hopper and later ("Disabling FlashAttention to give FusedAttention preference on Hopper+":
  // transformer_engine/pytorch/attention get_attention_backend); the GPU's figures say where.
  in.shape.cudnn_attention = s.framework == Framework::megatron_core && s.flash_attention;
  in.split_weight = s.schedule == ScheduleKind::zb_h1;
  in.tp_overlap = s.tp_overlap;
  in.tp_comm_overlap = s.tp_comm_overlap;
  in.moe_deepep = s.moe_deepep;
  in.host_call_ps = sc.cluster.comm.host_call_overhead_ps;
  return in;
}

LayerCost layer_cost(const CostInputs& in) {
  const auto ops = models::layer_ops(*in.model, in.shape);
  const bool moe = in.model->moe.enabled() && !in.shape.dense_mlp;
  std::vector<CommPoint> points;
  if (in.shape.tp > 1) {
    if (in.model->mla.enabled())
      // Latent attention's TP collective sits between the down projections (duplicated) and the
      // column-parallel up projections, on the latents (models::mla_latent_bytes).
      add_pair(points, std::min(index_of(ops, "q_up"), index_of(ops, "q_proj")), index_of(ops, "out_proj"),
               in.shape.sequence_parallel, in.tp_comm_overlap, models::mla_latent_bytes(*in.model, in.shape));
    else
      add_pair(points, index_of(ops, "qkv"), index_of(ops, "out_proj"), in.shape.sequence_parallel, in.tp_comm_overlap);
    if (moe && in.shape.ep == 1)
      // Megatron-Core's AllGather token dispatcher gathers the tokens after the router has scored
      // its own and reduce-scatters (SP) or all-reduces the combined output; TransformerEngine's
      // userbuffer overlap does not cover the dispatcher (megatron/core/transformer/moe/token_dispatcher.py).
      add_pair(points, index_of(ops, "router_topk") + 1, index_of(ops, "moe_unpermute"), in.shape.sequence_parallel, false);
    else if (!moe)
      add_pair(points, index_of(ops, "mlp_up"), index_of(ops, "mlp_down"), in.shape.sequence_parallel, in.tp_comm_overlap);
  }
  if (moe && in.shape.ep > 1) add_expert_parallel_points(points, ops, in);
  if (in.shape.cp > 1) add_ring_attention_points(points, ops, in);
  LayerCost c = cost_of(ops, points, in);
  if (in.shape.recompute != models::Recompute::none) {
    // What backward re-creates for one layer at a time (Korthikanti et al. 2022 §5): the
    // difference between the no-recompute activations and the ones kept.
    models::LayerShape plain = in.shape;
    plain.recompute = models::Recompute::none;
    c.transient_bytes = models::sum_ops(models::layer_ops(*in.model, plain)).activation_bytes - c.stored_activation_bytes;
  }
  return c;
}

namespace {

// A vocab-parallel embedding lookup at op 0: each rank holds V/t rows, so the looked-up rows are
// summed over TP (reduce-scattered along the sequence under SP, whose backward gathers them).
std::vector<CommPoint> lookup_points(const CostInputs& in) {
  if (in.shape.tp == 1) return {};
  const bool sp = in.shape.sequence_parallel;
  return {{0, true, sp, sp ? comm::Op::reduce_scatter : comm::Op::all_reduce, comm::Op::all_gather}};
}

}  // namespace

// Vocab-parallel embedding: its output is reduced over TP (reduce-scatter with SP); in backward
// only SP needs the gradient gathered back.
LayerCost embedding_cost(const CostInputs& in) {
  return cost_of(models::embedding_ops(*in.model, in.shape), lookup_points(in), in);
}

// Final norm, then the f operator before the (column-parallel) logits GEMM. Megatron-Core's
// output layer is its own ColumnParallelLinear, not a TransformerEngine module
// (megatron/core/models/gpt/gpt_model.py), so its all-gather blocks even with TP comm overlap.
LayerCost logits_cost(const CostInputs& in) {
  const auto ops = models::logits_ops(*in.model, in.shape);
  std::vector<CommPoint> points;
  if (in.shape.tp > 1) add_pair(points, index_of(ops, "logits"), ops.size(), in.shape.sequence_parallel, false);
  // add_pair adds a reduce point after the last op; the loss needs no such reduce of h-wide data.
  if (!points.empty()) points.pop_back();
  return cost_of(ops, points, in);
}

// One multi-token-prediction depth's own ops (models::mtp_input_ops). The next tokens' lookup
// reduces over TP as the embedding's does; eh_proj is a column-parallel linear (add_pair's
// collective before it, of its 2h-wide input) whose output Megatron-Core then gathers back to h
// (multi_token_prediction.py: gather_from_tensor_model_parallel_region, an all-gather whose
// backward is a split; under SP the scatter to the sequence after it gathers in backward).
LayerCost mtp_input_cost(const CostInputs& in) {
  const auto ops = models::mtp_input_ops(*in.model, in.shape);
  std::vector<CommPoint> points = lookup_points(in);
  const std::size_t proj = index_of(ops, "mtp_eh_proj");
  if (in.shape.tp > 1) {
    add_pair(points, proj, proj, in.shape.sequence_parallel, false, 2 * tp_bytes(in));
    points.back().fwd_op = comm::Op::all_gather;
  }
  return cost_of(ops, points, in);
}

void append(LayerCost& into, const LayerCost& next) {
  into.fwd.insert(into.fwd.end(), next.fwd.begin(), next.fwd.end());
  into.bwd.insert(into.bwd.begin(), next.bwd.begin(), next.bwd.end());
  into.weight_ps += next.weight_ps;
  into.stored_activation_bytes += next.stored_activation_bytes;
  into.transient_bytes = std::max(into.transient_bytes, next.transient_bytes);
  into.params += next.params;
  into.expert_params += next.expert_params;
  into.op_params.insert(into.op_params.end(), next.op_params.begin(), next.op_params.end());
  into.param_tensors += next.param_tensors;
  into.fp8_params += next.fp8_params;
  into.fp8_cast_ps += next.fp8_cast_ps;
  into.fwd_flops += next.fwd_flops;
  into.bwd_flops += next.bwd_flops;
  into.recompute_flops += next.recompute_flops;
}

std::int64_t tp_bytes(const CostInputs& in) {
  return in.shape.micro_batch * in.shape.seq / in.shape.cp * in.model->hidden * 2;
}

}  // namespace stepsim::plan
