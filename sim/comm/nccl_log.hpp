// Reading a real nccl-tests log (all_reduce_perf and friends) as people paste it: launcher noise,
// `[1,N]<stdout>:` prefixes from mpirun, NCCL INFO lines between the header and the rows, old
// (no `root` column, float `error` column) and new (`#wrong`) formats, tables trimmed by hand,
// lines indented by a markdown list. A run that nccl-tests itself found wrong (a non-zero `#wrong`,
// "# Out of bounds values : N FAILED") is refused at that line: its timings are not a collective's.
// Rows are taken after the column-header line; a row that starts with a number but does not
// parse is a ConfigError at its line and column.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hardware/hardware_yaml.hpp"
#include "sim/comm/ops.hpp"

namespace stepsim::comm {

struct NcclLogRow {
  std::int64_t size_bytes = 0;
  std::int64_t count = 0;
  double time_us = 0;         ///< out-of-place
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::optional<double> in_place_time_us{};
  std::optional<double> in_place_busbw_gbps{};
  std::string type{}, redop{};  ///< "float", "sum" / "none": the columns after count, where present
  std::optional<std::int64_t> root{};  ///< the root column (-1 for rootless collectives), where present
  int line = 0;               ///< 1-based, in the file
};

struct NcclLog {
  std::string file{};
  Op op = Op::all_reduce;          ///< from "<op>_perf" in the text, else from its columns
  /// Without a binary name, the ops the columns fit exactly as well as `op` (all_gather and
  /// alltoall have the same busbw factor; broadcast and sendrecv too where there is no root
  /// column): a caller must be told which, not guess.
  std::vector<Op> op_alternatives{};
  int ranks = 0;                   ///< highest "Rank N" + 1 (pasted rank lists may be trimmed); 0: no rank lines
  int hosts = 0;                   ///< distinct hosts in the rank lines
  std::string gpu_name{};          ///< as the device lines print it
  std::vector<NcclLogRow> rows{};
  int header_line = 0;             ///< 1-based line of the (first) column header
  std::optional<double> avg_busbw_gbps{};
};

/// Ranks a log may name: far above any nccl-tests run, low enough that the cluster built for it
/// stays small (a `#  Rank 100000` line built 16 GiB of routes).
inline constexpr int kMaxLogRanks = 65536;

/// Requires nothing of `text`; throws config::ConfigError naming `file`, the line and column.
NcclLog parse_nccl_log(const std::string& text, const std::string& file);
/// Reads the file first; a missing file is a ConfigError.
NcclLog read_nccl_log(const std::string& path);

/// The cluster shape the log ran on: `hosts` servers of ranks/hosts GPUs. A log without rank
/// lines (a table pasted alone) is a ConfigError here: the caller sets ranks and hosts first.
hw::ClusterShape shape_for(const NcclLog& log);

}  // namespace stepsim::comm
