// Printing validation results: an aligned table, per-source summaries, and JSON.
#include <cmath>
#include <cstdio>
#include <ostream>

#include "sim/report/json_writer.hpp"
#include "sim/report/text_table.hpp"
#include "sim/report/validation.hpp"

namespace stepsim::report {
namespace {

std::string number(double v) {
  char buf[32];
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a >= 100 ? "%.1f" : a >= 1 ? "%.3f" : "%.4f", v);
  return buf;
}

std::string percent(double fraction, bool sign) {
  char buf[32];
  std::snprintf(buf, sizeof buf, sign ? "%+.1f %%" : "%.1f %%", 100.0 * fraction);
  return buf;
}

std::string unit_of(const std::string& metric) {
  if (metric == "step_time_s") return "s";
  if (metric == "megatron_eq3_tflops_per_gpu") return "TFLOP/s";
  if (metric == "samples_per_gpu_per_s") return "samples/s/GPU";
  return "fraction";
}

void write_summary(JsonWriter& w, const SourceSummary& s) {
  w.begin_object();
  w.key("source").value(s.source).key("rows").value(s.rows);
  w.key("median_abs_error").value(s.median_abs_error);
  w.key("mean_abs_error").value(s.mean_abs_error);
  w.key("max_abs_error").value(s.max_abs_error);
  w.end_object();
}

}  // namespace

std::string format_validation(const std::vector<ValidationRow>& rows) {
  TextTable table({"scenario", "metric", "unit", "measured", "predicted", "error", ""},
                  {Align::left, Align::left, Align::left, Align::right, Align::right, Align::right, Align::left});
  for (const auto& r : rows)
    table.add_row({r.name, r.metric, unit_of(r.metric), number(r.measured), number(r.predicted),
                   percent(r.error, true), r.within() ? "" : "over " + percent(r.tolerance, false)});
  TextTable summary({"source", "rows", "median |error|", "mean |error|", "max |error|"},
                    {Align::left, Align::right, Align::right, Align::right, Align::right});
  auto add = [&](const SourceSummary& s) {
    summary.add_row({s.source, std::to_string(s.rows), percent(s.median_abs_error, false),
                     percent(s.mean_abs_error, false), percent(s.max_abs_error, false)});
  };
  for (const auto& s : summarize_by_source(rows)) add(s);
  add(summarize("", rows));
  return table.render() + "\n" + summary.render();
}

void write_validation_json(const std::vector<ValidationRow>& rows, std::ostream& out) {
  JsonWriter w(out);
  w.begin_object().key("rows").begin_array();
  for (const auto& r : rows) {
    w.line_break().begin_object();
    w.key("name").value(r.name).key("source").value(r.source).key("metric").value(r.metric);
    w.key("measured").value(r.measured).key("predicted").value(r.predicted).key("error").value(r.error);
    w.key("tolerance").value(r.tolerance).key("within").value(r.within());
    w.end_object();
  }
  w.end_array();
  const SourceSummary all = summarize("", rows);
  w.key("summary").begin_object();
  w.key("median_abs_error").value(all.median_abs_error);
  w.key("mean_abs_error").value(all.mean_abs_error);
  w.key("max_abs_error").value(all.max_abs_error);
  w.end_object();
  w.key("sources").begin_array();
  for (const auto& s : summarize_by_source(rows)) write_summary(w, s);
  w.end_array().end_object();
  out << "\n";
}

}  // namespace stepsim::report
