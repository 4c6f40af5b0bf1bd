// Reading hardware: a preset name (`dgx-a100`), a hardware YAML file, or a scenario's
// `hardware:` mapping (`{preset: dgx-a100, nodes: 4}`, `{preset: a100-pcie, gpus: 4}`, or a full
// description). Every mistake is a ConfigError with its position.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "sim/config/yaml_fwd.hpp"

namespace stepsim::hw {

struct ClusterShape {
  std::optional<int> nodes;            ///< servers
  std::optional<int> gpus_per_node;    ///< GPUs per server
};

/// `name_or_path`: a preset name or a path to a hardware YAML file.
Cluster load_cluster(const std::string& name_or_path, const ClusterShape& shape = {});
/// A hardware YAML document given as text (`topo import` output, tests); `name` names it in errors.
Cluster load_cluster_text(const std::string& yaml, const std::string& name, const ClusterShape& shape = {});
/// A scenario's `hardware:` value: a preset name string, or a mapping.
Cluster read_cluster(const config::Field& field);
/// Names of the built-in presets, for help text and "did you mean".
std::vector<std::string> preset_names();

/// GPU specs from hardware/gpus.yaml by name ("A100-SXM4-80GB", or an alias like "a100-80gb").
GpuSpec load_gpu_spec(const std::string& name);
std::vector<std::string> gpu_names();

}  // namespace stepsim::hw
