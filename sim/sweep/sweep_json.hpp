// A sweep outcome as JSON, for `--json FILE` and for `stepsim sweep --merge A.json B.json`: the
// file carries the counts and every simulated plan's headline result, so a merge prints exactly
// what a single run prints. Results use the keys of `stepsim run --json` (name, step_time_s,
// tokens_per_s, …) with the same fields (report::write_result_fields). Numbers are written in their
// shortest exact form (std::to_chars) and read back with std::from_chars: bit-for-bit round trip.
//
//   {"format": "stepsim-sweep", "version": 1, "scenario": "…", "fingerprint": "…",
//    "enumerated": 1044, "shard_count": 2, "shards": [1], "tried": 522, "invalid": 30,
//    "not_run": 0, "interrupted": false, "out_of_memory": 100, "fits": 392,
//    "results": [{"index": 0, "name": "tp1-pp1-dp8-z0-mb1", "step_time_s": 1.23, …}, …]}
#pragma once

#include <ostream>
#include <string>

#include "sim/plan/step_result.hpp"
#include "sim/report/json_writer.hpp"
#include "sim/sweep/sweep_outcome.hpp"

namespace stepsim::sweep {

void write_outcome_json(std::ostream& out, const SweepOutcome& outcome);

/// Reads what write_outcome_json wrote. Errors: config::ConfigError with position (not JSON, a
/// missing key, not a stepsim sweep file).
SweepOutcome read_outcome_json(const std::string& path);
SweepOutcome read_outcome_json_text(const std::string& text, const std::string& name);

}  // namespace stepsim::sweep
