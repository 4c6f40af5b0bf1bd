// `stepsim collective`: nccl-tests' *_perf on simulated hardware, and calibration of a hardware
// file's `comm:` parameters from a real nccl-tests log.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"
#include "sim/comm/calibration.hpp"
#include "sim/comm/nccl_log.hpp"
#include "sim/comm/perf_table.hpp"
#include "sim/config/limits.hpp"
#include "sim/sweep/sweep_table.hpp"
#include "tools/cli_common.hpp"
#include "tools/cli_nccl_log.hpp"
#include "tools/commands.hpp"

namespace stepsim::cli {
namespace {

std::int64_t size_option(const po::variables_map& vm, const char* name) {
  const auto text = vm[name].as<std::string>();
  const auto bytes = comm::parse_size(text);
  if (!bytes || *bytes <= 0)
    throw UsageError(std::string("--") + name + ": expected a size such as 8, 1M or 8G of at most 2^50 bytes, found '" + text + "'");
  return *bytes;
}

comm::RingMode rings_option(const po::variables_map& vm) {
  const auto text = vm["rings"].as<std::string>();
  if (text == "auto") return comm::RingMode::automatic;
  if (text == "step") return comm::RingMode::step;
  if (text == "folded") return comm::RingMode::folded;
  throw UsageError("--rings: expected auto, step or folded, found '" + text + "'");
}

// A progress line on stderr while the sizes run (only on a terminal), `sweep`'s line counting
// sizes: a step-by-step sweep over a hundred ranks or more takes minutes a size. Cleared at the end.
class SizeProgress {
 public:
  SizeProgress(bool enabled, std::size_t sizes) : enabled_(enabled), sizes_(sizes) { draw(0); }
  ~SizeProgress() {
    if (enabled_) std::fprintf(stderr, "\r\033[K");
  }
  SizeProgress(const SizeProgress&) = delete;
  SizeProgress& operator=(const SizeProgress&) = delete;
  void draw(std::size_t done) const {
    if (!enabled_) return;
    const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "\r%s\033[K", sweep::format_progress(done, sizes_, elapsed_s, 30, "sizes").c_str());
    std::fflush(stderr);
  }

