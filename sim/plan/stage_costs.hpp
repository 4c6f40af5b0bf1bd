// The per-rank work of one microbatch through one transformer layer (and the embedding and the
// logits head), cut at the points where Megatron-LM's tensor parallelism communicates. This is
// where models/ (op FLOPs, bytes, activations, times on a GpuSpec) meets the task builder.
//
// Fusion: consecutive ops between two communication points become ONE compute task whose time is
// the sum of their times (models::time_op, launch overheads included). The simulated timeline
// keeps every communication point, so this loses nothing the step time depends on, and it keeps
// the graph small (4 compute tasks per layer and pass without SP).
//
// Communication points (Megatron-LM, Shoeybi et al. 2019 Fig. 3; Korthikanti et al. 2022 Fig. 5):
//   without SP: the g operator after out_proj and mlp_down all-reduces in forward; the f operator
//   before qkv and mlp_up all-reduces input gradients in backward.
//   with SP: all-gather before qkv and mlp_up (reduce-scatter in backward), reduce-scatter after
//   out_proj and mlp_down (all-gather in backward).
//   MoE layers: the same pair around the experts (after the router: Megatron-Core's AllGather
//   token dispatcher); under expert parallelism an all-to-all over the EP group after the permute
//   and another before the unpermute (MoEAlltoAllTokenDispatcher), each again in backward, with
//   the TP pair inside them and another around the shared expert.
//   Context parallelism: ring attention's K/V exchanges, each beside one attention block.
// Payload (nccl-tests size, the full buffer): b·(s/cp)·h·2 bytes. The residual add and norm that end a
// layer are counted with its first segment, a shift of one small memory-bound op.
// Backward overlap (Megatron-LM --async-tensor-model-parallel-allreduce, on by default since 2021;
// with SP the reduce-scatter likewise): the input-gradient collective after qkv and mlp_up runs
// beside their weight-gradient GEMM (Segment::overlap_ps), unless the schedule splits W off.
// Megatron-Core --tp-comm-overlap: every SP collective beside the GEMM next to it (add_pair).
#pragma once

#include <cstdint>
#include <vector>

#include "models/layer_ops.hpp"
#include "sim/comm/ops.hpp"
#include "sim/plan/scenario.hpp"

namespace stepsim::plan {

/// Which ranks a layer's collective spans: its TP group, its expert-parallel group (a MoE
/// layer's token all-to-all), or its context-parallel group (ring attention's K/V exchange).
/// Under DeepEP an EP group spanning servers exchanges in two parts: ep_rail, its ranks of the
/// same local GPU index (one a server), and ep_server, its ranks in this server.
enum class LayerGroup : std::uint8_t { tp, ep, cp, ep_rail, ep_server };

/// Compute, then (if has_comm) a blocking TP (or EP) collective.
struct Segment {
  std::int64_t compute_ps = 0;
  bool has_comm = false;
  comm::Op op = comm::Op::all_reduce;
  LayerGroup group = LayerGroup::tp;
  std::int64_t bytes = 0;  ///< the collective's payload when not the TP one (tp_bytes)
  bool recompute = false;  ///< a full-recompute forward segment run inside backward
  /// Compute that runs WHILE the collective runs (Megatron-LM's async TP all-reduce: the input
  /// gradient of qkv / mlp_up is reduced while their weight gradient is computed). Not part of
  /// compute_ps.
  std::int64_t overlap_ps = 0;
  /// Host time to issue this segment's kernels and its collective (the framework's CPU thread,
  /// hw::CommParams::host_call_overhead per call).
  std::int64_t host_ps = 0;
};

struct LayerCost {
  std::vector<Segment> fwd;
  std::vector<Segment> bwd;               ///< input gradient (+ weight gradient unless split) + recompute
  std::int64_t weight_ps = 0;             ///< W pass (split schedules)
  std::int64_t stored_activation_bytes = 0;  ///< kept from the end of F to the end of B/W
  std::int64_t transient_bytes = 0;       ///< recomputed activations alive during one layer's backward
  std::int64_t params = 0;                ///< parameters this rank holds
  std::int64_t expert_params = 0;         ///< of params, its routed experts' (reduced over the expert-DP group)
  /// Parameters of each op that has any, in forward order: the submodules whose weights
  /// DeepSpeed's hooks gather one by one (zero3_gathers.hpp).
  std::vector<std::int64_t> op_params;
  int param_tensors = 0;                  ///< tensors its parameters are held in (OpCost::param_tensors)
  std::int64_t fp8_params = 0;            ///< of params, those of GEMMs that run in FP8
  std::int64_t fp8_cast_ps = 0;           ///< FP8 cast and amax kernels per microbatch (forward, recompute, backward)
  /// After its backward, the kernels that add its weight gradients into those kept across the
  /// step (CostInputs::accumulate_kept_bytes): one segment, or none where no kernels run. The
  /// builder runs it in the backward passes where Strategy::grad_accumulation runs them.
  std::vector<Segment> accumulate;
  double fwd_flops = 0, bwd_flops = 0, recompute_flops = 0;  ///< executed, per rank
};

struct CostInputs {
  const models::ModelSpec* model = nullptr;
  const hw::GpuSpec* gpu = nullptr;
  hw::Dtype dtype = hw::Dtype::bf16;
  models::LayerShape shape;
  bool split_weight = false;
  bool tp_overlap = true;  ///< backward TP collective beside the weight-gradient GEMM (Strategy::tp_overlap)
  bool tp_comm_overlap = false;  ///< every SP collective beside its GEMM (Strategy::tp_comm_overlap)
  std::int64_t host_call_ps = 0;  ///< hw::CommParams::host_call_overhead_ps; 0 = no host stream
  bool moe_deepep = false;        ///< Strategy::moe_deepep
  int ep_servers = 1;             ///< servers an expert-parallel group spans (set from the rank grid)
  /// Bytes per element of the gradients kept across microbatches, where a kernel of its own adds
  /// each microbatch's into them (models::gradient_accumulation_op); 0 = none runs.
  int accumulate_kept_bytes = 0;
  /// Each add first casts the new gradient in a kernel of its own (PlanInputs::bf16_optimizer).
  bool accumulate_casts = false;
};

CostInputs cost_inputs(const Scenario& sc, const Strategy& s);
LayerCost layer_cost(const CostInputs& in);
LayerCost embedding_cost(const CostInputs& in);
LayerCost logits_cost(const CostInputs& in);
/// One multi-token-prediction depth's ops before its transformer layer, with their TP collectives.
LayerCost mtp_input_cost(const CostInputs& in);
/// `next` run after `into`: forward segments after into's, backward ones before; sizes add (the
/// larger transient buffer). into.accumulate is left as it was: the adds follow the parameters
/// and tensors the caller ends up holding (accumulation_segments).
void append(LayerCost& into, const LayerCost& next);
/// The accumulation kernels of `params` parameters in `tensors` tensors (LayerCost::accumulate):
/// one segment, or none where in.accumulate_kept_bytes is 0.
std::vector<Segment> accumulation_segments(const CostInputs& in, std::int64_t params, int tensors);
/// Payload of a TP collective: b·(s/cp)·h·2 bytes.
std::int64_t tp_bytes(const CostInputs& in);

}  // namespace stepsim::plan
