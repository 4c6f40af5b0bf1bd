// Printing validation results: an aligned table, per-source summaries, and JSON.
#include <cmath>
#include <cstdio>
#include <ostream>

#include "sim/report/json_writer.hpp"
#include "sim/report/text_table.hpp"
#include "sim/report/validation.hpp"
#include "sim/report/validation_bias.hpp"
#include "sim/report/validation_ranking.hpp"

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

void write_ranking(JsonWriter& w, const RankingSummary& s) {
  w.begin_object();
  w.key("source").value(s.source).key("groups").value(s.groups).key("picked_best").value(s.picked_best);
  w.key("mean_spearman").value(s.mean_spearman);
  w.key("median_regret").value(s.median_regret).key("max_regret").value(s.max_regret);
  w.end_object();
}

// Per source with groups: how well the plans of one piece of work are ordered.
std::string format_rankings(const std::vector<ValidationRow>& rows) {
  const auto groups = rank_groups(rows);
  if (groups.empty()) return "";
  TextTable table({"plan ranking", "groups", "mean Spearman", "median regret", "max regret", "best picked"},
                  {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right});
  for (const auto& s : summarize_rankings(groups)) {
    char rho[16];
    std::snprintf(rho, sizeof rho, "%.3f", s.mean_spearman);
    table.add_row({s.source, std::to_string(s.groups), rho, percent(s.median_regret, false),
                   percent(s.max_regret, false),
                   std::to_string(s.picked_best) + " of " + std::to_string(s.groups)});
  }
  return "\n" + table.render() +
         "(regret: how much slower the predicted-best plan of a group measured than the measured best)\n";
}

// Per source with several TP degrees: whether one layout comes out fast or slow as a whole.
std::string format_tp_bias(const std::vector<ValidationRow>& rows) {
  const auto biases = bias_by_tp(rows);
  if (biases.empty()) return "";
  TextTable table({"bias by TP degree", "TP", "rows", "step time error", "mean |error|"},
                  {Align::left, Align::right, Align::right, Align::right, Align::right});
  std::string last;
  for (const auto& b : biases) {
    table.add_row({b.source == last ? "" : b.source, std::to_string(b.tp), std::to_string(b.rows),
                   percent(b.mean_step_time_error, true), percent(b.mean_abs_error, false)});
    last = b.source;
  }
  return "\n" + table.render() +
         "(step time error: mean of predicted / measured step time − 1, whatever the source's metric; "
         "negative: predicted too fast)\n";
}

// Every published run fit on its machine; a plan stepsim's memory model says does not fit is a
// memory error the step-time columns cannot show.
std::string format_memory(const std::vector<ValidationRow>& rows) {
  std::vector<const ValidationRow*> short_of_memory;
  for (const auto& r : rows)
    if (!r.fits) short_of_memory.push_back(&r);
  std::string out = "\nmemory: " + std::to_string(rows.size() - short_of_memory.size()) + " of " +
                    std::to_string(rows.size()) + " measured plans fit by stepsim's memory model\n";
  if (short_of_memory.empty()) return out;
  TextTable table({"ran, but does not fit here", "why"}, {Align::left, Align::left});
  for (const auto* r : short_of_memory) table.add_row({r->name, r->memory_note});
  return out + table.render();
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
  return table.render() + "\n" + summary.render() + format_rankings(rows) + format_tp_bias(rows) + format_memory(rows);
}

void write_validation_json(const std::vector<ValidationRow>& rows, std::ostream& out) {
  JsonWriter w(out);
  w.begin_object().key("rows").begin_array();
  for (const auto& r : rows) {
    w.line_break().begin_object();
    w.key("name").value(r.name).key("source").value(r.source).key("metric").value(r.metric);
    w.key("measured").value(r.measured).key("predicted").value(r.predicted).key("error").value(r.error);
    w.key("tolerance").value(r.tolerance).key("within").value(r.within()).key("fits").value(r.fits);
    if (!r.group.empty()) w.key("group").value(r.group);
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
  w.end_array();
  const auto groups = rank_groups(rows);
  w.key("rankings").begin_array();
  for (const auto& s : summarize_rankings(groups)) write_ranking(w, s);
  w.end_array();
  w.key("groups").begin_array();
  for (const auto& g : groups) {
    w.line_break().begin_object();
    w.key("source").value(g.source).key("group").value(g.group).key("plans").value(g.plans);
    w.key("spearman").value(g.spearman).key("regret").value(g.regret).key("picked_best").value(g.picked_best);
    w.key("predicted_best").value(g.predicted_best).key("measured_best").value(g.measured_best);
    w.end_object();
  }
  w.end_array();
  w.key("tp_bias").begin_array();
  for (const auto& b : bias_by_tp(rows)) {
    w.line_break().begin_object();
    w.key("source").value(b.source).key("tp").value(b.tp).key("rows").value(b.rows);
    w.key("mean_step_time_error").value(b.mean_step_time_error).key("mean_abs_error").value(b.mean_abs_error);
    w.end_object();
  }
  w.end_array().end_object();
  out << "\n";
}

}  // namespace stepsim::report
