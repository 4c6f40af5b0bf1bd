// A parallel strategy: how one training step of a model is split over the GPUs of a cluster.
// Plain data read from a scenario's `strategies:` list (strategy_yaml.cpp) and checked against the
// model and machine by check_strategy (strategy_check.cpp). Field meanings follow Megatron-LM and
// DeepSpeed; defaults are theirs where they have one (cited at the field).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "models/layer_ops.hpp"
#include "models/memory.hpp"
#include "sim/config/config_error.hpp"

namespace stepsim::plan {

enum class ScheduleKind { gpipe, one_f_one_b, interleaved, zb_h1 };
/// The framework that runs the plan, as far as it changes how communication is issued
/// (framework_defaults.hpp). generic: ZeRO-3 as FSDP runs it, one all-gather per transformer block
/// (each block its own wrapped unit), re-gathered once for the block's backward, TP/PP/DP as
/// Megatron-LM; deepspeed: its module hooks, one all-gather per submodule with parameters;
/// megatron_core: Megatron-Core's distributed optimizer, gradient buckets and overlaps; fsdp:
/// PyTorch FSDP (FULL_SHARD, HYBRID_SHARD or SHARD_GRAD_OP, each block wrapped), its all-gathers
/// and reduce-scatters on one NCCL communicator.
enum class Framework { generic, deepspeed, megatron_core, fsdp };
/// FSDP's BackwardPrefetch: the next unit's all-gather issued before the current unit's gradient
/// computation (BACKWARD_PRE, the default), after it (BACKWARD_POST), or not ahead at all.
enum class FsdpPrefetch { backward_pre, backward_post, none };
/// How a microbatch's weight gradients join those kept across the step's microbatches.
enum class GradAccumulation {
  /// Megatron-LM's --gradient-accumulation-fusion (on by default, as in Megatron-Core): the
  /// weight-gradient GEMM adds into the fp32 main_grad itself (apex's fused_weight_gradient_mlp_cuda
  /// wgrad_gemm_accum_fp32): no kernel of its own.
  fused,
  /// Megatron without it (--no-gradient-accumulation-fusion, and the 2020-21 code): after every
  /// weight gradient, on every microbatch, main_grad.add_(grad) (distributed.py _make_param_hook).
  main_grad,
  /// PyTorch's AccumulateGrad: the first microbatch's gradient is kept as it is, each later one
  /// added in place (grad += new), one kernel per parameter tensor.
  autograd,
};
/// The recompute modes are models/'s (Korthikanti et al.): one enum for both layers.
using Recompute = models::Recompute;
/// fp8: Transformer Engine's FP8 training, the layers' linear GEMMs in FP8 and the rest in bf16.
enum class Precision { bf16, fp16, fp8 };
const char* to_string(Precision p);
/// The 16-bit dtype the step's work runs in (bf16 under fp8 training: FP8 GEMMs aside).
hw::Dtype dtype_of(Precision p);

const char* to_string(ScheduleKind s);  ///< "gpipe", "1f1b", "interleaved", "zb-h1"
const char* to_string(Framework f);     ///< "generic", "deepspeed", "megatron-core", "fsdp"
const char* to_string(FsdpPrefetch p);  ///< "backward_pre", "backward_post", "none"
const char* to_string(GradAccumulation a);  ///< "fused", "main_grad", "autograd"
/// The kind whose to_string() is `name`; nullopt for any other text. Readers of YAML and JSON use
/// these, so a name is spelled in one place (to_string).
std::optional<ScheduleKind> schedule_named(std::string_view name);
std::optional<Recompute> recompute_named(std::string_view name);
std::optional<Framework> framework_named(std::string_view name);
std::optional<FsdpPrefetch> fsdp_prefetch_named(std::string_view name);
std::optional<GradAccumulation> grad_accumulation_named(std::string_view name);
/// Why a module Megatron-Core's --recompute-modules accepts is not costed: mlp, shared_experts and
/// moe re-run the communication inside them (TP gathers, the token dispatch), which the plan does
/// not place again. Empty for any other name.
std::string recompute_module_refused(std::string_view name);
/// Every name Megatron-Core's --recompute-modules accepts: the costed ones
/// (models::recompute_module_names) and the refused ones.
const std::vector<std::string>& megatron_recompute_modules();
/// Those names, ", "-separated, for an error.
std::string megatron_recompute_module_list();

/// Where each field came from in the file, so check_strategy can point at the offending value.
struct StrategyPositions {
  config::SourcePos self, tp, pp, dp, ep, etp, moe_deepep, cp, zero_stage, micro_batch, schedule, v, rank_order, global_batch, framework,
      tp_comm_overlap, overlap_param_gather, precision, offload_optimizer, offload_param, recompute_modules,
      selective_policy, optimizer_states, stage_layers, pipeline_split, mtp_layers;
  std::string path;  ///< "strategies[1]"
};

struct Strategy {
  std::string name;
  int tp = 1;                         ///< tensor-parallel degree (Megatron column/row split)
  int pp = 1;                         ///< pipeline stages
  int dp = 0;                         ///< data-parallel degree; 0 = GPUs / (tp·pp)
  /// Expert-parallel degree (Megatron-Core --expert-model-parallel-size): each group of ep
  /// consecutive DP ranks splits a MoE layer's experts ep ways and exchanges tokens by
  /// all-to-all; expert gradients are reduced over the dp/ep ranks that hold the same experts.
  int ep = 1;
  /// Expert tensor-parallel degree (Megatron-Core --expert-tensor-parallel-size): tp (0, the
  /// default: each expert split like the dense MLP) or 1, MoE parallel folding (Liu et al. 2025,
  /// arXiv 2504.14960): experts whole, and the EP groups are ep consecutive ranks of the TP × DP
  /// grid, so expert parallelism may span a TP group; expert gradients reduce over the tp·dp/ep
  /// ranks that hold the same experts.
  int etp = 0;
  /// Megatron-Core's DeepEP dispatcher (--moe-token-dispatcher-type flex --moe-enable-deepep;
  /// DeepSeek-V3 report §3.2.2): where an EP group spans servers, a token crosses to each
  /// server holding any of its experts once, to the GPU of the same local index, and is forwarded
  /// over NVLink from there; the combine returns the same way.
  bool moe_deepep = false;
  /// Context-parallel degree (Megatron-Core --context-parallel-size): each sequence is split over
  /// cp ranks, whose attention exchanges K/V round a ring (TransformerEngine's ring attention);
  /// dp·cp ranks reduce the gradients. GPUs = tp·pp·dp·cp.
  int cp = 1;
  int zero_stage = 0;                 ///< 0–3 (DeepSpeed ZeRO; 1 = optimizer, 2 = +grads, 3 = +params)
  int micro_batch = 1;                ///< sequences per microbatch
  ScheduleKind schedule = ScheduleKind::one_f_one_b;
  int v = 1;                          ///< model chunks per stage (interleaved only)
  /// Transformer layers of the first and the last pipeline stage, the rest split evenly over the
  /// stages between (Megatron-Core's --decoder-first/last-pipeline-num-layers, NeMo's
  /// num_layers_in_first/last_pipeline_stage: room for the embedding and the output head); 0 =
  /// the even split.
  int first_stage_layers = 0, last_stage_layers = 0;
  /// The embedding and the loss each counted as one layer when the layers are split over the
  /// (virtual) pipeline stages, the first and the last stage building one transformer layer
  /// fewer for it (Megatron-Core's --account-for-embedding-in-pipeline-split and
  /// --account-for-loss-in-pipeline-split): 94 layers on pp 8 · v 4 as 96 / 32 = 3 a chunk.
  bool split_counts_embedding = false, split_counts_loss = false;
  /// Multi-token-prediction depths trained (Megatron-Core's --mtp-num-layers): none = all the
  /// model has (models::ModelSpec::mtp_layers), 0 = the main model alone.
  std::optional<int> mtp_layers;
  bool sequence_parallel = false;     ///< Korthikanti et al.: TP all-reduce -> all-gather + reduce-scatter
  Recompute recompute = Recompute::none;
  /// What `selective` re-runs: Megatron-Core's --recompute-modules (default core_attn), or
  /// torchtitan's per-op policy (selective_policy: torch_ops).
  models::RecomputeModules recompute_modules;
  models::SelectivePolicy selective_policy = models::SelectivePolicy::modules;
  /// Adam's state bytes per parameter (models::OptimizerStates): fp32 master, momentum and
  /// variance unless the strategy narrows them.
  models::OptimizerStates optimizer_states;
  /// Norms, rotary and gated activations run as eager PyTorch kernel chains (models::EagerOps):
  /// torchtitan and HuggingFace models without torch.compile; fused kernels by default.
  models::EagerOps eager_ops;
  /// PyTorch DDP default bucket_cap_mb = 25 (torch.nn.parallel.DistributedDataParallel docs).
  std::int64_t dp_bucket_bytes = 25'000'000;
  /// The bucket in parameters, as Megatron-Core counts it (--ddp-bucket-size); 0 = dp_bucket_bytes.
  std::int64_t dp_bucket_params = 0;
  /// Megatron-Core's default bucket, max(40M, 1M·dp) parameters
  /// (megatron/core/distributed/distributed_data_parallel.py); check_strategy sets
  /// dp_bucket_params from it once dp is known.
  bool dp_bucket_from_dp = false;
  bool dp_overlap = true;             ///< reduce buckets during backward (DDP) vs after it
  /// Megatron-LM --async-tensor-model-parallel-allreduce (default since 2021): the backward TP
  /// collective runs beside the weight-gradient GEMM. false = the 2019-2020 code, where it blocks.
  bool tp_overlap = true;
  /// How weight gradients add up over the microbatches (framework_defaults.hpp: fused for generic
  /// and megatron-core, autograd for deepspeed and fsdp). Costed only where full gradients are
  /// kept across microbatches, not where each microbatch's are reduced and dropped (ZeRO-2/3;
  /// FSDP unless no_sync or a pipeline stage defers its reduction).
  GradAccumulation grad_accumulation = GradAccumulation::fused;
  int zero_prefetch = 1;              ///< ZeRO-3: layers whose parameters are gathered ahead
  Framework framework = Framework::generic;
  /// DeepSpeed's stage3_param_persistence_threshold, elements (default 1e5: deepspeed/runtime/
  /// zero/config.py): a parameter this small is never partitioned, so never gathered.
  std::int64_t zero3_persistence_threshold = 100'000;
  /// DeepSpeed's stage3_max_reuse_distance, elements (default 1e9, same file): a parameter used
  /// again before this many elements of other parameters are fetched is not released.
  std::int64_t zero3_max_reuse_distance = 1'000'000'000;
  /// DeepSpeed before PR #1188 (June 2021; the 0.3 releases): every parameter all-gather called
  /// torch.cuda.synchronize() first ("the async version is not async at all"), so no gather
  /// overlaps compute and none is fetched ahead.
  bool zero3_blocking_gathers = false;
  /// DeepSpeed on PyTorch before 1.9, which had no flat all-gather (torch.distributed.
  /// _all_gather_base: PyTorch PR #56315, April 2021): each ZeRO-3 parameter all-gather and
  /// gradient reduce-scatter (one per parameter tensor) passes a list of one view per rank, built
  /// in Python (partition_parameters.py _allgather_param, _reduce_scatter_gradient), which
  /// ProcessGroupNCCL copies one by one into or out of a flat buffer of its own (c10d
  /// flatten_for_scatter_gather). Per rank, views (one for an all-gather, two for a reduce-scatter:
  /// grad.view(-1).narrow) and a copy call on the host (hw::CommParams::host_view_call,
  /// host_copy_call); the full tensor zero-filled and copied once more in HBM.
  bool zero3_list_collectives = false;
  /// DeepSpeed's ZeRO-Offload (zero_optimization.offload_optimizer.device: cpu; Ren et al.,
  /// USENIX ATC'21): the rank's shard of fp32 master weights, gradients and Adam states lives in
  /// host memory; its gradients go out over PCIe as they are reduced, DeepSpeedCPUAdam steps on
  /// the host CPU, and the updated 16-bit parameters come back before they are all-gathered.
  bool offload_optimizer = false;
  /// ZeRO-Infinity's parameter offload (zero_optimization.offload_param.device: cpu; Rajbhandari et
  /// al., SC'21), with ZeRO-3 and the optimizer offloaded: each rank's 16-bit parameter partition
  /// lives in host memory and is copied to the GPU before every all-gather of it; the CPU's Adam
  /// writes it in place, so nothing comes back at the step.
  bool offload_param = false;
  /// Keys of its DeepSpeed config (deepspeed_config.hpp) that change a step's cost and that
  /// stepsim does not model, each "file:line:col: key: what is costed instead"; the commands
  /// print them as warnings.
  std::vector<std::string> unmodelled{};
  /// Its DeepSpeed config's data_types.grad_accum_dtype: true = fp32, false = the model's 16-bit
  /// dtype; nullopt = DeepSpeed's default (engine.py get_data_types: fp32 for bf16 without ZeRO,
  /// else the model's). With bf16 and fp32 accumulation below ZeRO-2 DeepSpeed runs BF16_Optimizer.
  std::optional<bool> deepspeed_fp32_accumulation;
  /// Innermost first: "tp-dp-pp" = Megatron's default (TP within a server, PP outermost).
  std::string rank_order = "tp-dp-pp";
  bool distributed_optimizer = false; ///< Megatron's ZeRO-1 equivalent (shards optimizer states)
  /// Megatron-Core --tp-comm-overlap (TransformerEngine userbuffers, needs sequence parallelism):
  /// each TP all-gather and reduce-scatter runs beside the GEMM that consumes or produces it.
  bool tp_comm_overlap = false;
  /// Megatron-Core --overlap-param-gather (distributed optimizer): the updated parameters are
  /// all-gathered bucket by bucket during the next step's forward instead of after the optimizer.
  bool overlap_param_gather = false;
  /// Megatron-LM reduces a bf16 model's gradients in fp32 (arguments.py forces
  /// accumulate_allreduce_grads_in_fp32 under --bf16); --grad-reduce-in-bf16 keeps them 16-bit.
  bool grad_reduce_in_bf16 = false;
  /// Megatron-Core --fp8-param-gather (TE's fp8_model_init; NeMo's fp8_params): FP8 training keeps
  /// the FP8 GEMMs' weights in FP8 only (no 16-bit copy; the optimizer's fp32 master stays), and
  /// the distributed optimizer all-gathers them in FP8.
  bool fp8_param_gather = false;
  /// FSDP's HYBRID_SHARD: parameters, gradients and optimizer state sharded over this many
  /// consecutive DP ranks and replicated across the groups (gradients all-reduced over the
  /// replicas). 0 = all of dp (FULL_SHARD); −1 = the DP ranks of one server, resolved by
  /// check_strategy (fsdp_sharding: hybrid_shard).
  int fsdp_shard_degree = 0;
  /// FSDP's MixedPrecision(reduce_dtype=float32): gradients reduce-scattered in fp32
  /// (torchtitan's mixed_precision_reduce default).
  bool fsdp_reduce_fp32 = false;
  FsdpPrefetch fsdp_backward_prefetch = FsdpPrefetch::backward_pre;  ///< torch's default
  /// FSDP's no_sync() around every microbatch but the last (FSDP1 docs, "no_sync"): gradients
  /// accumulate unsharded and are reduce-scattered in the last microbatch's backward only.
  bool fsdp_no_sync = false;
  bool allow_tp_across_servers = false;
  /// FlashAttention (Dao 2023) for the attention core; false = Megatron-LM's 2022 path (batched
  /// GEMMs + fused softmax), as in Korthikanti et al. 2022's measurements.
  bool flash_attention = true;
  /// The strategy's own training precision and FP8 recipe, to compare them in one scenario;
  /// nullopt = the scenario's training.precision / training.fp8_recipe (precision_of in scenario.hpp).
  std::optional<Precision> precision;
  std::optional<models::Fp8Recipe> fp8_recipe;
  StrategyPositions where;            ///< positions for errors; empty for strategies built in code

