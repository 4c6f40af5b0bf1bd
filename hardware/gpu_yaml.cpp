// Reads hardware/gpus.yaml (the one place GPU figures live) into GpuSpec.
#include <algorithm>
#include <cctype>

#include "hardware/hardware_readers.hpp"
#include "hardware/hardware_yaml.hpp"
#include "sim/config/yaml_field.hpp"

namespace stepsim::hw {
namespace {

using config::Field;

std::string gpus_file() { return std::string(STEPSIM_DATA_DIR) + "/hardware/gpus.yaml"; }

const std::vector<std::string> kModelKeys{"matmul_efficiency", "fp8_matmul_ratio", "matmul_tile_m",    "matmul_tile_n",
                                          "matmul_k_half",     "matmul_tile_half_intensity",
                                          "attention_efficiency", "attention_backward_efficiency",
                                          "cudnn_attention_efficiency", "cudnn_attention_backward_efficiency",
                                          "memory_efficiency", "launch_overhead",  "comm_slowdown"};

// A model parameter from the GPU entry, else from `defaults:`, else the struct default.
void read_model_parameters(const Field& f, GpuSpec& g) {
  if (auto v = f.optional("matmul_efficiency")) g.matmul_efficiency = v->as_positive_double();
  if (auto v = f.optional("fp8_matmul_ratio")) g.fp8_matmul_ratio = v->as_positive_double();
  if (auto v = f.optional("matmul_tile_m")) g.matmul_tile_m = static_cast<int>(v->as_positive_int());
  if (auto v = f.optional("matmul_tile_n")) g.matmul_tile_n = static_cast<int>(v->as_positive_int());
  if (auto v = f.optional("matmul_k_half")) g.matmul_k_half = v->as_positive_double();
  if (auto v = f.optional("matmul_tile_half_intensity")) g.matmul_tile_half_intensity = v->as_positive_double();
  if (auto v = f.optional("attention_efficiency")) g.attention_efficiency = v->as_positive_double();
  if (auto v = f.optional("attention_backward_efficiency"))
    g.attention_backward_efficiency = v->as_positive_double();
  if (auto v = f.optional("cudnn_attention_efficiency")) g.cudnn_attention_efficiency = v->as_positive_double();
  if (auto v = f.optional("cudnn_attention_backward_efficiency"))
    g.cudnn_attention_backward_efficiency = v->as_positive_double();
  if (auto v = f.optional("memory_efficiency")) g.memory_efficiency = v->as_positive_double();
  if (auto v = f.optional("launch_overhead")) g.launch_overhead_ps = v->as_duration_ps();
  if (auto v = f.optional("comm_slowdown")) {
    g.comm_slowdown = v->as_double();
    if (g.comm_slowdown < 0) v->fail("expected a non-negative number, found " + v->found());
  }
}

// The dtypes `f` lists, over `p` (an inline GPU's base keeps the rest).
PeakFlops read_peak(const Field& f, PeakFlops p = {}) {
  f.check_keys({"bf16", "fp16", "tf32", "fp32", "fp8"});
  if (auto v = f.optional("bf16")) p.bf16 = v->as_flop_rate();
  if (auto v = f.optional("fp16")) p.fp16 = v->as_flop_rate();
  if (auto v = f.optional("tf32")) p.tf32 = v->as_flop_rate();
  if (auto v = f.optional("fp32")) p.fp32 = v->as_flop_rate();
  if (auto v = f.optional("fp8")) p.fp8 = v->as_flop_rate();
  return p;
}

std::vector<std::string> gpu_keys(std::initializer_list<const char*> extra) {
  std::vector<std::string> keys{"name", "aliases", "peak", "memory", "memory_bandwidth", "sm_count",
                                "nvlink", "pcie", "fitted_to", "fp8_transposes"};
  keys.insert(keys.end(), kModelKeys.begin(), kModelKeys.end());
  keys.insert(keys.end(), extra.begin(), extra.end());
  return keys;
}

// The figures `f` gives, over `g`. `complete`: every figure is required (a gpus.yaml entry, an
// inline GPU without a base), else each is optional (an inline GPU's changes to its base).
void read_figures(const Field& f, GpuSpec& g, bool complete) {
  auto field = [&](const char* key) { return complete ? std::optional<Field>(f.required(key)) : f.optional(key); };
  if (auto v = field("name")) g.name = v->as_string();
  if (auto v = field("peak")) g.peak = read_peak(*v, complete ? PeakFlops{} : g.peak);
  if (auto v = field("memory")) g.memory_bytes = v->as_bytes();
  if (auto v = field("memory_bandwidth")) g.memory_bytes_per_s = v->as_bandwidth();
  if (auto v = field("sm_count")) g.sm_count = static_cast<int>(v->as_positive_int());
  if (auto nv = f.optional("nvlink")) {
    nv->check_keys({"links", "bandwidth"});
    g.nvlink_links = static_cast<int>(nv->required("links").as_positive_int());
    g.nvlink_bytes_per_s = nv->required("bandwidth").as_bandwidth();
  }
  if (auto pcie = field("pcie")) {
    pcie->check_keys({"generation", "bandwidth"});
    g.pcie_generation = static_cast<int>(pcie->required("generation").as_positive_int());
    g.pcie_bytes_per_s = pcie->required("bandwidth").as_bandwidth();
  }
  if (auto v = f.optional("fitted_to")) g.fitted_to = v->as_string();
  if (auto v = f.optional("fp8_transposes")) g.fp8_transposes = v->as_bool();
  read_model_parameters(f, g);
}

GpuSpec read_gpu(const Field& f, const std::optional<Field>& defaults) {
  f.check_keys(gpu_keys({}));
  GpuSpec g;
  if (defaults) read_model_parameters(*defaults, g);
  read_figures(f, g, true);
  return g;
}

std::vector<std::string> names_of(const Field& entry) {
  std::vector<std::string> out{entry.required("name").as_string()};
  if (auto aliases = entry.optional("aliases"))
    for (const auto& a : aliases->items()) out.push_back(a.as_string());
  return out;
}

struct GpuFile {
  config::YamlDocument doc;
  std::optional<Field> defaults;
  std::vector<Field> entries;
};

GpuFile open_gpus_file() {
  GpuFile file{config::YamlDocument::load_file(gpus_file()), std::nullopt, {}};
  const Field root = file.doc.root();
  root.check_keys({"defaults", "gpus"});
  file.defaults = root.optional("defaults");
  if (file.defaults) file.defaults->check_keys(kModelKeys);
  file.entries = root.required("gpus").items();
  return file;
}

}  // namespace

GpuSpec find_gpu_spec(const std::string& name, const config::SourcePos& where,
                      const std::string& key_path) {
  const GpuFile file = open_gpus_file();
  std::vector<std::string> all_names;
  for (const auto& entry : file.entries)
    for (const auto& n : names_of(entry)) {
      if (config::ascii_lower(n) == config::ascii_lower(name)) return read_gpu(entry, file.defaults);
      all_names.push_back(n);
    }
  std::string message = "unknown GPU '" + name + "'";
  const std::string suggestion = config::closest_match(name, all_names);
  if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
  std::string known;
  for (const auto& n : gpu_names()) known += (known.empty() ? "" : ", ") + n;
  throw config::ConfigError(where, key_path, message + " (known GPUs: " + known + ")");
}

GpuSpec load_gpu_spec(const std::string& name) { return find_gpu_spec(name, {}, ""); }

GpuSpec read_gpu_field(const Field& f) {
  if (!f.is_map()) return find_gpu_spec(f.as_string(), f.pos(), f.path());
  f.check_keys(gpu_keys({"base"}));
  if (f.has("aliases")) f.required("aliases").fail("an inline GPU has no aliases (they name gpus.yaml entries)");
  if (auto base = f.optional("base")) {
    GpuSpec g = find_gpu_spec(base->as_string(), base->pos(), base->path());
    read_figures(f, g, false);
    return g;
  }
  const GpuFile file = open_gpus_file();
  return read_gpu(f, file.defaults);
}

std::vector<std::string> gpu_names() {
  std::vector<std::string> out;
  for (const auto& entry : open_gpus_file().entries) out.push_back(entry.required("name").as_string());
  return out;
}

/// Every entry read in full, so a mistake anywhere in gpus.yaml fails a test, not a later run.
std::vector<GpuSpec> load_all_gpu_specs() {
  const GpuFile file = open_gpus_file();
  std::vector<GpuSpec> out;
  for (const auto& entry : file.entries) out.push_back(read_gpu(entry, file.defaults));
  return out;
}

}  // namespace stepsim::hw
