// `stepsim topo show HW` and `stepsim topo import FILE --gpu NAME`: look at a hardware graph the
// way `nvidia-smi topo -m` shows a real one, and turn such output into a hardware YAML file.
#include <fstream>
#include <iostream>
#include <sstream>

#include "hardware/hardware_yaml.hpp"
#include "hardware/topo_import.hpp"
#include "hardware/topo_report.hpp"
#include "sim/config/config_error.hpp"
#include "sim/config/text_file.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"

namespace stepsim::cli {
namespace {

std::string hardware_help() {
  std::string names;
  for (const auto& n : hw::preset_names()) names += (names.empty() ? "" : ", ") + n;
  return "HW is a preset (" + names + ") or a hardware YAML file.";
}

int run_show(const Args& args) {
  po::options_description options("Options");
  options.add_options()("hardware", po::value<std::string>()->required(), "preset name or hardware YAML file")(
      "nodes", po::value<int>(), "number of servers")("gpus", po::value<int>(), "GPUs per server")(
      "dot", po::value<std::string>(), "also write the graph as Graphviz to FILE");
  po::positional_options_description positional;
  positional.add("hardware", 1);
  const auto vm = parse_command_line(
      "topo show", "HW [--nodes N] [--gpus N] [--dot FILE]",
      "Print the GPU x GPU connection matrix (nvidia-smi topo -m codes), the bottleneck bandwidth "
      "between GPUs and a summary of nodes and links.\n" + hardware_help(),
      options, positional, args);
  if (!vm) return 0;
  hw::ClusterShape shape;
  for (const char* key : {"nodes", "gpus"})
    if (vm->count(key)) {
      const int v = (*vm)[key].as<int>();
      if (v < 1) throw UsageError("stepsim topo show: --" + std::string(key) + " must be at least 1, found " + std::to_string(v));
      (std::string(key) == "nodes" ? shape.nodes : shape.gpus_per_node) = v;
    }
  const hw::Cluster cluster = hw::load_cluster((*vm)["hardware"].as<std::string>(), shape);
  std::cout << hw::topo_report(cluster);
  if (vm->count("dot")) {
    const std::string path = (*vm)["dot"].as<std::string>();
    std::ofstream out(path);
    if (!(out << hw::topo_dot(cluster))) throw config::ConfigError({path, 0, 0}, "", "cannot write the file");
  }
  return 0;
}

int run_import(const Args& args) {
  po::options_description options("Options");
  options.add_options()("file", po::value<std::string>()->required(), "saved output of nvidia-smi topo -m")(
      "gpu", po::value<std::string>()->required(), "GPU kind from hardware/gpus.yaml (such as A100-SXM4-80GB)")(
      "output,o", po::value<std::string>(), "write the hardware YAML here instead of stdout");
  po::positional_options_description positional;
  positional.add("file", 1);
  const auto vm = parse_command_line("topo import", "FILE --gpu NAME [-o OUT.yaml]",
                                     "Turn the output of `nvidia-smi topo -m` into a hardware YAML file.",
                                     options, positional, args);
  if (!vm) return 0;
  const std::string file = (*vm)["file"].as<std::string>();
  const std::string yaml = hw::import_nvidia_smi_topo(config::read_text_file(file), file, (*vm)["gpu"].as<std::string>());
  if (!vm->count("output")) {
    std::cout << yaml;
    return 0;
  }
  const std::string out_path = (*vm)["output"].as<std::string>();
  std::ofstream out(out_path);
  if (!(out << yaml)) throw config::ConfigError({out_path, 0, 0}, "", "cannot write the file");
  return 0;
}

}  // namespace

int run_topo(const Args& args) {
  if (!args.empty() && args[0] == "show") return run_show(Args(args.begin() + 1, args.end()));
  if (!args.empty() && args[0] == "import") return run_import(Args(args.begin() + 1, args.end()));
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << "usage: stepsim topo show HW [--nodes N] [--gpus N] [--dot FILE]\n"
                 "       stepsim topo import FILE --gpu NAME [-o OUT.yaml]\n";
    return 0;
  }
  throw UsageError("stepsim topo: expected 'show' or 'import'" +
                   (args.empty() ? std::string() : ", found '" + args[0] + "'") + " (see stepsim topo --help)");
}

}  // namespace stepsim::cli
