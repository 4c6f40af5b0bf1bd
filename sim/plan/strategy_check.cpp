// Checking a strategy against its model and machine before anything is built: every invalid plan
// is a ConfigError at the strategy field that is wrong, saying what was expected and found.
#include <algorithm>
#include <set>
#include <string>

#include "hardware/host_route.hpp"
#include "sim/plan/rank_grid.hpp"
#include "sim/config/limits.hpp"
#include "sim/plan/scenario.hpp"

namespace stepsim::plan {
namespace {

[[noreturn]] void fail(const config::SourcePos& pos, const Strategy& s, const std::string& key,
                       const std::string& message) {
  const std::string path = s.where.path.empty() ? key : s.where.path + "." + key;
  throw config::ConfigError(pos, path, message);
}

void check_sizes(const Scenario& sc, Strategy& s) {
  const int gpus = sc.cluster.gpu_count();
  const std::string cp_factor = s.cp > 1 ? "·cp" : "";
  if (s.dp == 0) {
    if (gpus % (s.tp * s.pp * s.cp) != 0)
      fail(s.where.tp, s, "tp", "tp·pp" + cp_factor + " = " + std::to_string(s.tp * s.pp * s.cp) + " does not divide the " +
                                    std::to_string(gpus) + " GPUs of " + sc.cluster.name);
    s.dp = gpus / (s.tp * s.pp * s.cp);
  }
  if (s.tp * s.pp * s.dp * s.cp != gpus)
    fail(s.where.dp, s, "dp", "expected tp·pp·dp" + cp_factor + " = " + std::to_string(gpus) + " GPUs of " + sc.cluster.name +
                                  ", found " + std::to_string(s.tp) + "·" + std::to_string(s.pp) + "·" +
                                  std::to_string(s.dp) + (s.cp > 1 ? "·" + std::to_string(s.cp) : std::string()) + " = " +
                                  std::to_string(s.tp * s.pp * s.dp * s.cp));
  if (sc.model.heads % s.tp != 0 || sc.model.kv_heads % s.tp != 0)
    fail(s.where.tp, s, "tp", "expected tp to divide the model's " + std::to_string(sc.model.heads) +
                                  " attention heads and " + std::to_string(sc.model.kv_heads) +
                                  " key/value heads, found tp = " + std::to_string(s.tp));
  if (sc.model.ffn_hidden % s.tp != 0)
    fail(s.where.tp, s, "tp", "expected tp to divide the MLP width " + std::to_string(sc.model.ffn_hidden) +
                                  ", found tp = " + std::to_string(s.tp));
  const models::MoeSpec& moe = sc.model.moe;
  if (s.etp != 0 && s.etp != 1 && s.etp != s.tp)
    fail(s.where.etp, s, "etp", "expected etp 1 (whole experts, EP folded over TP) or tp = " + std::to_string(s.tp) +
                                ", found etp = " + std::to_string(s.etp));
  if (s.etp != 0 && s.etp != s.tp && s.ep == 1)
    fail(s.where.etp, s, "etp", "etp " + std::to_string(s.etp) + " below tp needs expert parallelism (ep > 1) to "
                                "place whole experts, found ep = 1");
  if (moe.expert_ffn % s.expert_tp() != 0 || moe.shared_ffn % s.tp != 0)
    fail(s.where.tp, s, "tp", "expected tp to divide the expert MLP width " + std::to_string(moe.expert_ffn) +
                                  (moe.shared_ffn > 0 ? " and the shared expert's " + std::to_string(moe.shared_ffn) : std::string()) +
                                  " (each expert is split over TP), found tp = " + std::to_string(s.tp));
}

// Expert parallelism as Megatron-Core places it (megatron/core/parallel_state.py): EP groups are
// carved out of DP, so ep divides dp and the experts; the token dispatch is an all-to-all.
void check_experts(const Scenario& sc, const Strategy& s) {
  if (s.moe_deepep && s.ep == 1)
    fail(s.where.moe_deepep, s, "moe_deepep", "DeepEP dispatches a MoE layer's tokens over an expert-parallel group; "
                                              "it needs ep > 1, found ep = 1");
  if (s.ep == 1) return;
  const models::MoeSpec& moe = sc.model.moe;
  if (!moe.enabled())
    fail(s.where.ep, s, "ep", "expert parallelism needs a mixture-of-experts model; " + sc.model.name + " is dense");
  if (s.folds_experts_over_tp() && (s.tp * s.dp) % s.ep != 0)
    fail(s.where.ep, s, "ep", "expected ep to divide tp·dp = " + std::to_string(s.tp * s.dp) + " (with etp 1 the EP "
                              "groups are carved out of the TP × DP ranks), found ep = " + std::to_string(s.ep));
  if (!s.folds_experts_over_tp() && s.dp % s.ep != 0)
    fail(s.where.ep, s, "ep", "expected ep to divide dp = " + std::to_string(s.dp) + " (EP groups are carved out of "
                              "the data-parallel ranks; etp: 1 carves them out of TP × DP), found ep = " +
                              std::to_string(s.ep));
  if (moe.experts % s.ep != 0)
    fail(s.where.ep, s, "ep", "expected ep to divide the model's " + std::to_string(moe.experts) + " experts, found ep = " +
                              std::to_string(s.ep));
  if (s.shards_parameters() || s.effective_zero_stage() >= 2)
    fail(s.where.ep, s, "ep", "expert parallelism is modelled with ZeRO-0/1 or the distributed optimizer (as "
                              "Megatron-Core runs it), found zero_stage " + std::to_string(s.zero_stage));
  if (s.tp > 1 && !s.sequence_parallel)
    fail(s.where.ep, s, "ep", "expert parallelism with tp > 1 needs sequence_parallel: true (Megatron-Core "
                              "requires it for MoE with TP)");
}

// Modules a layer of this model has (RecomputeModules): routed experts' activation, latent
// attention's up projections, which Megatron-Core re-runs into TransformerEngine's fused attention;
// and what Megatron-Core allows with FP8.
void check_recompute_modules(const Scenario& sc, const Strategy& s) {
  const models::RecomputeModules& m = s.recompute_modules;
  if (m.moe_act && !sc.model.moe.enabled())
    fail(s.where.recompute_modules, s, "recompute_modules", "moe_act re-runs the routed experts' activation; " +
                                                                sc.model.name + " has no experts");
  if (m.mla_up_proj && !sc.model.mla.enabled())
    fail(s.where.recompute_modules, s, "recompute_modules", "mla_up_proj re-runs latent attention's up projections; " +
                                                                sc.model.name + " has no latent attention");
  // transformer_config.py: "Delayed scaling does not support moe_act and layernorm recompute for fp8".
  if ((m.moe_act || m.layernorm) && fp8_recipe_of(sc.training, s) == models::Fp8Recipe::delayed)
    fail(s.where.recompute_modules, s, "recompute_modules",
         "Megatron-Core refuses moe_act and layernorm recompute under FP8 delayed scaling; use fp8_recipe: tensorwise "
         "or leave them out");
  if (m.mla_up_proj && !s.flash_attention)
    fail(s.where.recompute_modules, s, "recompute_modules",
         "mla_up_proj re-creates the queries, keys and values TransformerEngine's fused attention keeps; it needs "
         "flash_attention: true, found flash_attention: false");
}

// torchtitan's per-op checkpointing policy counts a Llama block's aten.mm calls: its model's
// attention and dense MLP, under recompute: selective, and not beside Megatron-Core's modules.
void check_selective_policy(const Scenario& sc, const Strategy& s) {
  if (s.selective_policy != models::SelectivePolicy::torch_ops) return;
  const auto why = [&](const std::string& what) { fail(s.where.selective_policy, s, "selective_policy", what); };
  if (s.recompute != Recompute::selective)
    why(std::string("torch_ops chooses what selective recompute re-runs: it needs recompute: selective, found recompute: ") +
        to_string(s.recompute));
  if (s.framework == Framework::megatron_core) why("torch_ops is torchtitan's per-op policy; Megatron-Core re-runs recompute_modules");
  if (sc.model.moe.enabled() || sc.model.mla.enabled() || sc.model.linear_bias || sc.model.qkv_bias)
    why("torch_ops is costed for a dense, bias-free block (torchtitan's Llama: its policy counts aten.mm); " +
        sc.model.name + " has experts, latent attention or linear biases");
  if (precision_of(sc.training, s) == Precision::fp8)
    why("torch_ops with FP8 training is not modelled (the kept outputs and the casts' re-run)");
}

// Narrowed Adam states where the framework keeps its own: FSDP's fp32 parameter shards are the
// master, DeepSpeed's CPU Adam (ZeRO-Offload) keeps fp32 states, and FP8 parameters cannot be
// the master copy.
void check_optimizer_states(const Strategy& s) {
  if (s.optimizer_states == models::OptimizerStates{}) return;
  const auto why = [&](const std::string& what) { fail(s.where.optimizer_states, s, "optimizer_states", what); };
  if (s.offload_optimizer) why("ZeRO-Offload's CPU Adam keeps fp32 states; narrowed states are not modelled with it");
  if (s.framework == Framework::fsdp && s.optimizer_states.master != 4)
    why("FSDP's fp32 parameter shards are the master copy; only the moments can be narrowed");
  if (s.optimizer_states.master == 0 && s.fp8_param_gather)
    why("master: none makes the 16-bit parameters the master copy; with fp8_param_gather there are none");
}

// Context parallelism as Megatron-Core runs it: TransformerEngine's ring attention (its fused
// attention only), the sequence cut into 2·cp chunks for the causal load balance
// (get_batch_on_this_cp_rank). Not modelled with it: expert parallelism (Megatron-Core carves EP
// out of DP×CP) and FSDP's hybrid sharding.
void check_context(const Scenario& sc, const Strategy& s) {
  if (s.cp == 1) return;
  if (!s.flash_attention)
    fail(s.where.cp, s, "cp", "context parallelism runs TransformerEngine's ring attention, which needs "
                              "flash_attention: true, found flash_attention: false");
  if (sc.training.seq_len % (2 * s.cp) != 0)
    fail(s.where.cp, s, "cp", "expected 2·cp to divide training.seq_len = " + std::to_string(sc.training.seq_len) +
                              " (each rank holds two chunks of s/(2·cp) tokens), found cp = " + std::to_string(s.cp));
  if (s.ep > 1)
    fail(s.where.cp, s, "cp", "context parallelism together with expert parallelism is not modelled yet; expected ep = 1, "
                              "found ep = " + std::to_string(s.ep));
  if (s.fsdp_shard_degree != 0)
    fail(s.where.cp, s, "cp", "context parallelism with FSDP's hybrid sharding is not modelled yet; expected "
                              "fsdp_sharding: full_shard");
  if (sc.model.attention_window > 0 && sc.model.attention_window < sc.training.seq_len)
    fail(s.where.cp, s, "cp", "context parallelism with sliding-window attention (" + sc.model.name + ": a window of " +
                              std::to_string(sc.model.attention_window) + " tokens) is not modelled yet; expected cp = 1");
}

// The embedding and the loss counted as layers of the split (Megatron-Core's
// --account-for-embedding/loss-in-pipeline-split): arguments.py and transformer_block.py assert
// that L plus what is counted divides over the p·v virtual stages, and get_num_layers_to_build
// that an uneven first or last stage is not given too; a virtual stage of the embedding or the
// loss alone (no transformer layer) is not modelled.
void check_pipeline_split(const Scenario& sc, const Strategy& s) {
  const int embedding = s.split_counts_embedding ? 1 : 0, loss = s.split_counts_loss ? 1 : 0;
  if (embedding + loss == 0) return;
  if (s.first_stage_layers > 0 || s.last_stage_layers > 0)
    fail(s.where.pipeline_split, s, "pipeline_split_counts",
         "counting the embedding or the loss as a layer and first_stage_layers / last_stage_layers exclude each "
         "other (Megatron-Core asserts it); expected one of the two");
  const int n = s.pp * s.v, total = sc.model.layers + embedding + loss;
  const std::string counted = std::to_string(sc.model.layers) + " layers" + (embedding ? " + the embedding" : "") +
                              (loss ? " + the loss" : "") + " = " + std::to_string(total);
  if (total % n != 0)
    fail(s.where.pipeline_split, s, "pipeline_split_counts",
         "expected the " + counted + " to divide evenly over pp·v = " + std::to_string(n) +
             " virtual stages (Megatron-Core asserts it)");
  if (total / n - std::max(embedding, loss) - (n == 1 ? std::min(embedding, loss) : 0) < 1)
    fail(s.where.pipeline_split, s, "pipeline_split_counts",
         "the " + counted + " over pp·v = " + std::to_string(n) + " virtual stages leave the first or the last "
         "with no transformer layer, which is not modelled; expected fewer stages");
}

// Megatron-Core's uneven first and last stages (transformer_block.py get_num_layers_to_build):
// the stages between share the remaining layers evenly.
void check_stage_layers(const Scenario& sc, const Strategy& s) {
  check_pipeline_split(sc, s);
  if (s.first_stage_layers == 0 && s.last_stage_layers == 0) return;
  const std::string key = s.first_stage_layers > 0 ? "first_stage_layers" : "last_stage_layers";
  if (s.pp == 1)
    fail(s.where.stage_layers, s, key, key + " places layers on pipeline stages; it needs pp > 1, found pp = 1");
  if (s.v > 1)
    fail(s.where.stage_layers, s, key, "an uneven first or last stage with the interleaved schedule (v > 1) is not modelled yet");
  const int middle = s.pp - (s.first_stage_layers > 0 ? 1 : 0) - (s.last_stage_layers > 0 ? 1 : 0);
  const int rest = sc.model.layers - s.first_stage_layers - s.last_stage_layers;
  if (rest < 0 || (middle == 0 && rest != 0) || (middle > 0 && (rest < middle || rest % middle != 0)))
    fail(s.where.stage_layers, s, key,
         "expected the other " + std::to_string(middle) + " stages to share the remaining " + std::to_string(rest) +
             " of the model's " + std::to_string(sc.model.layers) + " layers evenly, at least one each (Megatron-Core "
             "asserts it), found first_stage_layers " + std::to_string(s.first_stage_layers) + ", last_stage_layers " +
             std::to_string(s.last_stage_layers) + " with pp = " + std::to_string(s.pp));
}

// A strategy trains at most the multi-token-prediction depths its model has.
void check_mtp_layers(const Scenario& sc, const Strategy& s) {
  if (s.mtp_layers && *s.mtp_layers > sc.model.mtp_layers)
    fail(s.where.mtp_layers, s, "mtp_layers",
         "expected at most the model's " + std::to_string(sc.model.mtp_layers) + " multi-token-prediction depths (" +
             sc.model.name + "'s mtp_layers), found " + std::to_string(*s.mtp_layers));
}

void check_pipeline(const Scenario& sc, Strategy& s) {
  check_mtp_layers(sc, s);
  if (s.schedule != ScheduleKind::interleaved && s.v != 1)
    fail(s.where.v, s, "v", "v (model chunks per stage) needs schedule: interleaved, found schedule: " +
                                std::string(to_string(s.schedule)));
  check_stage_layers(sc, s);
  if (sc.model.layers < s.pp * s.v)
    fail(s.where.pp, s, "pp", "expected at least pp·v = " + std::to_string(s.pp * s.v) + " layers, the model has " +
                                  std::to_string(sc.model.layers));
  const std::int64_t per_step = static_cast<std::int64_t>(s.micro_batch) * s.dp;
  if (sc.training.global_batch % per_step != 0)
    fail(s.where.micro_batch, s, "micro_batch",
         "expected micro_batch·dp = " + std::to_string(per_step) + " to divide training.global_batch = " +
             std::to_string(sc.training.global_batch) + " (at " + config::to_string(sc.training.global_batch_pos) + ")");
  const std::int64_t m = sc.training.global_batch / per_step;
  if (m > config::limit_value(config::kMaxMicrobatches))
    fail(s.where.micro_batch, s, "micro_batch",
         config::over_limit(config::kMaxMicrobatches, m,
                            " = training.global_batch / (micro_batch·dp) = " + std::to_string(sc.training.global_batch) +
                                " / " + std::to_string(per_step) + "; raise micro_batch or dp, or lower the global batch") +
             ", at a cost in time and memory");
  if (s.schedule == ScheduleKind::interleaved && m % s.pp != 0)
    fail(s.where.schedule, s, "schedule", "interleaved needs the microbatches per step (" + std::to_string(m) +
                                              ") to be a multiple of pp = " + std::to_string(s.pp) +
                                              " (Megatron-LM's requirement)");
  // DeepSpeed's PipelineEngine asserts ZeRO-2/3 away (pipe/engine.py); FSDP stages run under
  // torch.distributed.pipelining, as torchtitan runs them (Strategy::fsdp_keeps_gathered).
  if (s.effective_zero_stage() >= 2 && s.pp > 1 && s.framework != Framework::fsdp)
    fail(s.where.zero_stage, s, "zero_stage",
         "ZeRO stage " + std::to_string(s.zero_stage) + " with pipeline parallelism (pp = " + std::to_string(s.pp) +
             ") is not supported by DeepSpeed; use zero_stage 0 or 1, or framework: fsdp");
}

void check_tp_placement(const Scenario& sc, const Strategy& s) {
  if (s.allow_tp_across_servers || s.tp == 1) return;
  RankGrid grid(s.tp, s.pp, s.dp, s.rank_order, s.cp);
  for (int r = 0; r < grid.size(); ++r) {
    std::set<int> servers;
    for (int g : grid.tp_group(r)) servers.insert(sc.cluster.server_of(g));
    if (servers.size() > 1)
      fail(s.where.tp, s, "tp", "the TP group of GPU " + std::to_string(r) + " spans " + std::to_string(servers.size()) +
                                    " servers (" + std::to_string(sc.cluster.gpus_per_server) +
                                    " GPUs each); set allow_tp_across_servers: true if that is intended");
  }
}

// Megatron-Core's switches that need something else: a switch the strategy wrote is an error
// without it; one that came from the framework's defaults is off where it cannot apply.
void check_megatron_core(Strategy& s) {
  // megatron/core/distributed/distributed_data_parallel.py: bucket_size = max(40000000,
  // 1000000 * dp) parameters, dp counted with context parallelism.
  if (s.dp_bucket_from_dp) s.dp_bucket_params = std::max<std::int64_t>(40'000'000, std::int64_t{1'000'000} * s.dp * s.cp);
  if (s.tp_comm_overlap && !(s.sequence_parallel && s.tp > 1)) {
    if (s.where.tp_comm_overlap.line > 0)
      fail(s.where.tp_comm_overlap, s, "tp_comm_overlap",
           "expected sequence_parallel: true and tp > 1 (Megatron-LM asserts --sequence-parallel for "
           "--tp-comm-overlap), found sequence_parallel: " + std::string(s.sequence_parallel ? "true" : "false") +
               ", tp = " + std::to_string(s.tp));
    s.tp_comm_overlap = false;
  }
  if (s.overlap_param_gather && !s.dp_overlap) {
    if (s.where.overlap_param_gather.line > 0)
      fail(s.where.overlap_param_gather, s, "overlap_param_gather",
           "expected dp_overlap: true (Megatron-LM: 'Must use --overlap-param-gather with --overlap-grad-reduce'), "
           "found dp_overlap: false");
    s.overlap_param_gather = false;
  }
  if (s.overlap_param_gather && s.effective_zero_stage() != 1) {
    if (s.where.overlap_param_gather.line > 0)
      fail(s.where.overlap_param_gather, s, "overlap_param_gather",
           "expected distributed_optimizer: true (Megatron-LM asserts --use-distributed-optimizer for "
           "--overlap-param-gather), found distributed_optimizer: false");
    s.overlap_param_gather = false;
  }
}

// HYBRID_SHARD's shard group: consecutive DP ranks, at least two, dividing dp; `hybrid_shard`
// means those of one server, which must then be consecutive in the DP group.
void check_fsdp_shards(const Scenario& sc, Strategy& s) {
  if (s.fsdp_shard_degree == 0) return;
  const RankGrid grid(s.tp, s.pp, s.dp, s.rank_order);
  const auto group = grid.dp_group(0);
  if (s.fsdp_shard_degree < 0) {
    int shard = 0;
    while (shard < static_cast<int>(group.size()) && sc.cluster.server_of(group[shard]) == sc.cluster.server_of(group[0])) ++shard;
    bool consecutive = s.dp % shard == 0;
    for (int k = 0; consecutive && k < static_cast<int>(group.size()); ++k)
      consecutive = sc.cluster.server_of(group[k]) == sc.cluster.server_of(group[k - k % shard]);
    if (shard < 2 || !consecutive)
      fail(s.where.self, s, "fsdp_sharding",
           "hybrid_shard shards over the DP ranks of one server; expected at least two per server, each server's "
           "consecutive in the DP group, found " + std::to_string(shard) + " on the first server (tp = " +
               std::to_string(s.tp) + ", rank_order " + s.rank_order + ")");
    s.fsdp_shard_degree = shard;
  }
  if (s.fsdp_shard_degree < 2 || s.dp % s.fsdp_shard_degree != 0)
    fail(s.where.self, s, "fsdp_sharding", "expected a shard group of at least 2 ranks dividing dp = " + std::to_string(s.dp) +
                                               ", found " + std::to_string(s.fsdp_shard_degree));
  if (s.fsdp_shard_degree == s.dp) s.fsdp_shard_degree = 0;  // one group: FULL_SHARD
}

// ZeRO-Offload moves the optimizer off a sharded ZeRO stage, and its copies need a way from each
// GPU to a CPU (hw::gpu_to_host).
void check_offload(const Scenario& sc, const Strategy& s) {
  if (s.offload_param) {
    if (s.effective_zero_stage() != 3)
      fail(s.where.offload_param, s, "offload_param",
           "expected zero_stage 3 (DeepSpeed offloads parameters under ZeRO-3 only), found zero_stage " +
               std::to_string(s.effective_zero_stage()));
    if (!s.offload_optimizer)
      fail(s.where.offload_param, s, "offload_param",
           "expected offload_optimizer: true beside it (ZeRO-Infinity's CPU parameters are modelled with the optimizer "
           "on the CPU), found offload_optimizer: false");
    if (s.dp * s.cp < 2)
      fail(s.where.offload_param, s, "offload_param",
           "expected dp·cp > 1: the parameters are fetched from the host with each all-gather, and one rank gathers "
           "nothing (its per-layer fetches are not modelled), found dp·cp = " + std::to_string(s.dp * s.cp));
  }
  if (!s.offload_optimizer) return;
  if (s.effective_zero_stage() == 0)
    fail(s.where.offload_optimizer, s, "offload_optimizer",
         "expected zero_stage 1, 2 or 3 (DeepSpeed offloads the optimizer of a ZeRO stage), found zero_stage 0");
  // Every server is built alike (cluster_template.hpp): the first one's GPUs answer for all.
  for (int g = 0; g < std::min(sc.cluster.gpus_per_server, sc.cluster.gpu_count()); ++g)
    if (hw::gpu_to_host(sc.cluster, g).empty())
      fail(s.where.offload_optimizer, s, "offload_optimizer",
           "expected a CPU reachable from each GPU over PCIe to hold the optimizer, but " + sc.cluster.name + "'s GPU " +
               std::to_string(g) + " reaches none");
}

}  // namespace

Strategy check_strategy(const Scenario& scenario, const Strategy& strategy) {
  Strategy s = strategy;
  check_sizes(scenario, s);
  check_experts(scenario, s);
  check_recompute_modules(scenario, s);
  check_selective_policy(scenario, s);
  check_optimizer_states(s);
  check_context(scenario, s);
  check_pipeline(scenario, s);
  check_tp_placement(scenario, s);
  check_megatron_core(s);
  check_fsdp_shards(scenario, s);
  check_offload(scenario, s);
  return s;
}

Precision precision_of(const Training& training, const Strategy& strategy) {
  return strategy.precision.value_or(training.precision);
}

models::Fp8Recipe fp8_recipe_of(const Training& training, const Strategy& strategy) {
  if (precision_of(training, strategy) != Precision::fp8) return models::Fp8Recipe::none;
  if (strategy.fp8_recipe) return *strategy.fp8_recipe;
  return training.fp8_recipe != models::Fp8Recipe::none ? training.fp8_recipe : models::Fp8Recipe::delayed;
}

int microbatches(const Scenario& scenario, const Strategy& strategy) {
  const int dp = strategy.dp > 0 ? strategy.dp : scenario.cluster.gpu_count() / (strategy.tp * strategy.pp * strategy.cp);
  return static_cast<int>(scenario.training.global_batch / (static_cast<std::int64_t>(strategy.micro_batch) * dp));
}

}  // namespace stepsim::plan
