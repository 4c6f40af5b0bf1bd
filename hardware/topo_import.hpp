// `stepsim topo import`: what `nvidia-smi topo -m` prints, turned into a hardware YAML file that
// load_cluster accepts, such that topo show of it prints the same GPU x GPU codes.
//
// The parser takes the text as pasted: shell prompts, ANSI escapes, tabs or spaces, CRLF, NIC
// rows (NIC0 or mlx5_0), CPU/NUMA affinity and GPU NUMA ID columns, the legend and NIC legend,
// wrapped legend lines, old formats. The builder maps the codes to a graph (topo_import_build.cpp):
//   NV#  -> # NVLinks of the GPU's generation between the pair; a group of 3 or more GPUs with the
//           same NV# between every two becomes one NVSwitch;
//   PIX  -> a shared PCIe switch; PXB -> a switch above switches; PHB -> a shared host bridge (CPU);
//   NODE -> host bridges of one socket; SYS -> sockets joined by the socket interconnect.
// Errors (a ragged row, an unknown code, an asymmetric matrix, codes no PCIe tree can give) are
// ConfigErrors at the cell's line and column, both 1-based, columns counting characters as pasted.
#pragma once

#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "sim/config/config_error.hpp"

namespace stepsim::hw {

struct TopoDevice {
  std::string label;         ///< row label as printed: "GPU3", "NIC0", "mlx5_0"
  std::string name;          ///< "gpu3", or the NIC's name from the NIC legend ("mlx5_2")
  bool is_gpu = false;
  std::string cpu_affinity;  ///< "0-11,24-35"; empty when not printed
  std::string numa_affinity; ///< "0", "N/A"; empty when not printed
};

struct TopoMatrix {
  std::vector<TopoDevice> devices;                      ///< GPUs first, in order, then NICs
  std::vector<std::vector<std::string>> codes;          ///< [row][column], "X" on the diagonal
  std::vector<std::vector<config::SourcePos>> where;    ///< position of each cell
};

/// Parses the text; `file` names it in errors.
TopoMatrix parse_nvidia_smi_topo(const std::string& text, const std::string& file);
/// Hardware YAML for one server with these devices; `gpu` from gpus.yaml, `gpu_name` as written.
std::string topo_to_hardware_yaml(const TopoMatrix& m, const GpuSpec& gpu, const std::string& source);
/// Both, plus a check that the graph reproduces every code; the YAML text.
std::string import_nvidia_smi_topo(const std::string& text, const std::string& file, const std::string& gpu_name);

}  // namespace stepsim::hw
