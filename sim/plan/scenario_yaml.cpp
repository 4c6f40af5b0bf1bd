// Reading a scenario file (scenario.hpp shows the format). Only this file sees YAML; everything
// after it works on the Scenario struct.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hardware/hardware_yaml.hpp"
#include "sim/config/limits.hpp"
#include "sim/config/paths.hpp"
#include "models/model_yaml.hpp"
#include "sim/plan/deepspeed_config.hpp"
#include "sim/plan/framework_defaults.hpp"
#include "sim/plan/megatron_args.hpp"
#include "sim/plan/torchtitan_config.hpp"
#include "sim/config/text_file.hpp"
#include "sim/plan/rank_grid.hpp"
#include "sim/plan/scenario.hpp"

namespace stepsim::plan {
namespace {

using config::Field;

Precision read_precision(const Field& f) {
  const std::string s = f.as_choice({"bf16", "fp16", "fp8"});
  return s == "bf16" ? Precision::bf16 : s == "fp16" ? Precision::fp16 : Precision::fp8;
}

models::Fp8Recipe read_fp8_recipe(const Field& f) {
  return f.as_choice({"delayed", "tensorwise"}) == "delayed" ? models::Fp8Recipe::delayed : models::Fp8Recipe::tensorwise;
}

Training read_training(const Field& f) {
  f.check_keys({"seq_len", "global_batch", "precision", "fp8_recipe", "tokens", "price_per_gpu_hour"});
  Training t;
  const Field seq = f.required("seq_len");
  t.seq_len = seq.as_positive_int();
  if (t.seq_len > config::limit_value(config::kMaxSeqLen)) seq.fail(config::over_limit(config::kMaxSeqLen, t.seq_len));
  Field batch = f.required("global_batch");
  t.global_batch = batch.as_positive_int();
  t.global_batch_pos = batch.pos();
  if (auto p = f.optional("precision")) t.precision = read_precision(*p);
  if (t.precision == Precision::fp8) t.fp8_recipe = models::Fp8Recipe::delayed;
  if (auto r = f.optional("fp8_recipe")) {
    if (t.precision != Precision::fp8)
      r->fail("an FP8 scaling recipe needs precision: fp8, found precision: " + std::string(to_string(t.precision)));
    t.fp8_recipe = read_fp8_recipe(*r);
  }
  if (auto tokens = f.optional("tokens")) t.tokens = tokens->as_count();
  if (auto price = f.optional("price_per_gpu_hour")) t.price_per_gpu_hour = price->as_positive_double();
  return t;
}

// A precision the GPU has no tensor-core rate for (bf16 on V100, fp8 on A100) would time every
// GEMM at 0 FLOP/s: refuse it where it is written, or at `training` when it is the default.
// FP8 training needs both the FP8 rate (its GEMMs) and bf16 (everything else).
bool has_precision(const hw::GpuSpec& gpu, Precision p) {
  return gpu.peak.of(dtype_of(p)) > 0 && (p != Precision::fp8 || gpu.peak.of(hw::Dtype::fp8) > 0);
}

void check_precision(const hw::GpuSpec& gpu, Precision p, const Field& training) {
  if (has_precision(gpu, p)) return;
  std::string has;
  for (Precision other : {Precision::bf16, Precision::fp16, Precision::fp8})
    if (has_precision(gpu, other)) has += std::string(has.empty() ? "" : " or ") + to_string(other);
  const std::string message = gpu.name + " has no " + to_string(p) + " tensor cores; expected precision " + has;
  if (auto f = training.optional("precision")) f->fail(message);
  training.fail(message + " (bf16 is the default: set training.precision)");
}

std::int64_t read_int64(const Field& f, std::int64_t low, std::int64_t high) {
  const std::int64_t v = f.as_int();
  if (v < low || v > high)
    f.fail("expected an integer from " + std::to_string(low) + " to " + std::to_string(high) + ", found " + f.found());
  return v;
}

int read_int(const Field& f, std::int64_t low, std::int64_t high) {
  const std::int64_t v = f.as_int();
  if (v < low || v > high)
    f.fail("expected an integer from " + std::to_string(low) + " to " + std::to_string(high) + ", found " + f.found());
  return static_cast<int>(v);
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
    const std::string name =
        item.as_choice({"core_attn", "layernorm", "moe_act", "mla_up_proj", "mlp", "moe", "shared_experts"});
    if (const std::string why = recompute_module_refused(name); !why.empty())
      item.fail(why + "; the modules costed are core_attn, layernorm, moe_act and mla_up_proj");
    models::add_recompute_module(s.recompute_modules, name);
  }
  if (const std::string note = recompute_modules_not_costed(s); !note.empty())
    s.unmodelled.push_back(config::to_string(x.pos()) + ": recompute_modules: " + note);
}

Strategy read_strategy(const Field& f, int index) {
  f.check_keys({"name", "tp", "pp", "dp", "ep", "etp", "cp", "zero_stage", "micro_batch", "schedule", "v", "sequence_parallel",
                "recompute", "dp_bucket_size", "dp_overlap", "tp_overlap", "zero_prefetch", "rank_order",
                "distributed_optimizer", "allow_tp_across_servers", "flash_attention", "framework",
                "zero3_persistence_threshold", "zero3_max_reuse_distance", "zero3_blocking_gathers",
                "zero3_list_collectives", "offload_optimizer", "offload_param", "deepspeed_config", "megatron_args", "tp_comm_overlap", "overlap_param_gather", "grad_reduce_in_bf16", "fp8_param_gather", "fsdp_sharding",
                "fsdp_backward_prefetch", "fsdp_reduce_fp32", "fsdp_no_sync", "torchtitan_config", "moe_deepep",
                "precision", "fp8_recipe", "recompute_modules", "first_stage_layers", "last_stage_layers"});
  Strategy s;
  s.where.self = f.pos();
  s.where.path = f.path();
  s.where.schedule = s.where.v = s.where.rank_order = s.where.dp = s.where.micro_batch = f.pos();
  s.where.tp = s.where.pp = s.where.ep = s.where.etp = s.where.zero_stage = f.pos();
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
  if (auto x = f.optional("dp_bucket_size")) {
    s.dp_bucket_bytes = x->as_bytes();
    s.dp_bucket_params = 0;
    s.dp_bucket_from_dp = false;
  }
  if (auto x = f.optional("precision")) { s.precision = read_precision(*x); s.where.precision = x->pos(); }
  if (auto x = f.optional("fp8_recipe")) s.fp8_recipe = read_fp8_recipe(*x);
  if (auto x = f.optional("dp_overlap")) s.dp_overlap = x->as_bool();
  if (auto x = f.optional("tp_overlap")) s.tp_overlap = x->as_bool();
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

// A link is named "from-to" by its nodes' names (both directions of that cable are degraded) or
// by its index in Cluster::links (that direction only).
std::vector<int> find_links(const Field& f, const hw::Cluster& c) {
  const std::string text = f.as_string();
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    const long index = std::stol(text);
    if (index >= static_cast<long>(c.links.size()))
      f.fail("expected a link index below " + std::to_string(c.links.size()) + ", found " + f.found());
    return {static_cast<int>(index)};
  }
  std::vector<int> out;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < c.links.size(); ++i) {
    const std::string& a = c.nodes[c.links[i].from].name;
    const std::string& b = c.nodes[c.links[i].to].name;
    names.push_back(a + "-" + b);
    if (text == a + "-" + b || text == b + "-" + a) out.push_back(static_cast<int>(i));
  }
  if (out.empty()) {
    const std::string guess = config::closest_match(text, names);
    f.fail("no link " + f.found() + " in " + c.name + (guess.empty() ? "" : "; did you mean '" + guess + "'?"));
  }
  return out;
}

