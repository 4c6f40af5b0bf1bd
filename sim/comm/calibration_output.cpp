// What calibration prints and writes: the per-size error table and the fitted hardware YAML.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "sim/comm/calibration.hpp"
#include "sim/config/config_error.hpp"
#include "sim/config/paths.hpp"

namespace stepsim::comm {
namespace {

std::string duration_text(std::int64_t ps) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3fus", static_cast<double>(ps) * 1e-6);
  return buf;
}

// A preset name is a file in hardware/presets; anything else is a path.
std::string hardware_text(const std::string& hardware) {
  std::filesystem::path path(hardware);
  if (!config::path_exists(path)) path = std::filesystem::path(STEPSIM_DATA_DIR) / "hardware" / "presets" / (hardware + ".yaml");
  std::ifstream in(path);
  if (!in) throw config::ConfigError({hardware, 0, 0}, "", "cannot read the hardware file to write the calibrated copy");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Drops the top-level `comm:` mapping (its line and the indented or comment lines under it).
std::string without_comm(const std::string& yaml) {
  std::istringstream in(yaml);
  std::ostringstream out;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("comm:", 0) == 0) inside = true;
    else if (inside && !line.empty() && line[0] != ' ' && line[0] != '#') inside = false;
    if (!inside) out << line << "\n";
  }
  return out.str();
}

}  // namespace

std::string comm_yaml(const hw::CommParams& p) {
  std::ostringstream out;
  char buf[64];
  auto fraction = [&](const char* name, double v) {
    std::snprintf(buf, sizeof buf, "  %s: %.4f\n", name, v);
    out << buf;
  };
  out << "comm:\n";
  fraction("nvlink_efficiency", p.nvlink_efficiency);
  fraction("pcie_efficiency", p.pcie_efficiency);
  fraction("network_efficiency", p.network_efficiency);
  fraction("host_memory_efficiency", p.host_memory_efficiency);
  out << "  ring_step_latency: " << duration_text(p.ring_step_latency_ps) << "\n"
      << "  tree_step_latency: " << duration_text(p.tree_step_latency_ps) << "\n"
      << "  network_step_latency: " << duration_text(p.network_step_latency_ps) << "\n"
      << "  nvls: " << (p.nvls ? "true" : "false") << "\n";
  fraction("nvls_efficiency", p.nvls_efficiency);
  out << "  nvls_latency: " << duration_text(p.nvls_latency_ps) << "\n"
      << "  launch_latency: " << duration_text(p.launch_latency_ps) << "\n";
  for (const auto& [name, cost] : {std::pair{"ll", p.ll}, std::pair{"ll128", p.ll128}}) {
    std::snprintf(buf, sizeof buf, "%.4f", cost.bandwidth_share);
    out << "  " << name << ": {launch_latency: " << duration_text(cost.launch_latency_ps)
        << ", ring_step_latency: " << duration_text(cost.ring_step_latency_ps)
        << ", tree_step_latency: " << duration_text(cost.tree_step_latency_ps)
        << ", network_step_latency: " << duration_text(cost.network_step_latency_ps) << ", bandwidth_share: " << buf << "}\n";
  }
  out << "  pipeline_chunk: " << p.pipeline_chunk_bytes << "B\n"
      << "  pipeline_pass_overhead: " << duration_text(p.pipeline_pass_overhead_ps) << "\n"
      << "  host_call_overhead: " << duration_text(p.host_call_overhead_ps) << "\n"
      << "  host_view_call: " << duration_text(p.host_view_call_ps) << "\n"
      << "  host_copy_call: " << duration_text(p.host_copy_call_ps) << "\n";
  return out.str();
}

double busbw_error(const NcclLogRow& row, double simulated_us) { return row.time_us / simulated_us - 1.0; }

std::string format_calibration(const NcclLog& log, const CalibrationResult& r) {
  std::ostringstream out;
  char buf[160];
  out << "# calibrating against " << log.file << ": " << to_string(log.op) << ", " << log.ranks << " ranks on "
      << log.hosts << " host(s), " << log.rows.size() << " sizes\n";
  out << "#       size  logged busbw   before busbw  error   after busbw  error\n";
  for (std::size_t i = 0; i < log.rows.size(); ++i) {
    const auto& row = log.rows[i];
    const double f = row.algbw_gbps > 0 ? row.busbw_gbps / row.algbw_gbps : 1.0;
    const double before = static_cast<double>(row.size_bytes) / r.before_us[i] * 1e-3 * f;
    const double after = static_cast<double>(row.size_bytes) / r.after_us[i] * 1e-3 * f;
    std::snprintf(buf, sizeof buf, "%12lld  %12.2f  %12.2f  %+5.1f%%  %12.2f  %+5.1f%%\n",
                  static_cast<long long>(row.size_bytes), row.busbw_gbps, before,
                  100 * busbw_error(row, r.before_us[i]), after, 100 * busbw_error(row, r.after_us[i]));
    out << buf;
  }
  double worst_large = 0, worst_small = 0;
  bool any_large = false, any_small = false;
  for (std::size_t i = 0; i < log.rows.size(); ++i) {
    const double e = std::abs(busbw_error(log.rows[i], r.after_us[i]));
    if (log.rows[i].size_bytes >= kCalibrationLargeRow) worst_large = std::max(worst_large, e), any_large = true;
    else worst_small = std::max(worst_small, e), any_small = true;
  }
  out << "# after the fit, largest |error|:";
  if (any_large) {
    std::snprintf(buf, sizeof buf, " %.1f%% from 1 MiB up (target %.0f%%)", 100 * worst_large, 100 * kLargeRowTolerance);
    out << buf << (any_small ? "," : "");
  }
  if (any_small) {
    std::snprintf(buf, sizeof buf, " %.1f%% below 1 MiB (target %.0f%%)", 100 * worst_small, 100 * kSmallRowTolerance);
    out << buf;
  }
  out << "\n# fitted:";
  for (const auto& name : r.fitted) out << " " << name;
  out << "\n" << comm_yaml(r.after);
  return out.str();
}

std::string calibrated_yaml(const std::string& hardware, const NcclLog& log, const CalibrationResult& r) {
  std::ostringstream out;
  out << without_comm(hardware_text(hardware));
  out << "# comm: fitted by `stepsim collective --calibrate " << log.file << " --hardware " << hardware << "`\n"
      << "# (" << to_string(log.op) << ", " << log.ranks << " ranks on " << log.hosts << " host(s)); fitted:";
  for (const auto& name : r.fitted) out << " " << name;
  out << "\n" << comm_yaml(r.after);
  return out.str();
}

}  // namespace stepsim::comm
