#include "sim/plan/torchtitan_config.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <toml++/toml.h>

#include "sim/plan/framework_defaults.hpp"

namespace stepsim::plan {
namespace {

using config::SourcePos;

// torchtitan/models/llama3/__init__.py llama3_configs (vocabulary 128,256, args.py's default); the
// FFN width as its FeedForward builds it: int(2·4d/3), times ffn_dim_multiplier, rounded up to
// multiple_of.
struct Flavor {
  int layers;
  std::int64_t dim;
  int heads, kv_heads;
  double multiplier;
  std::int64_t multiple_of;
  std::int64_t ffn() const {
    const auto h = static_cast<std::int64_t>(multiplier * static_cast<double>(2 * 4 * dim / 3));
    return (h + multiple_of - 1) / multiple_of * multiple_of;
  }
};
const std::map<std::string, Flavor> kLlama3{{"8B", {32, 4096, 32, 8, 1.3, 1024}},
                                            {"70B", {80, 8192, 64, 8, 1.3, 4096}},
                                            {"405B", {126, 16384, 128, 8, 1.2, 4096}}};

// Sections read and left: they change no step's time.
const std::set<std::string> kNoEffectSections{"job", "profiling", "metrics", "lr_scheduler", "checkpoint", "validation",
                                              "comm", "memory_estimation", "fault_tolerance"};

constexpr const char* kCompileNote =
    "torch.compile: the norms, rotary and activation are costed as fused kernels; its other fusions are not modelled";

class TorchtitanReader {
 public:
  TorchtitanReader(const toml::table& root, const std::string& path, const models::ModelSpec& model,
                   const Training& training, int gpus, Strategy& s)
      : root_(root), path_(path), model_(model), training_(training), gpus_(gpus), s_(s) {}

  void read() {
    s_.framework = Framework::fsdp;
    apply_framework_defaults(s_);
    s_.fsdp_reduce_fp32 = true;  // [training] mixed_precision_reduce: only "float32" is accepted
    read_parallelism();
    read_training();
    read_model();
    read_recompute();
    read_kernels();
    note_the_rest();
    std::stable_sort(notes_.begin(), notes_.end(), [](const auto& a, const auto& b) {
      return std::tie(a.first.line, a.first.column) < std::tie(b.first.line, b.first.column);
    });
    for (const auto& [pos, text] : notes_) s_.unmodelled.push_back(config::to_string(pos) + ": " + text);
  }

 private:
  SourcePos pos_of(const toml::node& n) const {
    return {path_, static_cast<int>(n.source().begin.line), static_cast<int>(n.source().begin.column)};
  }

  [[noreturn]] void fail(const toml::node& n, const std::string& key, const std::string& message) const {
    throw config::ConfigError(pos_of(n), key, message);
  }

  void note(const toml::node& n, const std::string& key, const std::string& what) {
    notes_.emplace_back(pos_of(n), key + ": " + what);
  }

  const toml::node* at(const std::string& section, const std::string& key) const {
    const toml::table* t = root_[section].as_table();
    return t ? t->get(key) : nullptr;
  }

  std::int64_t integer(const std::string& section, const std::string& key, std::int64_t low, std::int64_t high,
                       std::int64_t fallback) const {
    const toml::node* n = at(section, key);
    if (!n) return fallback;
    // Only an integer node: toml++'s value<int64_t>() would convert a float, out of range
    // undefined (a fuzzed 4e21), in range silently.
    const auto v = n->is_integer() ? n->value<std::int64_t>() : std::nullopt;
    if (!v || *v < low || *v > high)
      fail(*n, section + "." + key, "expected an integer from " + std::to_string(low) + " to " + std::to_string(high) +
                                        ", found " + describe(*n));
    return *v;
  }

  std::string text(const std::string& section, const std::string& key, const std::string& fallback) const {
    const toml::node* n = at(section, key);
    if (!n) return fallback;
    if (!n->is_string()) fail(*n, section + "." + key, "expected a string, found " + describe(*n));
    return std::string(*n->value<std::string_view>());
  }

  bool flag(const std::string& section, const std::string& key) const {
    const toml::node* n = at(section, key);
    if (!n) return false;
    if (!n->is_boolean()) fail(*n, section + "." + key, "expected true or false, found " + describe(*n));
    return *n->value<bool>();
  }

