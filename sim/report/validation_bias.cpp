#include "sim/report/validation_bias.hpp"

#include <cmath>
#include <map>

#include "sim/report/validation_ranking.hpp"

namespace stepsim::report {

double step_time_error(const ValidationRow& row) {
  if (row.measured == 0 || row.predicted == 0) return 0;
  return higher_is_better(row.metric) ? row.measured / row.predicted - 1 : row.predicted / row.measured - 1;
}

std::vector<TpBias> bias_by_tp(const std::vector<ValidationRow>& rows) {
  std::vector<std::string> sources;
  std::map<std::string, std::map<int, TpBias>> by_source;
  for (const auto& r : rows) {
    auto [it, fresh] = by_source.try_emplace(r.source);
    if (fresh) sources.push_back(r.source);
    TpBias& b = it->second[r.tp];
    b.source = r.source;
    b.tp = r.tp;
    ++b.rows;
    b.mean_step_time_error += step_time_error(r);
    b.mean_abs_error += std::fabs(r.error);
  }
  std::vector<TpBias> out;
  for (const auto& source : sources) {
    const auto& degrees = by_source[source];
    if (degrees.size() < 2) continue;
    for (auto [tp, b] : degrees) {
      b.mean_step_time_error /= b.rows;
      b.mean_abs_error /= b.rows;
      out.push_back(b);
    }
  }
  return out;
}

}  // namespace stepsim::report
