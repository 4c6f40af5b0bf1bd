// What a sweep (or one shard of it, or several merged shards) produced: the counts a person asks
// about (tried, invalid, out of memory) and every simulated plan's headline result under its
// candidate index. Plain data: sweep_runner.hpp fills it, sweep_json.hpp writes and reads it,
// sweep_table.hpp prints it. Everything the ranking and its table need is here, so a merged
// outcome prints exactly what a single run would have.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/plan/step_result.hpp"
#include "sim/sweep/sweep_space.hpp"

namespace stepsim::sweep {

/// Slice K of N (1-based): the candidates with index % N == K − 1.
struct Shard {
  int index = 1;
  int count = 1;
  auto operator<=>(const Shard&) const = default;
};

struct PlanResult {
  std::size_t index = 0;      ///< candidate index in the enumeration
  plan::StepResult result;    ///< headline metrics only (no timeline)
};

struct SweepOutcome {
  std::string scenario;                ///< scenario name
  std::string fingerprint;             ///< space_fingerprint of the whole enumeration
  std::size_t enumerated = 0;          ///< candidates in the whole sweep, all shards
  int shard_count = 1;                 ///< N of the slices
  std::vector<int> shards{1};          ///< which slices (1-based, ascending) this outcome covers
  std::size_t tried = 0;               ///< candidates in the covered slices, valid or not
  std::size_t invalid = 0;             ///< rejected by plan::check_strategy
  std::size_t not_run = 0;             ///< valid but skipped because the sweep was interrupted
  bool interrupted = false;
  std::vector<PlanResult> results;     ///< simulated plans, by ascending index

  std::size_t out_of_memory() const;
  std::size_t fits() const { return results.size() - out_of_memory(); }
};

/// A short digest of the candidates' names in order: two outcomes with the same fingerprint come
/// from the same enumeration (FNV-1a 64-bit, as 16 hex digits).
std::string space_fingerprint(const std::vector<Candidate>& candidates);

/// Positions in `outcome.results` of the plans that fit in memory, best first: highest tokens/s;
/// at equal tokens/s the lower peak memory, then the lower candidate index (so the order never
/// depends on threads or shards).
std::vector<std::size_t> ranking(const SweepOutcome& outcome);

/// Joins shard outcomes of one sweep. Errors (config::ConfigError naming `sources[i]`): different
/// scenarios, enumerations or shard counts, or a slice given twice. Requires: sources.size() == parts.size() ≥ 1.
SweepOutcome merge_outcomes(const std::vector<SweepOutcome>& parts, const std::vector<std::string>& sources);

}  // namespace stepsim::sweep
