// Machine-readable results for scripts and sweeps: JSON (all strategies in one document) and CSV
// (one row per strategy, header first). Layouts are documented in README.md (Result formats); a change
// there bumps kResultFormatVersion. Numbers are in base units (seconds, bytes, tokens/s, fractions).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "sim/plan/step_result.hpp"

namespace stepsim::report {

constexpr int kResultFormatVersion = 1;

/// {"format_version": 1, "scenario": NAME (when given), "best": NAME|null, "results": [{...}, ...]},
/// newline-terminated.
void write_results_json(const std::vector<plan::StepResult>& results, std::ostream& out,
                        const std::string& scenario = "");

/// The CSV header line (no newline), RFC 4180.
std::string csv_header();
/// One CSV line (no newline) for a result; text fields are quoted when they need it.
std::string csv_row(const plan::StepResult& result);
/// Header and one line per result, each newline-terminated.
void write_results_csv(const std::vector<plan::StepResult>& results, std::ostream& out);

}  // namespace stepsim::report
