// Reading one strategy of a scenario (strategy.hpp says what each field means).
#include "sim/plan/strategy_yaml.hpp"

#include <string>

#include "sim/config/yaml_field.hpp"
#include "sim/plan/framework_defaults.hpp"
#include "sim/plan/rank_grid.hpp"
#include "sim/plan/scenario.hpp"

namespace stepsim::plan {
namespace {

using config::Field;

std::int64_t read_int64(const Field& f, std::int64_t low, std::int64_t high) {
  const std::int64_t v = f.as_int();
  if (v < low || v > high)
    f.fail("expected an integer from " + std::to_string(low) + " to " + std::to_string(high) + ", found " + f.found());
  return v;
}

void read_parallel_sizes(const Field& f, Strategy& s) {
  constexpr std::int64_t kMax = 1 << 20;
  if (auto x = f.optional("tp")) { s.tp = read_int(*x, 1, kMax); s.where.tp = x->pos(); }
  if (auto x = f.optional("pp")) { s.pp = read_int(*x, 1, kMax); s.where.pp = x->pos(); }
  if (auto x = f.optional("dp")) { s.dp = read_int(*x, 1, kMax); s.where.dp = x->pos(); }
  if (auto x = f.optional("ep")) { s.ep = read_int(*x, 1, kMax); s.where.ep = x->pos(); }
  if (auto x = f.optional("etp")) { s.etp = read_int(*x, 1, kMax); s.where.etp = x->pos(); }
  if (auto x = f.optional("cp")) { s.cp = read_int(*x, 1, kMax); s.where.cp = x->pos(); }
  if (auto x = f.optional("zero_stage")) { s.zero_stage = read_int(*x, 0, 3); s.where.zero_stage = x->pos(); }
  if (auto x = f.optional("micro_batch")) { s.micro_batch = read_int(*x, 1, kMax); s.where.micro_batch = x->pos(); }
  if (auto x = f.optional("v")) { s.v = read_int(*x, 1, 1024); s.where.v = x->pos(); }
  if (auto x = f.optional("first_stage_layers")) {
    s.first_stage_layers = read_int(*x, 1, kMax);
    s.where.stage_layers = x->pos();
  }
  if (auto x = f.optional("last_stage_layers")) {
    s.last_stage_layers = read_int(*x, 1, kMax);
    if (!f.has("first_stage_layers")) s.where.stage_layers = x->pos();
  }
}

// Megatron-Core's --recompute-modules under --recompute-granularity selective; the modules whose
// checkpoint re-runs communication are refused rather than costed without it.
void read_recompute_modules(const Field& x, const Field& strategy, Strategy& s) {
  if (s.framework != Framework::megatron_core)
    x.fail("recompute_modules is Megatron-Core's --recompute-modules: it needs framework: megatron-core in this strategy");
  if (strategy.has("recompute") && s.recompute != Recompute::selective)
    x.fail(std::string("recompute_modules chooses what selective recompute re-runs: it needs recompute: selective, found recompute: ") +
           to_string(s.recompute));
  if (!x.is_sequence() || x.items().empty())
    x.fail("expected a list of modules such as [core_attn, layernorm, moe_act, mla_up_proj], found " + x.found());
  s.recompute = Recompute::selective;
  s.recompute_modules = {.core_attn = false};
  s.where.recompute_modules = x.pos();
  for (const Field& item : x.items()) {
    const std::string name = item.as_choice(megatron_recompute_modules());
    if (const std::string why = recompute_module_refused(name); !why.empty())
      item.fail(why + "; the modules costed are core_attn, layernorm, moe_act and mla_up_proj");
    models::add_recompute_module(s.recompute_modules, name);
  }
  if (const std::string note = recompute_modules_not_costed(s); !note.empty())
    s.unmodelled.push_back(config::to_string(x.pos()) + ": recompute_modules: " + note);
}

// The elementwise ops the framework runs unfused (models::EagerOps); Megatron-Core runs
// TransformerEngine's fused kernels.
void read_eager_ops(const Field& x, Strategy& s) {
  if (s.framework == Framework::megatron_core)
    x.fail("eager_ops names ops a PyTorch model runs unfused; framework: megatron-core runs TransformerEngine's fused kernels");
  if (!x.is_sequence()) x.fail("expected a list of ops such as [norm, rotary, activation] (or []), found " + x.found());
  s.eager_ops = {};
  for (const Field& item : x.items()) models::add_eager_op(s.eager_ops, item.as_choice(models::eager_op_names()));
}

// What the pipeline split counts as a layer beside the transformer layers (Megatron-Core's
// --account-for-embedding-in-pipeline-split, --account-for-loss-in-pipeline-split).
void read_pipeline_split_counts(const Field& x, Strategy& s) {
  if (s.framework != Framework::megatron_core)
    x.fail("pipeline_split_counts is Megatron-Core's --account-for-embedding/loss-in-pipeline-split: it needs "
           "framework: megatron-core in this strategy");
  if (!x.is_sequence()) x.fail("expected a list of [embedding, loss] or either one, found " + x.found());
  s.where.pipeline_split = x.pos();
  for (const Field& item : x.items()) {
    const std::string what = item.as_choice({"embedding", "loss"});
    bool& counted = what == "embedding" ? s.split_counts_embedding : s.split_counts_loss;
    if (counted) item.fail("'" + what + "' is listed twice");
    counted = true;
  }
}

// Adam's states narrowed: Megatron-Core's precision-aware optimizer dtypes, or Apex
// DistributedFusedAdam's bf16 states with no master copy (master: none).
void read_optimizer_states(const Field& x, Strategy& s) {
  s.where.optimizer_states = x.pos();
  if (!x.is_map()) x.fail("expected a mapping such as {master: fp32, exp_avg: bf16, exp_avg_sq: bf16}, found " + x.found());
  x.check_keys({"master", "exp_avg", "exp_avg_sq"});
  auto bytes = [](const Field& f, bool master) {
    const std::string d = master ? f.as_choice({"fp32", "fp16", "bf16", "none"}) : f.as_choice({"fp32", "fp16", "bf16", "fp8"});
    return d == "fp32" ? 4 : d == "none" ? 0 : d == "fp8" ? 1 : 2;
  };
  if (auto f = x.optional("master")) s.optimizer_states.master = bytes(*f, true);
  if (auto f = x.optional("exp_avg")) s.optimizer_states.exp_avg = bytes(*f, false);
  if (auto f = x.optional("exp_avg_sq")) s.optimizer_states.exp_avg_sq = bytes(*f, false);
}

}  // namespace

Precision read_precision(const Field& f) {
  const std::string s = f.as_choice({"bf16", "fp16", "fp8"});
  return s == "bf16" ? Precision::bf16 : s == "fp16" ? Precision::fp16 : Precision::fp8;
}

models::Fp8Recipe read_fp8_recipe(const Field& f) {
  return f.as_choice({"delayed", "tensorwise"}) == "delayed" ? models::Fp8Recipe::delayed : models::Fp8Recipe::tensorwise;
}

int read_int(const Field& f, std::int64_t low, std::int64_t high) {
  const std::int64_t v = f.as_int();
  if (v < low || v > high)
    f.fail("expected an integer from " + std::to_string(low) + " to " + std::to_string(high) + ", found " + f.found());
  return static_cast<int>(v);
}

Strategy read_strategy(const Field& f, int index) {
  f.check_keys({"name", "tp", "pp", "dp", "ep", "etp", "cp", "zero_stage", "micro_batch", "schedule", "v", "sequence_parallel",
                "recompute", "dp_bucket_size", "dp_overlap", "tp_overlap", "grad_accumulation", "zero_prefetch", "rank_order",
                "distributed_optimizer", "allow_tp_across_servers", "flash_attention", "framework",
                "zero3_persistence_threshold", "zero3_max_reuse_distance", "zero3_blocking_gathers",
                "zero3_list_collectives", "offload_optimizer", "offload_param", "deepspeed_config", "megatron_args", "tp_comm_overlap", "overlap_param_gather", "grad_reduce_in_bf16", "fp8_param_gather", "fsdp_sharding",
                "fsdp_backward_prefetch", "fsdp_reduce_fp32", "fsdp_no_sync", "torchtitan_config", "moe_deepep",
                "precision", "fp8_recipe", "recompute_modules", "selective_policy", "eager_ops", "optimizer_states",
                "first_stage_layers", "last_stage_layers", "pipeline_split_counts", "mtp_layers"});
  Strategy s;
  s.where.self = f.pos();
  s.where.path = f.path();
  s.where.schedule = s.where.v = s.where.rank_order = s.where.dp = s.where.micro_batch = f.pos();
  s.where.tp = s.where.pp = s.where.ep = s.where.etp = s.where.zero_stage = s.where.selective_policy = f.pos();
  s.name = f.has("name") ? f.required("name").as_string() : "strategy" + std::to_string(index + 1);
  read_parallel_sizes(f, s);
  if (auto x = f.optional("framework")) {
    s.framework = *framework_named(x->as_choice(
        {to_string(Framework::generic), to_string(Framework::deepspeed), to_string(Framework::megatron_core),
         to_string(Framework::fsdp)}));
    s.where.framework = x->pos();
  }
  if (f.has("deepspeed_config")) s.framework = Framework::deepspeed;
  if (f.has("torchtitan_config")) s.framework = Framework::fsdp;
  if (f.has("megatron_args")) {
    if (f.has("deepspeed_config")) f.required("megatron_args").fail("a strategy names one framework's configuration, found deepspeed_config too");
    s.framework = Framework::megatron_core;
  }
  if (auto x = f.optional("zero_stage"); x && s.framework == Framework::megatron_core && s.zero_stage >= 2)
    x->fail("Megatron-Core's distributed optimizer shards optimizer state only (ZeRO-1); its FSDP modes are not "
            "modelled, found zero_stage: " + std::to_string(s.zero_stage));
  if (auto x = f.optional("zero_stage"); x && s.framework == Framework::fsdp && s.zero_stage < 2)
    x->fail("FSDP shards parameters: FULL_SHARD / HYBRID_SHARD are zero_stage 3, SHARD_GRAD_OP zero_stage 2; found "
            "zero_stage: " + std::to_string(s.zero_stage));
  const int written_stage = s.zero_stage;
  apply_framework_defaults(s);
  if (s.framework == Framework::fsdp && f.has("zero_stage")) s.zero_stage = written_stage;
  if (auto x = f.optional("schedule")) { s.schedule = read_schedule(*x); s.where.schedule = x->pos(); }
  if (auto x = f.optional("sequence_parallel")) s.sequence_parallel = x->as_bool();
  if (auto x = f.optional("recompute")) {
    s.recompute = read_recompute(*x);
  }
  if (auto x = f.optional("recompute_modules")) read_recompute_modules(*x, f, s);
  if (auto x = f.optional("selective_policy")) {
    s.selective_policy = x->as_choice({"modules", "torch_ops"}) == "modules" ? models::SelectivePolicy::modules
                                                                             : models::SelectivePolicy::torch_ops;
    s.where.selective_policy = x->pos();
  }
  if (auto x = f.optional("eager_ops")) read_eager_ops(*x, s);
  if (auto x = f.optional("pipeline_split_counts")) read_pipeline_split_counts(*x, s);
  if (auto x = f.optional("mtp_layers")) {
    s.mtp_layers = read_int(*x, 0, 16);
    s.where.mtp_layers = x->pos();
  }
  if (auto x = f.optional("optimizer_states")) read_optimizer_states(*x, s);
  if (auto x = f.optional("dp_bucket_size")) {
    s.dp_bucket_bytes = x->as_bytes();
    s.dp_bucket_params = 0;
    s.dp_bucket_from_dp = false;
  }
  if (auto x = f.optional("precision")) { s.precision = read_precision(*x); s.where.precision = x->pos(); }
  if (auto x = f.optional("fp8_recipe")) s.fp8_recipe = read_fp8_recipe(*x);
  if (auto x = f.optional("dp_overlap")) s.dp_overlap = x->as_bool();
  if (auto x = f.optional("tp_overlap")) s.tp_overlap = x->as_bool();
  if (auto x = f.optional("grad_accumulation"))
    s.grad_accumulation = *grad_accumulation_named(x->as_choice(
        {to_string(GradAccumulation::fused), to_string(GradAccumulation::main_grad), to_string(GradAccumulation::autograd)}));
  if (auto x = f.optional("zero_prefetch")) s.zero_prefetch = read_int(*x, 0, 1024);
  if (auto x = f.optional("rank_order")) {
    s.rank_order = x->as_string();
    s.where.rank_order = x->pos();
    if (!RankGrid::is_valid_order(s.rank_order))
      x->fail("expected the three dimensions innermost first such as 'tp-dp-pp', found " + x->found());
  }
  if (auto x = f.optional("distributed_optimizer")) s.distributed_optimizer = x->as_bool();
  if (auto x = f.optional("allow_tp_across_servers")) s.allow_tp_across_servers = x->as_bool();
  if (auto x = f.optional("flash_attention")) s.flash_attention = x->as_bool();
  // DeepSpeed's own knobs: under another framework they would be read and never used.
  for (const char* key : {"zero3_persistence_threshold", "zero3_max_reuse_distance", "zero3_blocking_gathers",
                          "zero3_list_collectives", "offload_optimizer", "offload_param"})
    if (auto x = f.optional(key); x && s.framework != Framework::deepspeed)
      x->fail(std::string(key) + " is DeepSpeed's: it needs framework: deepspeed in this strategy");
  constexpr std::int64_t kElements = std::int64_t{1} << 50;
  if (auto x = f.optional("zero3_persistence_threshold")) s.zero3_persistence_threshold = read_int64(*x, 0, kElements);
  if (auto x = f.optional("zero3_max_reuse_distance")) s.zero3_max_reuse_distance = read_int64(*x, 0, kElements);
  if (auto x = f.optional("zero3_blocking_gathers")) s.zero3_blocking_gathers = x->as_bool();
  if (auto x = f.optional("zero3_list_collectives")) s.zero3_list_collectives = x->as_bool();
  if (auto x = f.optional("offload_optimizer")) {
    s.offload_optimizer = x->as_bool();
    s.where.offload_optimizer = x->pos();
  }
  if (auto x = f.optional("offload_param")) {
    s.offload_param = x->as_bool();
    s.where.offload_param = x->pos();
  }
  for (const char* key : {"tp_comm_overlap", "overlap_param_gather", "grad_reduce_in_bf16", "moe_deepep", "fp8_param_gather"})
    if (auto x = f.optional(key); x && s.framework != Framework::megatron_core)
      x->fail(std::string(key) + " is Megatron-Core's: it needs framework: megatron-core in this strategy");
  if (auto x = f.optional("tp_comm_overlap")) { s.tp_comm_overlap = x->as_bool(); s.where.tp_comm_overlap = x->pos(); }
  if (auto x = f.optional("overlap_param_gather")) {
    s.overlap_param_gather = x->as_bool();
    s.where.overlap_param_gather = x->pos();
  }
  if (auto x = f.optional("grad_reduce_in_bf16")) s.grad_reduce_in_bf16 = x->as_bool();
  if (auto x = f.optional("fp8_param_gather")) s.fp8_param_gather = x->as_bool();
  if (auto x = f.optional("moe_deepep")) { s.moe_deepep = x->as_bool(); s.where.moe_deepep = x->pos(); }
  for (const char* key : {"fsdp_sharding", "fsdp_backward_prefetch", "fsdp_reduce_fp32", "fsdp_no_sync"})
    if (auto x = f.optional(key); x && s.framework != Framework::fsdp)
      x->fail(std::string(key) + " is FSDP's: it needs framework: fsdp in this strategy");
  if (auto x = f.optional("fsdp_sharding")) {
    const std::string v = x->as_choice({"full_shard", "hybrid_shard", "shard_grad_op"});
    const int stage = v == "shard_grad_op" ? 2 : 3;
    if (f.has("zero_stage") && s.zero_stage != stage)
      x->fail(v + " is zero_stage " + std::to_string(stage) + "; the strategy says zero_stage " + std::to_string(s.zero_stage));
    s.zero_stage = stage;
    s.fsdp_shard_degree = v == "hybrid_shard" ? -1 : 0;
  }
  if (auto x = f.optional("fsdp_reduce_fp32")) s.fsdp_reduce_fp32 = x->as_bool();
  if (auto x = f.optional("fsdp_no_sync")) s.fsdp_no_sync = x->as_bool();
  if (auto x = f.optional("fsdp_backward_prefetch"))
    s.fsdp_backward_prefetch = *fsdp_prefetch_named(x->as_choice({to_string(FsdpPrefetch::backward_pre),
                                                                  to_string(FsdpPrefetch::backward_post),
                                                                  to_string(FsdpPrefetch::none)}));
  return s;
}


}  // namespace stepsim::plan
