#include "sim/plan/plan_inputs.hpp"

#include <algorithm>
#include <cmath>

namespace stepsim::plan {
namespace {

bool use_symmetric(const Scenario& sc, const SimOptions& opt) {
  if (opt.fidelity == Fidelity::full) return false;
  if (opt.fidelity == Fidelity::symmetric) {
    if (!sc.faults.empty())
      throw config::ConfigError({sc.file, 0, 0}, "faults",
                                "symmetric fidelity needs interchangeable ranks; faults break that (use --fidelity full)");
    return true;
  }
  return sc.faults.empty() && sc.cluster.gpu_count() > kSymmetricAboveGpus;
}

bool tp_within_servers(const Scenario& sc, const RankGrid& grid) {
  for (int r = 0; r < grid.size(); ++r)
    for (int g : grid.tp_group(r))
      if (sc.cluster.server_of(g) != sc.cluster.server_of(r)) return false;
  return true;
}

// Layers per virtual stage: L / (p·v), the remainder going one each to the earliest (uneven
// splits are allowed and reported per rank); or the strategy's first and last stage layers with
// the rest split evenly between them (check_stage_layers holds it divisible; v = 1 there); or,
// with the embedding and the loss counted as layers, (L + 2) / (p·v) less one on the first and
// the last virtual stage (Megatron-Core transformer_block.py get_num_layers_to_build;
// check_stage_layers holds it divisible).
int stage_layer_count(const Strategy& st, int u, int n, int layers) {
  const int first = st.first_stage_layers, last = st.last_stage_layers;
  if (st.split_counts_embedding || st.split_counts_loss) {
    const int embedding = st.split_counts_embedding ? 1 : 0, loss = st.split_counts_loss ? 1 : 0;
    return (layers + embedding + loss) / n - (u == 0 ? embedding : 0) - (u == n - 1 ? loss : 0);
  }
  if (first == 0 && last == 0) return layers / n + (u < layers % n ? 1 : 0);
  if (u == 0 && first > 0) return first;
  if (u == n - 1 && last > 0) return last;
  return (layers - first - last) / (n - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0));
}

void split_layers(PlanInputs& in) {
  const int n = in.grid.pp() * in.schedule.chunks, layers = in.sc.model.layers;
  for (int u = 0, first = 0; u < n; ++u) {
    const int count = stage_layer_count(in.st, u, n, layers);
    in.layers_of_vstage.push_back(count);
    in.first_layer_of_vstage.push_back(first);
    first += count;
  }
  in.stage_params.assign(in.grid.pp(), 0);
  in.stage_expert_params.assign(in.grid.pp(), 0);
  in.stage_fp8_params.assign(in.grid.pp(), 0);
  in.stage_fp8_cast_ps.assign(in.grid.pp(), 0);
  for (int u = 0; u < n; ++u) {
    const int first = in.first_layer_of_vstage[u], count = in.layers_of_vstage[u];
    std::int64_t p = in.sum_layers(first, count, &LayerCost::params);
    // The head's own (multi-token prediction's layers included) on the last virtual stage.
    const bool head = u == n - 1 && !in.opt.hooks.skip_embedding_and_head;
    if (!in.opt.hooks.skip_embedding_and_head) {
      if (u == 0) p += in.embedding.params;
      if (head) p += in.logits_own_params;
    }
    in.stage_params[u % in.grid.pp()] += p;
    in.stage_expert_params[u % in.grid.pp()] +=
        in.sum_layers(first, count, &LayerCost::expert_params) + (head ? in.logits.expert_params : 0);
    in.stage_fp8_params[u % in.grid.pp()] += in.sum_layers(first, count, &LayerCost::fp8_params) + (head ? in.logits.fp8_params : 0);
    in.stage_fp8_cast_ps[u % in.grid.pp()] +=
        in.sum_layers(first, count, &LayerCost::fp8_cast_ps) + (head ? in.logits.fp8_cast_ps : 0);
  }
}

// Multi-token prediction (models::ModelSpec::mtp_layers) runs on the last stage after the main
// head, as Megatron-Core places its MTP block in post_process (gpt_model.py): each depth's own ops,
// a layer of the last layer's kind, and the output head and loss again, with the head's weights.
// The embedding table it reads is the first stage's; with pp > 1 and untied embeddings the last
// stage holds a copy of its own (gpt_model.py builds the embedding where pre_process or
// mtp_process), reduced with the first stage's as a tied embedding is (task_builder_dp.cpp).
void add_multi_token_prediction(PlanInputs& in) {
  const models::ModelSpec& m = in.sc.model;
  if (in.mtp_layers == 0) return;
  // The depth's head: its own final norm (MultiTokenPredictionLayer.final_layernorm), then the
  // model's output layer, whose weights are the main head's.
  LayerCost head = in.logits;
  head.params = models::norm_params(m);
  head.op_params = {head.params};
  head.param_tensors = static_cast<int>(head.params / m.hidden);  // a LayerNorm's bias too
  head.expert_params = head.fp8_params = 0;
  const LayerCost input = mtp_input_cost(in.cost_in);
  for (int depth = 0; depth < in.mtp_layers; ++depth) {
    append(in.logits, input);
    append(in.logits, in.layer(m.layers - 1));
    append(in.logits, head);
  }
  if (in.grid.pp() > 1 && !m.tied_embeddings) {
    const std::int64_t table = m.vocab / in.st.tp * m.hidden;
    in.logits.params += table;
    in.logits.op_params.push_back(table);
    in.logits.param_tensors += 1;
  }
}

// One LayerCost per distinct layer shape: the layers differ only where the model says so (a
// local-attention layer's window, a MoE model's dense layers).
void cost_layers(PlanInputs& in) {
  std::vector<models::LayerShape> shapes;
  for (int l = 0; l < in.sc.model.layers; ++l) {
    CostInputs layer_in = in.cost_in;
    const std::int64_t window = models::attention_window(in.sc.model, l);
    layer_in.shape.attention_window = window < layer_in.shape.seq ? window : 0;
    layer_in.shape.dense_mlp = in.sc.model.moe.enabled() && !models::is_moe_layer(in.sc.model, l);
    const auto kind = static_cast<std::size_t>(std::find(shapes.begin(), shapes.end(), layer_in.shape) - shapes.begin());
    if (kind == shapes.size()) {
      shapes.push_back(layer_in.shape);
      in.layer_kinds.push_back(layer_cost(layer_in));
    }
    in.kind_of_layer.push_back(static_cast<int>(kind));
  }
}

// Bytes per element of the gradients a kernel of their own adds each microbatch's into
// (Strategy::grad_accumulation), 0 where none runs. Only where whole gradients are kept across
// microbatches: not where each microbatch's are reduce-scattered and dropped (ZeRO-2, ZeRO-3 and
// FSDP unless it defers the reduction), whose shards take 1/dp of the adds and are not costed.
// Megatron's main_grad is fp32 for bf16 (arguments.py forces accumulate_allreduce_grads_in_fp32)
// unless --grad-reduce-in-bf16; FSDP accumulates in its reduce dtype
// (FSDPParam.to_accumulated_grad_if_needed); autograd in the 16-bit gradient's own.
int accumulate_kept_bytes(const Scenario& sc, const Strategy& st) {
  const bool dropped = st.shards_parameters() ? !st.fsdp_defers_gradient_reduction() : st.effective_zero_stage() == 2;
  if (dropped) return 0;
  switch (st.grad_accumulation) {
    case GradAccumulation::fused: return 0;
    case GradAccumulation::main_grad: return precision_of(sc.training, st) != Precision::fp16 && !st.grad_reduce_in_bf16 ? 4 : 2;
    case GradAccumulation::autograd: return st.framework == Framework::fsdp && st.fsdp_reduce_fp32 ? 4 : 2;
  }
  return 0;
}

// DeepSpeed with bf16 and fp32 gradient accumulation runs BF16_Optimizer below ZeRO-2
// (PlanInputs::bf16_optimizer; engine.py _do_optimizer_sanity_check: without ZeRO always, at ZeRO-1
// where data_types.grad_accum_dtype is fp32 and the optimizer is not offloaded). FP8 under
// DeepSpeed (Transformer Engine) keeps bf16 enabled, so it takes the same optimizer.
bool runs_bf16_optimizer(const Scenario& sc, const Strategy& st) {
  if (st.framework != Framework::deepspeed || precision_of(sc.training, st) == Precision::fp16) return false;
  const int stage = st.effective_zero_stage();
  const bool fp32_accumulation = st.deepspeed_fp32_accumulation.value_or(stage == 0);
  return fp32_accumulation && (stage == 0 || (stage == 1 && !st.offload_optimizer));
}

// Bytes per gradient element of the DP reduction (PlanInputs::grad_bytes). Megatron-LM (generic's
// DP) forces fp32 accumulation and all-reduce for bf16 (arguments.py: "bfloat16 requires gradient
// accumulation and all-reduce to be done in fp32"), with no flag to turn it off; Megatron-Core keeps
// that default behind --grad-reduce-in-bf16. FP8 training keeps bf16 parameters. A generic ZeRO-3
// plan gathers and reduces as FSDP does, in the parameters' dtype.
int reduced_gradient_bytes(const Scenario& sc, const Strategy& st) {
  const bool bf16_parameters = precision_of(sc.training, st) != Precision::fp16;
  const bool fp32 = (st.framework == Framework::megatron_core && !st.grad_reduce_in_bf16 && bf16_parameters) ||
                    (st.framework == Framework::generic && !st.shards_parameters() && bf16_parameters) ||
                    (st.framework == Framework::fsdp && st.fsdp_reduce_fp32);
  return fp32 ? 4 : 2;
}

// The dtype gradients are held in (PlanInputs::held_gradients). Megatron-LM and Megatron-Core
// hold them at the dtype they reduce them in: the main_grad buffer is fp32 for bf16 unless
// Megatron-Core's --grad-reduce-in-bf16 (distributed.DistributedDataParallel). FSDP's fp32 reduce
// keeps fp32 gradient shards beside fp32 parameter shards that are Adam's master copy: 4 + 4 + 8
// bytes, the same 16 per parameter as the 2 + 2 + 12 counted. DeepSpeed's BF16_Optimizer keeps
// the bf16 .grad beside its full fp32 copy: 6 bytes.
models::GradPrecision held_gradient_precision(const Strategy& st, int grad_bytes, bool bf16_optimizer) {
  if (bf16_optimizer) return models::GradPrecision::bf16_and_fp32;
  if (grad_bytes == 4 && st.framework != Framework::fsdp) return models::GradPrecision::fp32;
  return models::GradPrecision::bf16;
}

}  // namespace