Faults read_faults(const Field& f, const hw::Cluster& c) {
  Faults out;
  for (const Field& item : f.items()) {
    if (item.has("gpu")) {
      item.check_keys({"gpu", "compute_slowdown"});
      GpuFault g;
      g.gpu = read_int(item.required("gpu"), 0, c.gpu_count() - 1);
      g.compute_slowdown = item.required("compute_slowdown").as_positive_double();
      out.gpus.push_back(g);
    } else if (item.has("link")) {
      item.check_keys({"link", "bandwidth_factor"});
      LinkFault l;
      l.name = item.required("link").as_string();
      l.links = find_links(item.required("link"), c);
      l.bandwidth_factor = item.required("bandwidth_factor").as_positive_double();
      out.links.push_back(l);
    } else {
      item.fail("expected a fault such as {gpu: 3, compute_slowdown: 1.2} or {link: gpu0-nvswitch0, "
                "bandwidth_factor: 0.5}, found " + item.found());
    }
  }
  return out;
}

// A framework's own configuration file named by a strategy (`key`, a path relative to the
// scenario's folder): the strategy runs that framework, may not write what the file sets, and
// the file must exist. Returns its path.
std::filesystem::path framework_file(const Field& item, const Field& key, const Scenario& sc, Framework framework,
                                     const std::vector<std::string>& sets, const std::string& what) {
  if (auto f = item.optional("framework"); f && f->as_string() != to_string(framework))
    f->fail("a strategy with " + key.path().substr(key.path().rfind('.') + 1) + " runs framework: " + to_string(framework) +
            ", found " + f->found());
  for (const std::string& name : sets)
    if (auto f = item.optional(name)) f->fail(name + " is set by the " + what + " " + key.found() + "; write it in one place");
  std::filesystem::path path(key.as_string());
  if (path.is_relative()) path = std::filesystem::path(sc.file).parent_path() / path;
  if (!config::path_exists(path)) key.fail("no " + what + " at " + path.string() + " (a path relative to the scenario's folder)");
  return path;
}

