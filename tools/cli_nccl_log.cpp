#include "tools/cli_nccl_log.hpp"

#include <algorithm>
#include <string>

#include "sim/config/config_error.hpp"

namespace stepsim::cli {

void complete_nccl_log(const po::variables_map& vm, comm::NcclLog& log) {
  if (vm.count("op") && !vm["op"].defaulted()) {
    const auto op = comm::parse_op(vm["op"].as<std::string>());
    if (!op) throw UsageError("--op: expected one of all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv, found '" +
                              vm["op"].as<std::string>() + "'");
    log.op = *op;
  } else if (!log.op_alternatives.empty()) {
    std::string tests = comm::to_string(log.op) + "_perf";
    for (comm::Op alt : log.op_alternatives) tests += " or " + comm::to_string(alt) + "_perf";
    throw config::ConfigError({log.file, log.rows.front().line, 1}, "",
                              "expected the name of the test that wrote this table (" + tests +
                                  "): its columns fit either alike; say which with --op");
  }
  if (!vm.count("nodes") && !vm.count("gpus")) return;
  const int nodes = vm.count("nodes") ? vm["nodes"].as<int>() : std::max(1, log.hosts);
  if (nodes < 1) throw UsageError("--nodes: expected at least 1, found " + std::to_string(nodes));
  const int gpus = vm.count("gpus") ? vm["gpus"].as<int>() : (log.ranks > 0 ? log.ranks / nodes : 0);
  if (gpus < 1) throw UsageError("--gpus: give the GPUs per server of this log (it has no rank lines)");
  if (log.ranks > 0 && (nodes * gpus != log.ranks || nodes != std::max(1, log.hosts)))
    throw UsageError("--nodes/--gpus: " + std::to_string(nodes) + " x " + std::to_string(gpus) + " GPUs, but the log's rank lines say " +
                     std::to_string(log.ranks) + " ranks on " + std::to_string(std::max(1, log.hosts)) + " hosts");
  log.ranks = nodes * gpus;
  log.hosts = nodes;
}

}  // namespace stepsim::cli