  static std::string describe(const toml::node& n) {
    if (auto s = n.value<std::string_view>()) return "'" + std::string(*s) + "'";
    if (n.is_integer()) return std::to_string(*n.value<std::int64_t>());
    if (n.is_floating_point()) return std::to_string(*n.value<double>());
    if (n.is_boolean()) return *n.value<bool>() ? "true" : "false";
    return n.is_table() ? "a table" : n.is_array() ? "an array" : "a value";
  }

  void read_parallelism() {
    constexpr std::int64_t kMax = 1 << 20;
    s_.tp = static_cast<int>(integer("parallelism", "tensor_parallel_degree", 1, kMax, 1));
    s_.sequence_parallel = s_.tp > 1;  // torchtitan's TP plan shards the norms' sequence too
    s_.pp = static_cast<int>(integer("parallelism", "pipeline_parallel_degree", 1, kMax, 1));
    if (const auto* n = at("parallelism", "tensor_parallel_degree")) s_.where.tp = pos_of(*n);
    if (const auto* n = at("parallelism", "pipeline_parallel_degree")) s_.where.pp = pos_of(*n);
    // Expert parallelism in torchtitan borrows its ranks from the FSDP shard group; stepsim models EP
    // with ZeRO-0/1 only (sharded experts are not modelled).
    if (integer("parallelism", "expert_parallel_degree", 1, kMax, 1) > 1)
      fail(*at("parallelism", "expert_parallel_degree"), "parallelism.expert_parallel_degree",
           "expert parallelism over FSDP-sharded experts is not modelled (stepsim models EP with ZeRO-0/1 or Megatron-Core's "
           "distributed optimizer); expected 1");
    // Context parallelism (torchtitan's context_parallel over the cp mesh; FSDP shards over
    // dp_shard · cp): costed as the ring's K/V exchange; torchtitan's default rotation all-gathers
    // the K/V instead, which is said.
    s_.cp = static_cast<int>(integer("parallelism", "context_parallel_degree", 1, kMax, 1));
    if (const auto* n = at("parallelism", "context_parallel_degree")) s_.where.cp = pos_of(*n);
    if (s_.cp > 1 && text("parallelism", "context_parallel_rotate_method", "allgather") != "alltoall") {
      const toml::node* n = at("parallelism", "context_parallel_rotate_method");
      note(n ? *n : *at("parallelism", "context_parallel_degree"), "parallelism.context_parallel_rotate_method",
           "the all-gather rotation of K/V is costed as the ring's pass-the-chunk exchange (same bytes, other collectives)");
    }
    const std::int64_t replicate = integer("parallelism", "data_parallel_replicate_degree", 1, kMax, 1);
    std::int64_t shard = integer("parallelism", "data_parallel_shard_degree", -1, kMax, -1);
    const toml::node* shard_node = at("parallelism", "data_parallel_shard_degree");
    // -1: "leftover ranks will be used (After DP_REPLICATE/SP/PP)"; CP takes its own degree too.
    const std::int64_t others = replicate * s_.tp * s_.pp * s_.cp;
    if (shard == 0) fail(*shard_node, "parallelism.data_parallel_shard_degree", "expected -1 or a positive degree, found 0");
    if (shard == -1) {
      if (gpus_ % others != 0)
        throw config::ConfigError(shard_node ? pos_of(*shard_node) : SourcePos{path_, 0, 0}, "parallelism.data_parallel_shard_degree",
"the leftover degree GPUs / (replicate · tp · pp · cp) = " + std::to_string(gpus_) + " / " +
                                      std::to_string(others) + " is not a whole number");
      shard = gpus_ / others;
    }
    s_.dp = static_cast<int>(replicate * shard);
    s_.where.dp = shard_node ? pos_of(*shard_node) : s_.where.dp;
    s_.zero_stage = shard * s_.cp > 1 ? 3 : 0;  // FSDP shards over dp_shard · cp
    s_.fsdp_shard_degree = shard > 1 && replicate > 1 ? static_cast<int>(shard) : 0;
    read_reshard_policy();
    if (s_.pp > 1) read_schedule();
    if (flag("parallelism", "enable_async_tensor_parallel"))
      note(*at("parallelism", "enable_async_tensor_parallel"), "parallelism.enable_async_tensor_parallel",
           "async TP is not modelled: TP collectives are costed as torchtitan's plain TP runs them");
  }

