#include "tools/cli_report.hpp"

#include <fstream>
#include <iostream>

#include "sim/config/limits.hpp"
#include "sim/report/chrome_trace.hpp"
#include "sim/report/comparison.hpp"
#include "sim/report/critical_path.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/money.hpp"
#include "sim/report/pipeline_ascii.hpp"
#include "sim/report/pipeline_svg.hpp"
#include "sim/report/pipeline_view.hpp"
#include "tools/cli_gzip.hpp"

namespace stepsim::cli {
namespace {

std::optional<double> price_of(const po::variables_map& vm, const plan::Scenario& sc) {
  if (vm.count("price-per-gpu-hour")) return vm["price-per-gpu-hour"].as<double>();
  if (sc.training.price_per_gpu_hour > 0) return sc.training.price_per_gpu_hour;
  if (sc.cluster.gpu.price_per_hour > 0) return sc.cluster.gpu.price_per_hour;
  return std::nullopt;
}

// "pipe.svg" for one result; "pipe-tp2-pp2.svg" for each of several ("t-tp2-pp2.json.gz").
std::string path_for(const std::string& path, const std::string& name, bool several) {
  if (!several) return path;
  const std::string gz = ".json.gz";
  if (path.size() > gz.size() && path.compare(path.size() - gz.size(), gz.size(), gz) == 0)
    return path.substr(0, path.size() - gz.size()) + "-" + name + gz;
  const auto dot = path.rfind('.');
  const auto slash = path.rfind('/');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return has_ext ? path.substr(0, dot) + "-" + name + path.substr(dot) : path + "-" + name;
}

void write_file(const std::string& option, const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!(out << text)) throw UsageError("stepsim run: --" + option + ": cannot write '" + path + "'");
}

void write_traces(const po::variables_map& vm, const std::vector<plan::StepResult>& results) {
  report::TraceOptions o;
  if (vm.count("trace-ranks")) {
    try {
      o.ranks = report::RankFilter::parse(vm["trace-ranks"].as<std::string>());
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("stepsim run: --trace-ranks: ") + e.what());
    }
  }
  for (const auto& r : results) {
    // A trace past the limit would be gigabytes that no viewer opens: refused before writing.
    std::int64_t slices = 0;
    for (const auto& t : r.tasks) slices += o.ranks.contains(t.rank) ? 1 : 0;
    if (slices > config::limit_value(config::kMaxTraceSlices))
      throw UsageError("stepsim run: --trace: plan '" + r.name + "': " + config::over_limit(config::kMaxTraceSlices, slices, "") +
                       ", or --trace-ranks (such as 0-7) writes fewer ranks");
    const std::string path = path_for(vm["trace"].as<std::string>(), r.name, results.size() > 1);
    if (is_gzip_path(path)) {
      GzipOstream out(path);
      if (out) report::write_chrome_trace(r, out, o);
      out.close();
      if (!out) throw UsageError("stepsim run: --trace: cannot write '" + path + "'");
      continue;
    }
    std::ofstream out(path);
    report::write_chrome_trace(r, out, o);
    if (!out) throw UsageError("stepsim run: --trace: cannot write '" + path + "'");
  }
}

}  // namespace

void add_report_options(po::options_description& options) {
  options.add_options()("explain", "print the critical path: where each strategy's step time went")(
      "trace", po::value<std::string>(), "write a Chrome/Perfetto trace to FILE, gzipped when it ends in .gz (one per strategy: FILE-NAME.json)")(
      "trace-ranks", po::value<std::string>(), "ranks to put in the trace, such as 0-7,64 (default: all)")(
      "svg", po::value<std::string>(), "write the pipeline diagram as SVG to FILE (one per strategy)")(
      "html", po::value<std::string>(), "write one self-contained HTML report of every strategy to FILE")(
      "ascii", "print each strategy's pipeline diagram as text")(
      "price-per-gpu-hour", po::value<double>(), "USD per GPU-hour for the cost estimate (default: scenario or GPU spec)");
}

bool reports_need_detail(const po::variables_map& vm) {
  return vm.count("explain") || vm.count("trace") || vm.count("svg") || vm.count("ascii") || vm.count("html");
}

void print_run_reports(const po::variables_map& vm, const plan::Scenario& sc, const std::vector<plan::StepResult>& results) {
  std::cout << report::format_comparison(results) << "\n" << report::explain_winner(results);
  if (sc.training.tokens) std::cout << "\n" << report::format_time_and_money(results, *sc.training.tokens, price_of(vm, sc));
  for (const auto& r : results) {
    if (vm.count("explain")) std::cout << "\n" << report::format_critical_path(report::critical_path(r), r);
    if (vm.count("ascii")) std::cout << "\n" << report::render_pipeline_ascii(report::build_pipeline_view(r));
  }
}

void write_run_files(const po::variables_map& vm, const plan::Scenario& sc, const std::vector<plan::StepResult>& results) {
  if (vm.count("html")) write_file("html", vm["html"].as<std::string>(), report::render_html_report(sc.name, results));
  if (vm.count("svg"))
    for (const auto& r : results)
      write_file("svg", path_for(vm["svg"].as<std::string>(), r.name, results.size() > 1),
                 report::render_pipeline_svg(report::build_pipeline_view(r)));
  if (vm.count("trace")) write_traces(vm, results);
}

}  // namespace stepsim::cli
