// Reads hardware YAML (a preset, a file, or a scenario's `hardware:` value) into a Cluster.
// The file format is documented in hardware/presets/README.md.
#include "hardware/hardware_yaml.hpp"

#include <algorithm>
#include <filesystem>

#include "hardware/hardware_readers.hpp"
#include "sim/config/limits.hpp"
#include "sim/config/paths.hpp"
#include "sim/config/yaml_field.hpp"

namespace stepsim::hw {
namespace {

using config::ConfigError;
using config::Field;
using config::SourcePos;
namespace fs = std::filesystem;

fs::path presets_dir() { return fs::path(STEPSIM_DATA_DIR) / "hardware" / "presets"; }

double read_fraction(const Field& f) {
  const double v = f.as_double();
  if (v <= 0 || v > 1) f.fail("expected a fraction in (0, 1], found " + f.found());
  return v;
}

ClusterTemplate read_template(const Field& root, const std::string& default_name) {
  root.check_keys({"name", "gpu", "servers", "server", "network", "comm", "price_per_gpu_hour"});
  ClusterTemplate t;
  t.name = root.has("name") ? root.required("name").as_string() : default_name;
  t.gpu = read_gpu_field(root.required("gpu"));
  if (auto v = root.optional("price_per_gpu_hour")) t.gpu.price_per_hour = v->as_positive_double();
  if (auto v = root.optional("servers")) t.servers = read_gpu_count(*v, "servers");
  t.server = read_server(root.required("server"), t.gpu);
  if (auto v = root.optional("network")) t.network = read_network(*v);
  if (auto v = root.optional("comm")) read_comm_params(*v, t.comm);
  return t;
}

int nics_per_server(const ClusterTemplate& t) {
  if (const auto* s = std::get_if<ServerTemplate>(&t.server)) return s->nics;
  const auto& nodes = std::get<ExplicitServer>(t.server).nodes;
  return static_cast<int>(std::count_if(nodes.begin(), nodes.end(), [](const Node& n) { return n.kind == NodeKind::nic; }));
}

int gpus_per_server(const ClusterTemplate& t) {
  if (const auto* s = std::get_if<ServerTemplate>(&t.server)) return s->gpus;
  const auto& nodes = std::get<ExplicitServer>(t.server).nodes;
  return static_cast<int>(std::count_if(nodes.begin(), nodes.end(), [](const Node& n) { return n.kind == NodeKind::gpu; }));
}

// The place to blame for a shape that does not fit: the scenario's key, or the file.
struct Blame {
  SourcePos pos;
  std::string key;
};

void apply_shape(ClusterTemplate& t, const ClusterShape& shape, const Blame& nodes, const Blame& gpus) {
  if (shape.nodes) t.servers = *shape.nodes;
  if (shape.gpus_per_node) {
    auto* s = std::get_if<ServerTemplate>(&t.server);
    if (!s) throw ConfigError(gpus.pos, gpus.key, "the server of '" + t.name + "' is drawn link by link; its GPU count cannot be changed");
    s->gpus = *shape.gpus_per_node;
    if (s->nvlink == NvlinkTopology::mesh && s->nvlink_link.lanes < s->gpus - 1)
      throw ConfigError(gpus.pos, gpus.key, "'" + t.name + "' joins every two GPUs by a link of their own, " +
                                                std::to_string(s->nvlink_link.lanes) + " links per GPU: expected at most " +
                                                std::to_string(s->nvlink_link.lanes + 1) + " GPUs per server, found " +
                                                std::to_string(s->gpus));
  }
  // Checked before anything is built for them (a million GPUs ran out of memory building routes).
  if (const std::int64_t total = static_cast<std::int64_t>(t.servers) * gpus_per_server(t); total > config::limit_value(config::kMaxGpus)) {
    const Blame& blame = shape.nodes || !shape.gpus_per_node ? nodes : gpus;
    throw ConfigError(blame.pos, blame.key, config::over_limit(config::kMaxGpus, total));
  }
  if (t.servers > 1 && !t.network)
    throw ConfigError(nodes.pos, nodes.key, "'" + t.name + "' has no 'network', so it cannot have " + std::to_string(t.servers) + " servers");
  if (t.servers > 1 && nics_per_server(t) == 0)
    throw ConfigError(nodes.pos, nodes.key, "the servers of '" + t.name + "' have no NICs, so " + std::to_string(t.servers) + " of them cannot be networked");
}

[[noreturn]] void fail_unknown_preset(const std::string& name, const SourcePos& where, const std::string& key) {
  const auto names = preset_names();
  std::string message = "unknown hardware preset '" + name + "'";
  const std::string suggestion = config::closest_match(name, names);
  if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw ConfigError(where, key, message + " (presets: " + list + "; or give a path to a hardware YAML file)");
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.ends_with(".yaml") || s.ends_with(".yml");
}

// Loads a preset by name or a file by path (relative paths against `base_dir`), unbuilt.
ClusterTemplate load_template(const std::string& name_or_path, const fs::path& base_dir,
                              const SourcePos& where, const std::string& key) {
  if (!looks_like_path(name_or_path)) {
    const fs::path preset = presets_dir() / (name_or_path + ".yaml");
    if (!config::path_exists(preset)) fail_unknown_preset(name_or_path, where, key);
    const auto doc = config::YamlDocument::load_file(preset.string());
    return read_template(doc.root(), name_or_path);
  }
  const fs::path given(name_or_path);
  const fs::path path = given.is_absolute() || base_dir.empty() ? given : base_dir / given;
  const auto doc = config::YamlDocument::load_file(path.string());
  return read_template(doc.root(), given.stem().string());
}

Cluster read_preset_mapping(const Field& f) {
  f.check_keys({"preset", "gpu", "nodes", "gpus", "comm", "price_per_gpu_hour"});
  const Field preset = f.required("preset");
  const fs::path base = fs::path(f.file()).parent_path();
  ClusterTemplate t = load_template(preset.as_string(), base, preset.pos(), preset.path());
  // The same box with another GPU (a DGX A100 of 40 GB cards, say): its links stay the preset's.
  if (auto v = f.optional("gpu")) t.gpu = read_gpu_field(*v);
  ClusterShape shape;
  Blame nodes{f.pos(), f.path()}, gpus{f.pos(), f.path()};
  if (auto v = f.optional("nodes")) {
    shape.nodes = read_gpu_count(*v, "servers");
    nodes = {v->pos(), v->path()};
  }
  if (auto v = f.optional("gpus")) {
    shape.gpus_per_node = read_gpu_count(*v, "GPUs per server");
    gpus = {v->pos(), v->path()};
  }
  apply_shape(t, shape, nodes, gpus);
  if (auto v = f.optional("comm")) read_comm_params(*v, t.comm);
  if (auto v = f.optional("price_per_gpu_hour")) t.gpu.price_per_hour = v->as_positive_double();
  return build_cluster(t);
}

}  // namespace

int read_gpu_count(const Field& v, const char* what) {
  const std::int64_t n = v.as_positive_int();
  if (n > config::limit_value(config::kMaxGpus)) v.fail(config::over_limit(config::kMaxGpus, n, std::string(" ") + what));
  return static_cast<int>(n);
}

namespace {

void read_protocol_cost(const Field& f, ProtocolCost& p) {
  f.check_keys({"launch_latency", "ring_step_latency", "tree_step_latency", "network_step_latency", "bandwidth_share"});
  if (auto v = f.optional("launch_latency")) p.launch_latency_ps = v->as_duration_ps();
  if (auto v = f.optional("ring_step_latency")) p.ring_step_latency_ps = v->as_duration_ps();
  if (auto v = f.optional("tree_step_latency")) p.tree_step_latency_ps = v->as_duration_ps();
  if (auto v = f.optional("network_step_latency")) p.network_step_latency_ps = v->as_duration_ps();
  if (auto v = f.optional("bandwidth_share")) p.bandwidth_share = read_fraction(*v);
}

}  // namespace

void read_comm_params(const Field& f, CommParams& c) {
  f.check_keys({"nvlink_efficiency", "pcie_efficiency", "network_efficiency", "host_memory_efficiency",
                "ring_step_latency", "tree_step_latency", "network_step_latency", "nvls", "nvls_efficiency",
                "nvls_latency", "launch_latency", "ll", "ll128", "pipeline_chunk", "pipeline_pass_overhead",
                "host_call_overhead", "host_view_call", "host_copy_call", "cpu_adam_param"});
  if (auto v = f.optional("nvlink_efficiency")) c.nvlink_efficiency = read_fraction(*v);
  if (auto v = f.optional("pcie_efficiency")) c.pcie_efficiency = read_fraction(*v);
  if (auto v = f.optional("network_efficiency")) c.network_efficiency = read_fraction(*v);
  if (auto v = f.optional("host_memory_efficiency")) c.host_memory_efficiency = read_fraction(*v);
  if (auto v = f.optional("ring_step_latency")) c.ring_step_latency_ps = v->as_duration_ps();
  if (auto v = f.optional("tree_step_latency")) c.tree_step_latency_ps = v->as_duration_ps();
  if (auto v = f.optional("network_step_latency")) c.network_step_latency_ps = v->as_duration_ps();
  if (auto v = f.optional("nvls")) c.nvls = v->as_bool();
  if (auto v = f.optional("nvls_efficiency")) c.nvls_efficiency = read_fraction(*v);
  if (auto v = f.optional("nvls_latency")) c.nvls_latency_ps = v->as_duration_ps();
  if (auto v = f.optional("launch_latency")) c.launch_latency_ps = v->as_duration_ps();
  if (auto v = f.optional("ll")) read_protocol_cost(*v, c.ll);
  if (auto v = f.optional("ll128")) read_protocol_cost(*v, c.ll128);
  if (auto v = f.optional("pipeline_chunk")) c.pipeline_chunk_bytes = v->as_bytes();
  if (auto v = f.optional("pipeline_pass_overhead")) c.pipeline_pass_overhead_ps = v->as_duration_ps();
  if (auto v = f.optional("host_call_overhead")) c.host_call_overhead_ps = v->as_duration_ps();
  if (auto v = f.optional("host_view_call")) c.host_view_call_ps = v->as_duration_ps();
  if (auto v = f.optional("host_copy_call")) c.host_copy_call_ps = v->as_duration_ps();
  if (auto v = f.optional("cpu_adam_param")) c.cpu_adam_param_ps = v->as_duration_ps();
}

Cluster load_cluster(const std::string& name_or_path, const ClusterShape& shape) {
  ClusterTemplate t = load_template(name_or_path, {}, {}, "");
  const Blame blame{SourcePos{name_or_path, 0, 0}, ""};
  apply_shape(t, shape, blame, blame);
  return build_cluster(t);
}

Cluster load_cluster_text(const std::string& yaml, const std::string& name, const ClusterShape& shape) {
  const auto doc = config::YamlDocument::load_string(yaml, name);
  ClusterTemplate t = read_template(doc.root(), name);
  const Blame blame{SourcePos{name, 0, 0}, ""};
  apply_shape(t, shape, blame, blame);
  return build_cluster(t);
}

Cluster read_cluster(const Field& field) {
  if (field.is_scalar()) {
    ClusterTemplate t = load_template(field.as_string(), fs::path(field.file()).parent_path(), field.pos(), field.path());
    apply_shape(t, {}, {field.pos(), field.path()}, {field.pos(), field.path()});
    return build_cluster(t);
  }
  if (!field.is_map()) field.fail("expected a preset name or a mapping, found " + field.found());
  if (field.has("preset")) return read_preset_mapping(field);
  ClusterTemplate t = read_template(field, "hardware");
  apply_shape(t, {}, {field.pos(), field.path()}, {field.pos(), field.path()});
  return build_cluster(t);
}

std::vector<std::string> preset_names() {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(presets_dir()))
    if (entry.path().extension() == ".yaml") out.push_back(entry.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace stepsim::hw