  /// ZeRO stage in effect: Megatron's distributed optimizer counts as stage 1.
  int expert_tp() const { return etp > 0 ? etp : tp; }
  /// Experts whole while the attention is split (etp 1 under tp > 1): EP groups fold over TP.
  bool folds_experts_over_tp() const { return ep > 1 && expert_tp() < tp; }
  /// Ranks that hold the same experts and reduce their gradients: dp/ep, or tp·dp/ep folded.
  int expert_dp_degree() const { return (folds_experts_over_tp() ? tp * dp : dp) / ep; }
  int effective_zero_stage() const { return (distributed_optimizer && zero_stage == 0) ? 1 : zero_stage; }
  /// Parameters sharded at rest and all-gathered layer by layer: ZeRO-3, and FSDP's SHARD_GRAD_OP
  /// (zero_stage 2 under framework fsdp), which keeps them gathered from forward to backward.
  bool shards_parameters() const {
    return effective_zero_stage() == 3 || (framework == Framework::fsdp && zero_stage == 2);
  }
  /// FSDP that reduces each unit's gradients once per step, not once per microbatch: under
  /// fsdp_no_sync, and in every pipeline stage, which torch.distributed.pipelining runs with
  /// set_requires_gradient_sync(False) until the stage's last backward, then reduces every unit
  /// (stage.py, backward_maybe_with_nosync).
  bool fsdp_defers_gradient_reduction() const {
    return framework == Framework::fsdp && shards_parameters() && (pp > 1 || fsdp_no_sync);
  }
  /// FSDP parameters gathered once per step and kept across microbatches: in a pipeline stage
  /// (torchtitan's reshard_after_forward = not pp_enabled, and the stage's
  /// set_reshard_after_backward(False)), and SHARD_GRAD_OP under no_sync, which keeps them
  /// unsharded after a backward that does not sync (FSDP1's _should_free_in_backward).
  bool fsdp_keeps_gathered() const {
    return framework == Framework::fsdp && shards_parameters() && (pp > 1 || (fsdp_no_sync && zero_stage == 2));
  }
};

/// What a strategy's recompute modules re-run that is not costed (mla_up_proj under TP with SP
/// repeats the latents' gather inside its checkpoint), or empty.
std::string recompute_modules_not_costed(const Strategy& s);

}  // namespace stepsim::plan