  // apply_fsdp (torchtitan/models/llama3/infra/parallelize.py): reshard_after_forward is True for
  // "always", False for "never", and `not pp_enabled` for "default". Kept gathered from forward to
  // backward without PP is SHARD_GRAD_OP (zero_stage 2 under fsdp); with PP the stage keeps them
  // across microbatches as well (Strategy::fsdp_keeps_gathered).
  void read_reshard_policy() {
    const std::string policy = text("parallelism", "fsdp_reshard_after_forward", "default");
    const toml::node* n = at("parallelism", "fsdp_reshard_after_forward");
    if (policy != "default" && policy != "always" && policy != "never")
      fail(*n, "parallelism.fsdp_reshard_after_forward", "expected default, always or never, found '" + policy + "'");
    if (s_.zero_stage != 3) return;
    if (policy == "never" && s_.pp == 1) s_.zero_stage = 2;
    if (policy == "always" && s_.pp > 1)
      fail(*n, "parallelism.fsdp_reshard_after_forward",
           "resharding after every forward of a pipeline stage (which then keeps its parameters after the backward) "
           "is not modelled; expected default or never with pipeline_parallel_degree > 1");
  }

  void read_schedule() {
    const std::string name = text("parallelism", "pipeline_parallel_schedule", "1F1B");
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    const toml::node* n = at("parallelism", "pipeline_parallel_schedule");
    if (lower == "1f1b") {
      s_.schedule = ScheduleKind::one_f_one_b;
    } else if (lower == "gpipe") {
      s_.schedule = ScheduleKind::gpipe;
    } else if (lower == "interleaved1f1b") {
      const toml::node* per = at("parallelism", "pipeline_parallel_layers_per_stage");
      if (!per) fail(*n, "parallelism.pipeline_parallel_schedule", "Interleaved1F1B needs pipeline_parallel_layers_per_stage here");
      const std::int64_t layers = integer("parallelism", "pipeline_parallel_layers_per_stage", 1, 1 << 20, 1);
      const std::int64_t stages = model_.layers / layers;
      if (model_.layers % layers != 0 || stages % s_.pp != 0 || stages / s_.pp < 2)
        fail(*per, "parallelism.pipeline_parallel_layers_per_stage",
             "expected a divisor of the model's " + std::to_string(model_.layers) + " layers giving at least 2 stages per rank");
      s_.schedule = ScheduleKind::interleaved;
      s_.v = static_cast<int>(stages / s_.pp);
    } else {
      fail(*n, "parallelism.pipeline_parallel_schedule", "expected 1F1B, GPipe or Interleaved1F1B (the schedules stepsim "
                                                         "simulates), found '" + name + "'");
    }
    if (n) s_.where.schedule = pos_of(*n);
  }

  void read_training() {
    const char* batch_key = at("training", "local_batch_size") ? "local_batch_size" : "batch_size";
    const std::int64_t local = integer("training", batch_key, 1, 1 << 20, 8);
    if (const auto* n = at("training", batch_key)) s_.where.micro_batch = pos_of(*n);
    if (s_.pp > 1) {
      const std::int64_t micro = integer("parallelism", "pipeline_parallel_microbatch_size", 1, 1 << 20, 1);
      if (local % micro != 0)
        fail(*at("parallelism", "pipeline_parallel_microbatch_size"), "parallelism.pipeline_parallel_microbatch_size",
             "expected a divisor of the local batch " + std::to_string(local));
      s_.micro_batch = static_cast<int>(micro);
    } else {
      s_.micro_batch = static_cast<int>(local);
    }
    // Global batch: -1 = local batch · DP (job_config.py); otherwise gradient accumulation.
    const std::int64_t global = integer("training", "global_batch_size", -1, std::int64_t{1} << 40, -1);
    const std::int64_t expected = global == -1 ? local * s_.dp : global;
    if (expected != training_.global_batch) {
      const toml::node* n = at("training", "global_batch_size");
      if (!n) n = at("training", batch_key);
      throw config::ConfigError(n ? pos_of(*n) : SourcePos{path_, 0, 0}, "training",
                                "this config trains " + std::to_string(expected) + " sequences per step" +
                                    (global == -1 ? " (local batch " + std::to_string(local) + " x DP " + std::to_string(s_.dp) + ")" : "") +
                                    "; the scenario's training.global_batch is " + std::to_string(training_.global_batch));
    }
    if (const auto* n = at("training", "seq_len"); n && integer("training", "seq_len", 1, 1 << 30, 0) != training_.seq_len)
      fail(*n, "training.seq_len", "expected " + std::to_string(training_.seq_len) + " (the scenario's training.seq_len), found " +
                                       describe(*n));
    const std::string param = text("training", "mixed_precision_param", "bfloat16");
    if (param != "bfloat16" || precision_of(training_, s_) == Precision::fp16) {
      const toml::node* n = at("training", "mixed_precision_param");
      throw config::ConfigError(n ? pos_of(*n) : SourcePos{path_, 0, 0}, "training.mixed_precision_param",
                                "this config trains in " + param + " (torchtitan's default is bfloat16); the scenario's "
                                "training.precision is " + std::string(to_string(precision_of(training_, s_))));
    }
    if (const auto* n = at("training", "max_norm"); n && n->value<double>().value_or(0) > 0)
      note(*n, "training.max_norm", "the gradient norm's pass over every gradient is not costed");
    if (flag("training", "compile"))
      note(*at("training", "compile"), "training.compile", kCompileNote);
    if (flag("training", "enable_cpu_offload"))
      note(*at("training", "enable_cpu_offload"), "training.enable_cpu_offload", "CPU offload is not modelled");
  }