 private:
  bool enabled_;
  std::size_t sizes_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

hw::ClusterShape shape_of(const po::variables_map& vm) {
  hw::ClusterShape shape;
  if (vm.count("nodes")) shape.nodes = vm["nodes"].as<int>();
  if (vm.count("gpus")) shape.gpus_per_node = vm["gpus"].as<int>();
  return shape;
}

int run_sweep(const po::variables_map& vm) {
  const auto op = comm::parse_op(vm["op"].as<std::string>());
  if (!op) throw UsageError("--op: expected one of all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv, found '" +
                            vm["op"].as<std::string>() + "'");
  const auto algo = comm::parse_algorithm(vm["algo"].as<std::string>());
  if (!algo) throw UsageError("--algo: expected one of auto, ring, tree, nvls, hierarchical, direct, found '" +
                              vm["algo"].as<std::string>() + "'");
  std::optional<hw::Protocol> protocol;
  if (const std::string name = vm["proto"].as<std::string>(); name != "auto") {
    protocol = comm::parse_protocol(name);
    if (!protocol) throw UsageError("--proto: expected one of auto, Simple, LL128, LL, found '" + name + "'");
  }
  const std::int64_t min = size_option(vm, "minbytes"), max = size_option(vm, "maxbytes");
  const std::int64_t factor = vm["stepfactor"].as<std::int64_t>();
  if (min > max || factor < 2) throw UsageError("sizes: expected -b <= -e and -f >= 2");
  const hw::Cluster cluster = hw::load_cluster(vm["hardware"].as<std::string>(), shape_of(vm));
  const hw::Router router(cluster);
  std::vector<int> gpus;
  for (int g = 0; g < cluster.gpu_count(); ++g) gpus.push_back(g);
  const auto sizes = comm::size_sweep(min, max, factor);
  const comm::RingMode rings = rings_option(vm);
  comm::PerfTable table;
  try {
    const SizeProgress progress(isatty(STDERR_FILENO) != 0, sizes.size());
    table = comm::simulate_sweep(router, *op, gpus, sizes, *algo, true, rings,
                                 [&](std::size_t done) { progress.draw(done); }, protocol);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--algo ") + comm::to_string(*algo) +
                     (protocol ? " --proto " + comm::to_string(*protocol) : std::string()) + ": " + e.what());
  }
  if (vm.count("json")) {
    std::cout << comm::format_json(table);
  } else {
    std::cout << comm::format_table(table, "stepsim collective: " + comm::to_string(*op) + " over " +
                                               std::to_string(gpus.size()) + " GPUs of " + cluster.name +
                                               " (simulated" + (comm::use_coarse_mode(rings, gpus.size()) ? ", coarse: rings folded, other steps solved outside the engine" : "") +
                                               "; in-place = out-of-place)");
  }
  return 0;
}

int run_calibrate(const po::variables_map& vm) {
  if (!vm.count("output")) throw UsageError("--calibrate needs -o OUT.yaml");
  auto log = comm::read_nccl_log(vm["calibrate"].as<std::string>());
  complete_nccl_log(vm, log);
  const std::string hardware = vm["hardware"].as<std::string>();
  const hw::Cluster cluster = hw::load_cluster(hardware, comm::shape_for(log));
  // The fit's iterations on stderr, only on a terminal: a 16-rank log takes tens of seconds. Its
  // length is not known ahead (it ends when no step pays), so the line says the bound instead.
  const bool progress = isatty(STDERR_FILENO) != 0;
  const auto started = std::chrono::steady_clock::now();
  const auto result = comm::calibrate(cluster, log, [&](const comm::FitProgress& p) {
    if (!progress) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::fprintf(stderr, "\rcalibrate: fit iteration %d (at most %d), %s row estimates, objective %.3f, %.0f s\033[K", p.iteration,
                 p.max_iterations, config::with_commas(static_cast<std::int64_t>(p.time_evaluations)).c_str(), p.objective, elapsed);
  });
  if (progress) std::fprintf(stderr, "\r\033[K");
  std::cout << comm::format_calibration(log, result);
  std::ofstream out(vm["output"].as<std::string>());
  out << comm::calibrated_yaml(hardware, log, result);
  if (!out) throw UsageError("-o: cannot write '" + vm["output"].as<std::string>() + "'");
  return 0;
}

}  // namespace

int run_collective(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("hardware", po::value<std::string>()->required(), "preset name or hardware YAML")
      ("op", po::value<std::string>()->default_value("all_reduce"),
       "all_reduce, all_gather, reduce_scatter, alltoall, broadcast or sendrecv")
      ("gpus", po::value<int>(), "GPUs per server")
      ("nodes", po::value<int>(), "servers")
      ("minbytes,b", po::value<std::string>()->default_value("8"), "smallest size (8, 1M, 8G)")
      ("maxbytes,e", po::value<std::string>()->default_value("8G"), "largest size")
      ("stepfactor,f", po::value<std::int64_t>()->default_value(2), "size multiplier")
      ("algo", po::value<std::string>()->default_value("auto"), "auto, ring, tree, nvls, hierarchical, direct")
      ("proto", po::value<std::string>()->default_value("auto"),
       "auto (the tuner's pick by size), Simple, LL128 or LL (as NCCL_PROTO)")
      ("rings", po::value<std::string>()->default_value("auto"),
       "auto (folded above 8 ranks), step (every step in the engine) or folded (each ring one flow, "
       "other algorithms' steps solved outside the engine; a tree too large to solve timed on paper)")
      ("json", "print JSON instead of the nccl-tests table")
      ("calibrate", po::value<std::string>(), "fit the hardware's comm: parameters to this nccl-tests log")
      ("output,o", po::value<std::string>(), "with --calibrate: write the fitted hardware YAML here");
  const auto vm = parse_command_line(
      "collective", "--hardware HW [--op OP] [--gpus N | --nodes N] [-b MIN] [-e MAX] [-f F] [--algo A] [--proto P] [--rings R] [--json]\n"
      "       stepsim collective --calibrate LOG --hardware HW -o OUT.yaml",
      "Simulate nccl-tests' *_perf on a machine, or calibrate its collective parameters from a log.",
      options, {}, args);
  if (!vm) return 0;
  return vm->count("calibrate") ? run_calibrate(*vm) : run_sweep(*vm);
}

}  // namespace stepsim::cli
