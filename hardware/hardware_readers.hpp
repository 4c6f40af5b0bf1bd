// Internal to hardware/: the pieces of the hardware YAML reader, split over files by section.
// Each takes a positioned Field and throws ConfigError at the offending value.
#pragma once

#include <string>
#include <vector>

#include "hardware/cluster_template.hpp"
#include "sim/config/yaml_field.hpp"

namespace stepsim::hw {

/// Looks a GPU up in hardware/gpus.yaml by name or alias (case-insensitive); an unknown name is
/// a ConfigError at `where` with "did you mean" and the list of GPUs.
GpuSpec find_gpu_spec(const std::string& name, const config::SourcePos& where, const std::string& key_path);
/// A hardware file's `gpu:`: a name from gpus.yaml, or a GPU defined inline in gpus.yaml's format
/// (every figure, or `base: NAME` and the figures that differ from it; `peak:` may list only the
/// dtypes that change). Units and positioned errors as in gpus.yaml.
GpuSpec read_gpu_field(const config::Field& f);
/// Every GPU of gpus.yaml, read in full (tests use it to check the whole file).
std::vector<GpuSpec> load_all_gpu_specs();

/// Overwrites the fields of `into` that `f` (a `comm:` mapping) sets.
/// A count of servers or of GPUs per server: above the GPU limit (config/limits.hpp) it is too
/// many on its own, and would not fit an int; the cluster's total is checked once the shape is set.
int read_gpu_count(const config::Field& v, const char* what);
void read_comm_params(const config::Field& f, CommParams& into);
/// `server:` in either form; GPU figures fill what a template leaves out.
std::variant<ServerTemplate, ExplicitServer> read_server(const config::Field& f, const GpuSpec& gpu);
NetworkTemplate read_network(const config::Field& f);

}  // namespace stepsim::hw
