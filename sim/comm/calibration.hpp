// Fitting a machine's collective parameters to a real nccl-tests log: the efficiency of the link
// kind that bounds large messages (found by sensitivity: the one whose change moves the largest
// size most) and the latencies that bound small ones (launch, plus the ring step latency inside a
// server or the network step latency across servers; across servers also the other of NVLink and
// network efficiency, and each row is matched to the algorithm that ran it, calibration.cpp). The fit minimises the squared log time
// error over the log's rows of 64 MiB and more (calibration.cpp says why not the small ones), by
// a pattern search in log space on estimate(), the paper model of the simulator.
#pragma once

#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "sim/comm/nccl_log.hpp"

namespace stepsim::comm {

struct CalibrationResult {
  hw::CommParams before;
  hw::CommParams after;
  std::vector<std::string> fitted{};       ///< YAML names of the fitted comm: fields
  std::vector<double> before_us{};         ///< simulated time per log row, before and after
  std::vector<double> after_us{};
};

/// Requires: the cluster has log.ranks GPUs (shape_for(log)).
CalibrationResult calibrate(const hw::Cluster& cluster, const NcclLog& log);

/// Relative busbw error per row, (simulated − logged) / logged = logged_time / simulated_time − 1.
double busbw_error(const NcclLogRow& row, double simulated_us);

/// The per-size table of errors before and after, for the terminal.
std::string format_calibration(const NcclLog& log, const CalibrationResult& result);
/// The hardware YAML: `hardware` (a preset name or a file) with its comm: block replaced by the
/// fitted values. Requires: `hardware` names a readable file or preset.
std::string calibrated_yaml(const std::string& hardware, const NcclLog& log, const CalibrationResult& result);
/// The comm: block alone, every field, in YAML with units.
std::string comm_yaml(const hw::CommParams& params);

}  // namespace stepsim::comm
