// Reading a scenario file (scenario.hpp shows the format); its strategies are strategy_yaml.cpp's.
// Only these files see a scenario's YAML; everything after them works on the Scenario struct.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hardware/hardware_yaml.hpp"
#include "sim/config/limits.hpp"
#include "sim/config/paths.hpp"
#include "models/model_yaml.hpp"
#include "sim/plan/deepspeed_config.hpp"
#include "sim/plan/megatron_args.hpp"
#include "sim/plan/torchtitan_config.hpp"
#include "sim/config/text_file.hpp"
#include "sim/config/yaml_field.hpp"
#include "sim/plan/scenario.hpp"
#include "sim/plan/strategy_yaml.hpp"

namespace stepsim::plan {
namespace {

using config::Field;

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

Scenario read_scenario_text(const std::string& yaml, const std::string& name) {
  return read_scenario(config::YamlDocument::load_string(yaml, name));
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
