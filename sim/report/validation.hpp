// Validation against published runs: each scenario in scenarios/validation/ holds one measured
// figure, the definition of its metric and its source. The predicted figure is computed from the
// simulated step with the SAME formula the source used (some count recompute FLOPs, some do not),
// so like is compared with like.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "sim/config/yaml_fwd.hpp"
#include "sim/plan/scenario.hpp"
#include "sim/plan/step_result.hpp"

namespace stepsim::report {

/// The `validation:` section of a validation scenario.
struct ValidationSpec {
  std::string source;      ///< e.g. "Narayanan et al. SC'21 Table 1"
  std::string metric;      ///< one of validation_metrics()
  std::string definition;  ///< the source's definition, in words
  double measured = 0;
  double tolerance = 0.15; ///< |error| above this fails the row
  /// Rows of one source with the same group are plans of the same work (model, batch, GPUs):
  /// validation_ranking.hpp ranks them. Empty = the row stands alone.
  std::string group;
};

/// Metrics a validation file may name.
const std::vector<std::string>& validation_metrics();
/// Reads `validation:` (source, metric, definition, measured, tolerance, group) from a scenario's root.
ValidationSpec read_validation(const config::Field& root);

/// The metric as the source computes it, from one simulated step.
double predicted_metric(const std::string& metric, const plan::Scenario& scenario,
                        const plan::StepResult& result);

struct ValidationRow {
  std::string name, file, source, metric, group;
  double measured = 0, predicted = 0;
  double error = 0;        ///< (predicted − measured) / measured, signed
  double tolerance = 0;
  int tp = 1;              ///< the plan's tensor-parallel degree (validation_bias.hpp)
  /// The published run ran, so its plan fit on the machine: `fits` false is stepsim's memory model
  /// disagreeing with a measurement (memory_note says by how much and what dominates).
  bool fits = true;
  std::string memory_note;
  bool within() const;
};

struct SourceSummary {
  std::string source;
  int rows = 0;
  double median_abs_error = 0, mean_abs_error = 0, max_abs_error = 0;
};

SourceSummary summarize(const std::string& source, const std::vector<ValidationRow>& rows);
std::vector<SourceSummary> summarize_by_source(const std::vector<ValidationRow>& rows);

/// Aligned table of rows, then one summary line per source and overall, the plan rankings, the
/// bias by TP degree and the memory check.
std::string format_validation(const std::vector<ValidationRow>& rows);
/// {"rows": [{"name", "source", "metric", "measured", "predicted", "error"}…],
///  "summary": {"median_abs_error", "mean_abs_error", "max_abs_error"}, "sources": […],
///  "rankings": […], "groups": […], "tp_bias": [{"source", "tp", "rows", "mean_step_time_error",
///  "mean_abs_error"}…]}
void write_validation_json(const std::vector<ValidationRow>& rows, std::ostream& out);

}  // namespace stepsim::report