  // The llama3 flavour's shape against the scenario's model.
  void read_model() {
    if (const auto* c = root_["model"]["converters"].node()) {
      const bool float8 = (c->is_string() && c->value<std::string_view>()->find("float8") != std::string_view::npos) ||
                          (c->is_array() && std::any_of(c->as_array()->begin(), c->as_array()->end(), [](const toml::node& e) {
                             return e.value<std::string_view>().value_or("") == "float8";
                           }));
      if (float8) note(*c, "model.converters", "float8 linear layers are not modelled; costed at the scenario's precision");
    }
    const std::string name = text("model", "name", "llama3");
    const std::string flavor = text("model", "flavor", "debugmodel");
    const toml::node* n = at("model", "flavor");
    const auto it = kLlama3.find(flavor);
    if (name != "llama3" || it == kLlama3.end()) {
      if (n) note(*n, "model.flavor", "not a llama3 flavour stepsim knows (8B, 70B, 405B): the scenario's model is simulated");
      return;
    }
    const Flavor& f = it->second;
    const std::string who = "llama3 " + flavor + " has ";
    auto same = [&](const std::string& what, std::int64_t theirs, std::int64_t ours) {
      if (theirs != ours)
        fail(n ? *n : *root_.get("model"), "model.flavor", who + what + " " + std::to_string(theirs) +
                                                            ", the scenario's model " + model_.name + " " + std::to_string(ours));
    };
    same("layers", f.layers, model_.layers);
    same("hidden", f.dim, model_.hidden);
    same("heads", f.heads, model_.heads);
    same("kv_heads", f.kv_heads, model_.kv_heads);
    same("ffn_hidden", f.ffn(), model_.ffn_hidden);
  }

  // torchtitan's Llama runs nn.RMSNorm (at::rms_norm's composite), apply_rotary_emb's complex
  // multiply and silu(w1(x)) * w3(x) as eager kernels (torchtitan/models/llama3/model.py);
  // torch.compile, applied per transformer block ([compile] enable, the older [training]
  // compile), fuses them. The older [model] norm_type "fused_rmsnorm" is one Triton kernel.
  void read_kernels() {
    if (flag("training", "compile") || flag("compile", "enable")) {
      s_.eager_ops = {};
      return;
    }
    s_.eager_ops = {.norm = true, .rotary = true, .activation = true};
    const std::string norm = text("model", "norm_type", "rmsnorm");
    if (norm == "fused_rmsnorm") s_.eager_ops.norm = false;
    else if (norm != "rmsnorm")
      note(*at("model", "norm_type"), "model.norm_type", "a " + norm + " model: the scenario's model and its norm are simulated");
  }

  void read_recompute() {
    const std::string mode = text("activation_checkpoint", "mode", "selective");
    const toml::node* n = at("activation_checkpoint", "mode");
    if (mode == "none") {
      s_.recompute = Recompute::none;
    } else if (mode == "full") {
      s_.recompute = Recompute::full;
    } else if (mode == "selective") {
      // "'int' = ac every positive int layer or 'op', ac based on ops policy"; a string either way.
      const toml::node* option = at("activation_checkpoint", "selective_ac_option");
      std::string value = "op";
      if (option) value = option->is_integer() ? std::to_string(*option->value<std::int64_t>()) : text("activation_checkpoint", "selective_ac_option", "op");
      if (value == "op") {
        s_.recompute = Recompute::selective;
        s_.selective_policy = models::SelectivePolicy::torch_ops;
        s_.where.selective_policy = option ? pos_of(*option) : n ? pos_of(*n) : SourcePos{path_, 0, 0};
      } else {
        s_.recompute = Recompute::full;
        if (value != "1")
          note(*option, "activation_checkpoint.selective_ac_option",
               "checkpointing one block in every " + value + " is not modelled: costed as every block recomputed");
      }
    } else {
      fail(*n, "activation_checkpoint.mode", "expected none, selective or full, found '" + mode + "'");
    }
  }

