// nccl-tests' *_perf in simulation: a sweep of sizes, each in a fresh Engine on an idle machine,
// printed as nccl-tests prints it (size, count, type, redop, root, time, algbw, busbw, and the
// closing "# Avg bus bandwidth") or as JSON. The simulator has no in-place/out-of-place
// difference, so both column groups show the same figures.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "hardware/router.hpp"
#include "sim/comm/collective.hpp"
#include "sim/comm/ops.hpp"

namespace stepsim::comm {

struct PerfRow {
  std::int64_t size_bytes = 0;
  double time_us = 0;
  double algbw_gbps = 0;   ///< GB/s = 1e9 bytes/s, as nccl-tests
  double busbw_gbps = 0;
  Algorithm algorithm = Algorithm::ring;
  hw::Protocol protocol = hw::Protocol::simple;
};

struct PerfTable {
  Op op = Op::all_reduce;
  int ranks = 0;
  std::vector<PerfRow> rows{};
  double avg_busbw_gbps = 0;  ///< mean of the rows' busbw, as nccl-tests' "Avg bus bandwidth"
  std::vector<int> server_of{};  ///< per rank, for the "#  Rank N ... on HOST device D" lines
  std::string gpu_name{};
};

/// Simulates one collective of `bytes` over `gpus` in a fresh Engine (engine = true) or on paper
/// with estimate() (engine = false), with `rings` (automatic: folded above kCoarseAboveRanks),
/// under `protocol` (none: the tuner's pick, as NCCL without NCCL_PROTO).
/// Coarse times a ring or hierarchical plan by the lattice of the whole plan where that was
/// solved as one DAG (folded_ring.hpp), else runs its folded rings in the engine; other
/// algorithms are solved as a transfer DAG outside the engine (plan_dag.hpp), or timed on paper
/// where that DAG is too large (timing_method.hpp says which). `memo`: what the tuner's papers keep
/// for the next size (choose_with_estimate()).
PerfRow simulate_size(const hw::Router& router, Op op, const std::vector<int>& gpus, std::int64_t bytes,
                      Algorithm algorithm, bool engine = true, RingMode rings = RingMode::automatic,
                      std::optional<hw::Protocol> protocol = std::nullopt, PaperMemo* memo = nullptr);
/// simulate_size() for each size in turn; `on_row(rows done)` after each (a progress line).
PerfTable simulate_sweep(const hw::Router& router, Op op, const std::vector<int>& gpus,
                         const std::vector<std::int64_t>& sizes, Algorithm algorithm, bool engine = true,
                         RingMode rings = RingMode::automatic,
                         const std::function<void(std::size_t)>& on_row = {},
                         std::optional<hw::Protocol> protocol = std::nullopt);

/// nccl-tests' -b/-e/-f: min, min·f, … up to max. Requires 0 < min <= max, factor >= 2.
std::vector<std::int64_t> size_sweep(std::int64_t min_bytes, std::int64_t max_bytes, std::int64_t factor);
/// The largest collective size accepted: 2^50 bytes (a petabyte), as for nccl-tests logs; far
/// above any real buffer, and products of it with small factors stay inside int64.
inline constexpr std::int64_t kMaxSizeBytes = std::int64_t{1} << 50;
/// nccl-tests' size arguments: a count with an optional K, M, G, T suffix (powers of 1024, as
/// nccl-tests' parsesize), or any byte quantity stepsim accepts (8GiB). nullopt if not a size
/// or over kMaxSizeBytes.
std::optional<std::int64_t> parse_size(const std::string& text);

/// Elements per rank as nccl-tests prints "count" (float32): size/4, divided by the ranks for
/// all_gather, reduce_scatter and alltoall.
std::int64_t element_count(Op op, int ranks, std::int64_t size_bytes);

std::string format_table(const PerfTable& table, const std::string& title);
std::string format_json(const PerfTable& table);

}  // namespace stepsim::comm