PlanInputs make_inputs(const Scenario& sc, const Strategy& strategy, const SimOptions& opt) {
  Strategy st = check_strategy(sc, strategy);
  const bool bf16_optimizer = runs_bf16_optimizer(sc, st);
  if (bf16_optimizer) {
    st.distributed_optimizer = true;
    st.grad_accumulation = GradAccumulation::main_grad;
  }
  PlanInputs in{.sc = sc,
                .st = st,
                .opt = opt,
                .grid = RankGrid(st.tp, st.pp, st.dp, st.rank_order, st.cp),
                .schedule = make_schedule(st.schedule, st.pp, microbatches(sc, st), st.v)};
  in.bf16_optimizer = bf16_optimizer;
  in.symmetric = use_symmetric(sc, opt);
  in.large_cluster = sc.cluster.gpu_count() > kSymmetricAboveGpus;
  // Fused passes time only TP collectives; a MoE layer's all-to-all and ring attention's K/V
  // exchange keep their segments.
  in.fused = in.large_cluster && !st.shards_parameters() && st.ep == 1 && st.cp == 1 && tp_within_servers(sc, in.grid);
  in.cost_in = cost_inputs(sc, st);
  if (st.ep > 1) {  // every EP group has the same shape: rank 0's says how many servers it spans
    std::vector<int> servers;
    for (int g : st.folds_experts_over_tp() ? in.grid.folded_ep_group(0, st.ep) : in.grid.ep_group(0, st.ep))
      if (std::find(servers.begin(), servers.end(), sc.cluster.server_of(g)) == servers.end())
        servers.push_back(sc.cluster.server_of(g));
    in.cost_in.ep_servers = static_cast<int>(servers.size());
  }
  if (opt.hooks.instant_host) in.cost_in.host_call_ps = 0;
  in.cost_in.accumulate_kept_bytes = accumulate_kept_bytes(sc, st);
  in.cost_in.accumulate_casts = bf16_optimizer;
  cost_layers(in);
  in.embedding = embedding_cost(in.cost_in);
  in.logits = logits_cost(in.cost_in);
  in.mtp_layers = st.mtp_layers.value_or(sc.model.mtp_layers);
  add_multi_token_prediction(in);
  const bool shares_table = sc.model.tied_embeddings && st.pp == 1;
  in.logits_own_params = in.logits.params - (shares_table ? sc.model.vocab / st.tp * sc.model.hidden : 0);
  // One add per parameter tensor the last stage holds: a table shared with the embedding is the
  // embedding's one tensor (its two gradients meet before they are accumulated), and each
  // multi-token-prediction head's output layer is the main head's.
  in.logits.accumulate = accumulation_segments(in.cost_in, in.logits_own_params, in.logits.param_tensors - (shares_table ? 1 : 0));
  in.tp_bytes = plan::tp_bytes(in.cost_in);
  in.pp_bytes = in.cost_in.shape.sequence_parallel ? in.tp_bytes / st.tp : in.tp_bytes;
  in.grad_bytes = reduced_gradient_bytes(sc, st);
  in.held_gradients = held_gradient_precision(st, in.grad_bytes, bf16_optimizer);
  in.shard_degree = st.fsdp_shard_degree > 0 ? st.fsdp_shard_degree : st.dp * st.cp;
  if (st.framework == Framework::megatron_core) in.passes_sync_device = st.pp > 1 && st.schedule != ScheduleKind::interleaved;
  split_layers(in);
  return in;
}

std::int64_t fp8_weight_cast_ps(const PlanInputs& in, int stage) {
  const auto params = static_cast<double>(in.stage_fp8_params[static_cast<std::size_t>(stage)]);
  if (params <= 0) return 0;
  const auto& gpu = in.sc.cluster.gpu;
  const double casts = in.st.shards_parameters() ? in.schedule.microbatches : 1;
  // Read the 16-bit weight, write its FP8 copy (e + 1 bytes) and, where the GPU needs it, the
  // transpose (1 more). FP8 parameters (fp8_param_gather) come out of the optimizer in FP8 already
  // (its 16-bit write becomes a 1-byte one): only the transpose remains, read 1 and write 1.
  const bool transposes = in.cost_in.shape.fp8_transposes;
  const double per_param = in.st.fp8_param_gather ? (transposes ? 2 : 0)
                                                  : in.cost_in.shape.bytes_per_element + 1 + (transposes ? 1 : 0);
  const double bytes = casts * params * per_param;
  return static_cast<std::int64_t>(std::ceil(bytes / (gpu.memory_bytes_per_s * gpu.memory_efficiency) * 1e12));
}

}  // namespace stepsim::plan
