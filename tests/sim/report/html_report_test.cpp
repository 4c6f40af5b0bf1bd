// Pins sim/report/html_report.cpp: the page is well-formed, and every number it plots is the
// result's own: a plan's step parts add up to its step time (compute is what the losses leave),
// the memory parts are its breakdown at the peak, and each detailed plan gets its timeline.
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <string>

#include "sim/report/html_report.hpp"
#include "synthetic.hpp"

namespace stepsim::report {
namespace {

// (plan, part) -> value of every element carrying data-plan, data-part and `attribute`.
std::map<std::pair<std::string, std::string>, double> plotted(const std::string& html, const std::string& attribute) {
  std::map<std::pair<std::string, std::string>, double> out;
  const std::regex rx("data-plan=\"([^\"]*)\" data-part=\"([^\"]*)\" " + attribute + "=\"([0-9.]+)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), rx); it != std::sregex_iterator(); ++it)
    out[{(*it)[1].str(), (*it)[2].str()}] = std::stod((*it)[3].str());
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST_CASE("the report plots each plan's step and memory as the result has them") {
  testing::PipelineShape shape;
  shape.tp = 2, shape.pp = 2, shape.microbatches = 4;
  auto a = testing::synthetic_pipeline(shape);
  a.name = "a";
  a.bubble_fraction = 0.25, a.exposed_comm_s.tp = 0.1 * a.step_time_s, a.host_bound_s = 0.05 * a.step_time_s;
  a.offload_optimizer = true, a.offload_s = 0.08 * a.step_time_s;
  a.memory_at_peak = {.parameters = 2LL << 30, .gradients = 1LL << 30, .activations = 3LL << 30};
  auto b = a;
  b.name = "b<&>";  // escaped everywhere
  b.tasks.clear(), b.ranks.clear();  // no detail: bars only
  const std::string html = render_html_report("title & more", {a, b});

  const auto steps = plotted(html, "data-seconds");
  // Compute is 1 − 0.25 − 0.10 − 0.05 − 0.08 = 0.52 of the step; the parts add up to the step.
  CHECK(steps.at({"a", "compute"}) == doctest::Approx(0.52 * a.step_time_s).epsilon(1e-5));
  CHECK(steps.at({"a", "pipeline bubbles"}) == doctest::Approx(0.25 * a.step_time_s).epsilon(1e-5));
  CHECK(steps.at({"a", "exposed TP communication"}) == doctest::Approx(0.10 * a.step_time_s).epsilon(1e-5));
  CHECK(steps.at({"a", "GPU idle while the host issues kernels"}) == doctest::Approx(0.05 * a.step_time_s).epsilon(1e-5));
  CHECK(steps.at({"a", "GPU idle while the optimizer is offloaded (PCIe copies, CPU step)"}) ==
        doctest::Approx(0.08 * a.step_time_s).epsilon(1e-5));
  double sum = 0;
  for (const auto& [key, seconds] : steps)
    if (key.first == "a") sum += seconds;
  CHECK(sum == doctest::Approx(a.step_time_s).epsilon(1e-5));
  CHECK(steps.count({"b&lt;&amp;&gt;", "compute"}) == 1);

  const auto memory = plotted(html, "data-gib");
  CHECK(memory.at({"a", "parameters"}) == doctest::Approx(2.0));
  CHECK(memory.at({"a", "gradients"}) == doctest::Approx(1.0));
  CHECK(memory.at({"a", "activations"}) == doctest::Approx(3.0));
  CHECK(memory.at({"a", "optimizer states"}) == 0);

  // One timeline (the pipeline SVG, inline: no XML declaration) and one memory plot, for a only.
  CHECK(count(html, "class=\"timeline\"") == 1);
  CHECK(count(html, "<?xml") == 0);
  CHECK(count(html, "data-rank=") == a.ranks.size());
  CHECK(count(html, "<title>title &amp; more") == 1);
  CHECK(html.find("b<&>") == std::string::npos);
  // Every element opened is closed: as many <svg as </svg>, <tr as </tr>.
  CHECK(count(html, "<svg") == count(html, "</svg>"));
  CHECK(count(html, "<tr") == count(html, "</tr>"));
}

TEST_CASE("a sweep's page marks the Pareto front of the plans that fit") {
  // a: 100 tokens/s at 10 GiB; b: 90 at 12 (a beats it on both); c: 120 at 20 (the fastest that
  // fits); d: 200 at 90 GiB, which does not fit on 80. Front: a and c.
  auto plan = [](const std::string& name, double tokens_per_s, double gib, bool fits) {
    plan::StepResult r;
    r.name = name, r.tokens_per_s = tokens_per_s, r.fits = fits, r.step_time_s = 1;
    r.peak_memory_bytes = static_cast<std::int64_t>(gib * (1LL << 30)), r.memory_capacity_bytes = 80LL << 30;
    return r;
  };
  const std::string html = render_sweep_html_report("sweep", {plan("a", 100, 10, true), plan("b", 90, 12, true),
                                                              plan("c", 120, 20, true), plan("d", 200, 90, false)});
  const std::regex rx("data-plan=\"([a-d])\" data-gib=\"([0-9.]+)\" data-tokens=\"([0-9.]+)\" data-pareto=\"([01])\"");
  std::map<std::string, std::string> pareto;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), rx); it != std::sregex_iterator(); ++it) {
    pareto[(*it)[1].str()] = (*it)[4].str();
    if ((*it)[1].str() == "c") {
      CHECK(std::stod((*it)[2].str()) == doctest::Approx(20));
      CHECK(std::stod((*it)[3].str()) == doctest::Approx(120));
    }
  }
  CHECK(pareto == std::map<std::string, std::string>{{"a", "1"}, {"b", "0"}, {"c", "1"}, {"d", "0"}});
  CHECK(count(html, "<td data-plan=") == 3);  // the table lists the plans that fit
}

}  // namespace
}  // namespace stepsim::report