// `deepspeed_config: FILE`: a ds_config.json (deepspeed_config.hpp).
void read_deepspeed_config(const Field& item, const Field& key, const Scenario& sc, Strategy& s) {
  const auto path = framework_file(item, key, sc, Framework::deepspeed, deepspeed_config_sets(), "DeepSpeed config");
  const auto doc = config::YamlDocument::load_file(path.string());
  apply_deepspeed_config(doc.root(), sc.training, sc.cluster.gpu_count(), s);
}

// `megatron_args: FILE`: a launch script or arguments file (megatron_args.hpp).
void read_megatron_args(const Field& item, const Field& key, const Scenario& sc, Strategy& s) {
  const auto path = framework_file(item, key, sc, Framework::megatron_core, megatron_args_sets(), "Megatron arguments");
  const auto script = config::read_shell_script(config::read_text_file(path.string()), path.string());
  apply_megatron_args(script, sc.model, sc.training, s);
}

// `torchtitan_config: FILE`: a torchtitan TOML job config (torchtitan_config.hpp).
void read_torchtitan_config(const Field& item, const Field& key, const Scenario& sc, Strategy& s) {
  const auto path = framework_file(item, key, sc, Framework::fsdp, torchtitan_config_sets(), "torchtitan config");
  apply_torchtitan_config(config::read_text_file(path.string()), path.string(), sc.model, sc.training,
                          sc.cluster.gpu_count(), s);
}

}  // namespace

Scenario read_scenario(const config::YamlDocument& doc) {
  const Field root = doc.root();
  root.check_keys({"name", "description", "hardware", "model", "training", "strategies", "faults", "sweep",
                   "validation"});
  Scenario s;
  s.file = root.file();
  s.name = root.has("name") ? root.required("name").as_string() : root.file();
  s.cluster = hw::read_cluster(root.required("hardware"));
  s.model = models::read_model(root.required("model"));
  const Field training = root.required("training");
  s.training = read_training(training);
  check_precision(s.cluster.gpu, s.training.precision, training);
  // A scenario with a `sweep:` section (read by sim/sweep) needs no strategies of its own.
  const bool sweep = root.has("sweep");
  const auto list = sweep ? root.optional("strategies") : std::optional<Field>(root.required("strategies"));
  const auto items = list ? list->items() : std::vector<Field>{};
  if (items.empty() && !sweep) list->fail("expected at least one strategy, found an empty list");
  for (std::size_t i = 0; i < items.size(); ++i) {
    s.strategies.push_back(read_strategy(items[i], static_cast<int>(i)));
    if (s.strategies.back().precision) check_precision(s.cluster.gpu, *s.strategies.back().precision, items[i]);
    const std::string trains = to_string(precision_of(s.training, s.strategies.back()));
    for (const auto& [key, what] : {std::pair{"fp8_recipe", "an FP8 scaling recipe needs"}, std::pair{"fp8_param_gather", "FP8 parameters need"}})
      if (auto r = items[i].optional(key); r && trains != "fp8")
        r->fail(std::string(what) + " precision: fp8, found precision: " + trains);
    if (auto ds = items[i].optional("deepspeed_config")) read_deepspeed_config(items[i], *ds, s, s.strategies.back());
    if (auto ma = items[i].optional("megatron_args")) read_megatron_args(items[i], *ma, s, s.strategies.back());
    if (auto tt = items[i].optional("torchtitan_config")) read_torchtitan_config(items[i], *tt, s, s.strategies.back());
  }
  for (std::size_t i = 0; i < s.strategies.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (s.strategies[i].name == s.strategies[j].name)
        (items[i].has("name") ? items[i].required("name") : items[i]).fail("strategy name '" + s.strategies[i].name + "' is used twice");
  if (auto faults = root.optional("faults")) s.faults = read_faults(*faults, s.cluster);
  return s;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  auto doc = config::YamlDocument::load_file(path);
  for (const std::string& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw config::ConfigError({"--set " + o, 0, 0}, "", "expected key.path=value, found '" + o + "'");
    doc.set_scalar(o.substr(0, eq), o.substr(eq + 1));
  }
  return read_scenario(doc);
}

hw::Dtype dtype_of(Precision p) {
  switch (p) {
    case Precision::bf16: return hw::Dtype::bf16;
    case Precision::fp16: return hw::Dtype::fp16;
    case Precision::fp8: return hw::Dtype::bf16;
  }
  return hw::Dtype::bf16;
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
    case Precision::fp8: return "fp8";
  }
  return "?";
}

ScheduleKind read_schedule(const Field& f) {
  const std::string name = f.as_choice({to_string(ScheduleKind::gpipe), to_string(ScheduleKind::one_f_one_b),
                                         to_string(ScheduleKind::interleaved), to_string(ScheduleKind::zb_h1)});
  return *schedule_named(name);
}

Recompute read_recompute(const Field& f) {
  const std::string name = f.as_choice({models::to_string(Recompute::none), models::to_string(Recompute::selective),
                                         models::to_string(Recompute::full)});
  return *recompute_named(name);
}

}  // namespace stepsim::plan
