// Fitting a machine's collective parameters to a real nccl-tests log: Simple's bandwidth (the
// efficiency of the link kind that bounds the largest size, found by sensitivity, and across
// servers also the other of NVLink and network), and each protocol's launch and step latency
// and the low-latency protocols' bandwidth shares, which set the small and medium sizes. Every
// row counts: each is explained by the algorithm whose time comes closest (the log does not say
// which NCCL ran) under the protocol the tuner would pick, and the fit (calibration_fit.hpp)
// weighs each row's log time error by the target it is held to, with a steep penalty for
// leaving a row further from its measurement than the uncalibrated preset did (beyond the row's
// own spread between its out-of-place and in-place times). Rows are timed by estimate(), the paper model
// the tuner uses.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "sim/comm/calibration_fit.hpp"
#include "sim/comm/nccl_log.hpp"

namespace stepsim::comm {

/// What a calibration is held to, in busbw error: every row from kCalibrationLargeRow up within
/// kLargeRowTolerance, every smaller one within kSmallRowTolerance. Training's gradient buckets
/// and parameter shards are large; below 1 MiB launch and step latencies dominate, and a log's
/// own run-to-run spread there is of the order of 10 %.
inline constexpr std::int64_t kCalibrationLargeRow = std::int64_t{1} << 20;
inline constexpr double kLargeRowTolerance = 0.10;
inline constexpr double kSmallRowTolerance = 0.25;

struct CalibrationResult {
  hw::CommParams before;
  hw::CommParams after;
  std::vector<std::string> fitted{};       ///< YAML names of the fitted comm: fields
  std::vector<double> before_us{};         ///< simulated time per log row, before and after
  std::vector<double> after_us{};
};

/// Requires: the cluster has log.ranks GPUs (shape_for(log)). `on_iteration`, if given, hears
/// after every iteration of the fit.
CalibrationResult calibrate(const hw::Cluster& cluster, const NcclLog& log,
                            const std::function<void(const FitProgress&)>& on_iteration = {});

/// Relative busbw error per row, (simulated − logged) / logged = logged_time / simulated_time − 1.
double busbw_error(const NcclLogRow& row, double simulated_us);

/// The per-size table of errors before and after, for the terminal.
/// Ends with the largest error after the fit against the tolerances above.
std::string format_calibration(const NcclLog& log, const CalibrationResult& result);
/// The hardware YAML: `hardware` (a preset name or a file) with its comm: block replaced by the
/// fitted values. Requires: `hardware` names a readable file or preset.
std::string calibrated_yaml(const std::string& hardware, const NcclLog& log, const CalibrationResult& result);
/// The comm: block alone, every field, in YAML with units.
std::string comm_yaml(const hw::CommParams& params);

}  // namespace stepsim::comm