  void note_the_rest() {
    static const std::map<std::string, std::set<std::string>> kRead{
        {"model", {"name", "flavor", "converters", "hf_assets_path", "tokenizer_path", "print_after_conversion", "norm_type"}},
        {"training", {"local_batch_size", "batch_size", "global_batch_size", "seq_len", "max_norm", "compile",
                      "enable_cpu_offload", "mixed_precision_param", "mixed_precision_reduce", "steps", "dataset",
                      "dataset_path", "gc_freq", "gc_debug", "seed", "deterministic", "warmup_steps"}},
        {"parallelism", {"data_parallel_replicate_degree", "data_parallel_shard_degree", "tensor_parallel_degree",
                         "pipeline_parallel_degree", "context_parallel_degree", "expert_parallel_degree",
                         "enable_async_tensor_parallel", "pipeline_parallel_schedule", "pipeline_parallel_microbatch_size",
                         "pipeline_parallel_layers_per_stage", "disable_loss_parallel", "fsdp_reshard_after_forward",
                         "enable_compiled_autograd", "pipeline_parallel_split_points", "module_fqns_per_model_part",
                         "pipeline_parallel_first_stage_less_layers", "pipeline_parallel_last_stage_less_layers",
                         "pipeline_parallel_schedule_csv", "context_parallel_rotate_method", "expert_tensor_parallel_degree"}},
        {"activation_checkpoint", {"mode", "selective_ac_option", "per_op_sac_force_recompute_mm_shapes_by_fqns",
                                   "early_stop", "memory_budget", "visualize_memory_budget_pareto"}},
        {"optimizer", {"name", "lr", "beta1", "beta2", "eps", "weight_decay", "implementation", "early_step_in_backward"}}};
    for (const auto& [section, node] : root_) {
      const std::string name(section.str());
      if (kNoEffectSections.count(name)) continue;
      if (name == "float8" || name == "mx" || name == "quantize") {
        bool enabled = false;
        if (const auto* t = node.as_table())
          for (const auto& [key, value] : *t) enabled = enabled || value.value<bool>().value_or(false);
        if (enabled) note(node, name, "low-precision training is not modelled; costed at the scenario's precision");
        continue;
      }
      if (name == "compile") {
        if (flag("compile", "enable")) note(*at("compile", "enable"), "compile.enable", kCompileNote);
        continue;
      }
      const auto known = kRead.find(name);
      if (known == kRead.end()) {
        note(node, name, "not a torchtitan section stepsim knows; not modelled");
        continue;
      }
      if (const auto* t = node.as_table())
        for (const auto& [key, value] : *t)
          if (!known->second.count(std::string(key.str())))
            note(value, name + "." + std::string(key.str()), "not a torchtitan key stepsim knows; not modelled");
    }
    if (const std::string opt = text("optimizer", "name", "AdamW"); opt != "AdamW" && opt != "Adam")
      note(*at("optimizer", "name"), "optimizer.name", "stepsim costs Adam's states and step, not " + opt + "'s");
  }

  const toml::table& root_;
  const std::string& path_;
  const models::ModelSpec& model_;
  const Training& training_;
  int gpus_;
  Strategy& s_;
  std::vector<std::pair<SourcePos, std::string>> notes_;  // sorted into file order at the end
};

}  // namespace

const std::vector<std::string>& torchtitan_config_sets() {
  static const std::vector<std::string> keys{"tp", "pp", "dp", "zero_stage", "micro_batch", "schedule", "v",
                                             "sequence_parallel", "recompute", "fsdp_sharding", "fsdp_reduce_fp32", "cp",
                                             "eager_ops", "selective_policy"};
  return keys;
}

void apply_torchtitan_config(const std::string& text, const std::string& path, const models::ModelSpec& model,
                             const Training& training, int gpus, Strategy& s) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw config::ConfigError({path, static_cast<int>(e.source().begin.line), static_cast<int>(e.source().begin.column)}, "",
                              "not valid TOML: " + std::string(e.description()));
  }
  TorchtitanReader(root, path, model, training, gpus, s).read();
}

}  // namespace stepsim::plan
