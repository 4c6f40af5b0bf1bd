// Bias by tensor-parallel degree: where a source measured plans of several TP degrees, the mean
// error of each degree. A layout whose plans all come out fast (or slow) misranks plans even when
// the overall error is small: when issue 18 was filed, the vTrain sweep's TP-8 plans came out
// about 50 % fast while its TP-1 plans were within 10 %.
#pragma once

#include <string>
#include <vector>

#include "sim/report/validation.hpp"

namespace stepsim::report {

/// The row's error as an error of step time, whatever its metric: predicted / measured − 1 for a
/// step time, measured / predicted − 1 for a throughput (validation_ranking.hpp's
/// higher_is_better). Negative: stepsim predicts the plan faster than it ran.
double step_time_error(const ValidationRow& row);

struct TpBias {
  std::string source;
  int tp = 1;
  int rows = 0;
  double mean_step_time_error = 0;  ///< signed: negative is too fast
  double mean_abs_error = 0;        ///< of the row's own metric, as the source summaries count it
};

/// One entry per (source, TP degree) for every source whose rows have at least two TP degrees;
/// sources in order of first appearance, degrees ascending.
std::vector<TpBias> bias_by_tp(const std::vector<ValidationRow>& rows);

}  // namespace stepsim::report
