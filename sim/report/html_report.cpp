#include "sim/report/html_report.hpp"

#include <algorithm>
#include <iterator>
#include <sstream>

#include "sim/report/comparison.hpp"
#include "sim/report/format.hpp"
#include "sim/report/pipeline_svg.hpp"
#include "sim/report/pipeline_view.hpp"

namespace stepsim::report {
namespace {

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;
constexpr int kBarWidth = 720;  // px for the longest step or the largest memory
constexpr int kLabelWidth = 170;
constexpr int kRowHeight = 26;

// Colour-blind-safe palette, one per part: Okabe & Ito's eight ("Color Universal Design"; grey for
// their black, so text on it stays readable), then Paul Tol's wine, teal and indigo ("muted" scheme).
const char* colour(std::size_t i) {
  static const char* kColours[] = {"#0072B2", "#E69F00", "#56B4E9", "#009E73", "#F0E442",
                                   "#D55E00", "#CC79A7", "#999999", "#882255", "#44AA99", "#332288"};
  return kColours[i % std::size(kColours)];
}

// Attribute values: micro-unit resolution by default.
std::string num(double v, int decimals = 6) { return fixed(v, decimals); }

// A named amount of a bar: seconds of a step, or bytes of memory.
struct Part {
  std::string what;
  double value = 0;
};

// A plan's step as parts: compute (what its losses leave) and each loss of losses_of(), in a fixed
// order so that colours mean the same thing on every bar.
std::vector<Part> step_parts(const plan::StepResult& r) {
  static const std::vector<std::string> kOrder{"pipeline bubbles", "exposed TP communication", "exposed pipeline send/recv",
                                               "exposed DP gradient reduction", "exposed ZeRO gathers and scatters",
                                               "exposed expert all-to-all", "exposed ring-attention K/V exchange",
                                               "sync stalls waiting for slower peers", "GPU idle while the host issues kernels",
                                               "GPU idle while the optimizer is offloaded (PCIe copies, CPU step)"};
  const auto losses = losses_of(r);
  std::vector<Part> parts{{"compute", 0}};
  double lost = 0;
  for (const auto& what : kOrder)
    for (const auto& l : losses)
      if (l.what == what) parts.push_back({what, l.fraction * r.step_time_s}), lost += l.fraction * r.step_time_s;
  parts.front().value = std::max(0.0, r.step_time_s - lost);
  return parts;
}

void legend(std::ostringstream& out, const std::vector<std::string>& names) {
  out << "<p class=\"legend\">";
  for (std::size_t i = 0; i < names.size(); ++i)
    out << "<span><i style=\"background:" << colour(i) << "\"></i>" << xml_escape(names[i]) << "</span>";
  out << "</p>\n";
}

void comparison_table(std::ostringstream& out, const std::vector<plan::StepResult>& results) {
  const auto best = best_index(results);
  out << "<table><tr><th>plan</th><th>parallelism</th><th>step time</th><th>tokens/s</th><th>MFU</th><th>bubble</th>"
         "<th>exposed comm</th><th>peak memory</th><th>fits</th></tr>\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const double comm = r.exposed_comm_s.total();
    out << "<tr" << (best && *best == i ? " class=\"best\"" : "") << "><td>" << xml_escape(r.name) << "</td><td>tp" << r.tp
        << " pp" << r.pp << " dp" << r.dp << (r.ep > 1 ? " ep" + std::to_string(r.ep) : std::string())
        << (r.cp > 1 ? " cp" + std::to_string(r.cp) : std::string()) << " z" << r.zero_stage << "</td><td data-plan=\"" << xml_escape(r.name)
        << "\" data-seconds=\"" << num(r.step_time_s) << "\">" << milliseconds(r.step_time_s) << "</td><td>"
        << with_thousands(r.tokens_per_s) << "</td><td>" << percent(r.mfu) << "</td><td>" << percent(r.bubble_fraction)
        << "</td><td>" << milliseconds(comm) << "</td><td>" << gibibytes(static_cast<double>(r.peak_memory_bytes)) << " / "
        << gibibytes(static_cast<double>(r.memory_capacity_bytes)) << "</td><td>" << (r.fits ? "yes" : "no") << "</td></tr>\n";
  }
  out << "</table>\n";
}

// One horizontal bar per plan, its length the step time, in parts.
void step_bars(std::ostringstream& out, const std::vector<plan::StepResult>& results) {
  double longest = 0;
  for (const auto& r : results) longest = std::max(longest, r.step_time_s);
  const int height = kRowHeight * static_cast<int>(results.size()) + 24;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bars\" width=\"" << kLabelWidth + kBarWidth + 110 << "\" height=\"" << height << "\">\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const int y = kRowHeight * static_cast<int>(i);
    out << "<text x=\"" << kLabelWidth - 8 << "\" y=\"" << y + 17 << "\" text-anchor=\"end\">" << xml_escape(r.name) << "</text>\n";
    double x = kLabelWidth;
    const auto parts = step_parts(r);
    for (std::size_t k = 0; k < parts.size(); ++k) {
      const double w = longest > 0 ? parts[k].value / longest * kBarWidth : 0;
      out << "<rect x=\"" << num(x, 2) << "\" y=\"" << y + 4 << "\" width=\"" << num(w, 2) << "\" height=\"" << kRowHeight - 8
          << "\" fill=\"" << colour(k) << "\" data-plan=\"" << xml_escape(r.name) << "\" data-part=\"" << parts[k].what
          << "\" data-seconds=\"" << num(parts[k].value) << "\"><title>" << xml_escape(r.name) << ": " << parts[k].what << " "
          << milliseconds(parts[k].value) << "</title></rect>\n";
      x += w;
    }
    out << "<text x=\"" << num(x + 6, 2) << "\" y=\"" << y + 17 << "\">" << milliseconds(r.step_time_s) << "</text>\n";
  }
  out << "<text x=\"" << kLabelWidth << "\" y=\"" << height - 6 << "\" class=\"axis\">bar length: step time (the longest, "
      << milliseconds(longest) << ", is " << kBarWidth << " px)</text>\n</svg>\n";
}

// Memory at the peak by kind, against the GPU's capacity (a line).
void memory_bars(std::ostringstream& out, const std::vector<plan::StepResult>& results) {
  double largest = 0;
  for (const auto& r : results)
    largest = std::max({largest, static_cast<double>(r.peak_memory_bytes), static_cast<double>(r.memory_capacity_bytes)});
  const int height = kRowHeight * static_cast<int>(results.size()) + 24;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bars\" width=\"" << kLabelWidth + kBarWidth + 110 << "\" height=\"" << height << "\">\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const auto& m = r.memory_at_peak;
    const std::vector<Part> kinds{{"parameters", static_cast<double>(m.parameters)},
                                  {"FP8 weight copies", static_cast<double>(m.fp8_weights)},
                                  {"gradients", static_cast<double>(m.gradients)},
                                  {"optimizer states", static_cast<double>(m.optimizer_states)},
                                  {"activations", static_cast<double>(m.activations)},
                                  {"gathered parameters", static_cast<double>(m.gathered_parameters)},
                                  {"buffers", static_cast<double>(m.buffers)},
                                  {"reserve", static_cast<double>(m.reserve)}};
    const int y = kRowHeight * static_cast<int>(i);
    out << "<text x=\"" << kLabelWidth - 8 << "\" y=\"" << y + 17 << "\" text-anchor=\"end\">" << xml_escape(r.name) << "</text>\n";
    double x = kLabelWidth;
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      const double w = largest > 0 ? kinds[k].value / largest * kBarWidth : 0;
      out << "<rect x=\"" << num(x, 2) << "\" y=\"" << y + 4 << "\" width=\"" << num(w, 2) << "\" height=\"" << kRowHeight - 8
          << "\" fill=\"" << colour(k) << "\" data-plan=\"" << xml_escape(r.name) << "\" data-part=\"" << kinds[k].what
          << "\" data-gib=\"" << num(kinds[k].value / kGib) << "\"><title>" << xml_escape(r.name) << ": " << kinds[k].what << " "
          << gibibytes(kinds[k].value) << "</title></rect>\n";
      x += w;
    }
    const double cap = largest > 0 ? static_cast<double>(r.memory_capacity_bytes) / largest * kBarWidth : 0;
    out << "<line x1=\"" << num(kLabelWidth + cap, 2) << "\" x2=\"" << num(kLabelWidth + cap, 2) << "\" y1=\"" << y + 1
        << "\" y2=\"" << y + kRowHeight - 1 << "\" stroke=\"#000\" stroke-width=\"2\"/>\n";
    out << "<text x=\"" << num(std::max(x, kLabelWidth + cap) + 6, 2) << "\" y=\"" << y + 17 << "\">"
        << gibibytes(static_cast<double>(r.peak_memory_bytes)) << (r.fits ? "" : " (does not fit)") << "</text>\n";
  }
  out << "<text x=\"" << kLabelWidth << "\" y=\"" << height - 6 << "\" class=\"axis\">peak memory per GPU by kind; the black line is "
         "the GPU's capacity</text>\n</svg>\n";
}

// Memory in use over the step, one line per rank (at most 16), against capacity.
void memory_over_time(std::ostringstream& out, const plan::StepResult& r) {
  const int w = 760, h = 220, left = 50;
  const double cap = static_cast<double>(r.memory_capacity_bytes);
  double top = cap;
  for (const auto& info : r.ranks)
    for (const auto& s : info.memory) top = std::max(top, static_cast<double>(s.bytes));
  const double end = std::max(r.step_time_s, 1e-12);
  auto x_of = [&](double t_s) { return left + t_s / end * (w - left - 10); };
  auto y_of = [&](double bytes) { return h - 20 - (top > 0 ? bytes / top : 0) * (h - 40); };
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"memory\" width=\"" << w << "\" height=\"" << h << "\">\n";
  out << "<line x1=\"" << left << "\" x2=\"" << w - 10 << "\" y1=\"" << num(y_of(cap), 2) << "\" y2=\"" << num(y_of(cap), 2)
      << "\" stroke=\"#000\" stroke-width=\"2\"/><text x=\"" << left + 4 << "\" y=\"" << num(y_of(cap) - 4, 2) << "\" class=\"axis\">capacity "
      << gibibytes(cap) << "</text>\n";
  std::size_t drawn = 0;
  for (const auto& info : r.ranks) {
    if (info.memory.empty() || drawn == 16) continue;
    out << "<polyline fill=\"none\" stroke=\"" << colour(drawn) << "\" data-plan=\"" << xml_escape(r.name) << "\" data-rank=\""
        << info.rank << "\" points=\"";
    double last = 0;
    for (const auto& s : info.memory) {
      const double t = static_cast<double>(s.t_ps) * 1e-12;
      out << num(x_of(t), 1) << "," << num(y_of(last), 1) << " " << num(x_of(t), 1) << "," << num(y_of(static_cast<double>(s.bytes)), 1) << " ";
      last = static_cast<double>(s.bytes);
    }
    out << num(x_of(end), 1) << "," << num(y_of(last), 1) << "\"><title>rank " << info.rank << "</title></polyline>\n";
    ++drawn;
  }
  out << "<text x=\"" << left << "\" y=\"" << h - 4 << "\" class=\"axis\">0 to " << milliseconds(r.step_time_s)
      << ": memory in use per rank (" << drawn << " of " << r.ranks.size() << " ranks drawn)</text>\n</svg>\n";
}

// An SVG document as an element inside HTML: without its XML declaration.
std::string inline_svg(const std::string& document) {
  const auto at = document.find("<svg");
  return at == std::string::npos ? document : document.substr(at);
}

constexpr const char* kStyle = R"(<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}tr.best{background:#eef6ee;font-weight:600}
.legend span{margin-right:1.2em;white-space:nowrap}.legend i{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:middle}
svg text{font-size:12px}.axis{fill:#666}.capacity{stroke:#000;stroke-width:2}
.timeline{overflow-x:auto;border:1px solid #ddd}pre{white-space:pre-wrap}
</style>)";

void page_head(std::ostringstream& out, const std::string& title) {
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>" << xml_escape(title) << " — stepsim</title>"
      << kStyle << "</head><body>\n<h1>" << xml_escape(title) << "</h1>\n";
}

// The timeline's zoom: a slider that widens the pipeline SVG inside its scrolling box.
constexpr const char* kScript = R"(<script>
document.querySelectorAll('input.zoom').forEach(function(z){z.addEventListener('input',function(){
var svg=document.getElementById(z.dataset.target).querySelector('svg');
if(!svg.dataset.width){svg.dataset.width=svg.getAttribute('width');}
svg.setAttribute('width',String(parseFloat(svg.dataset.width)*parseFloat(z.value)));});});
</script>)";

// Fitting plans no other fitting plan beats on both tokens/s and memory (at least as good on both,
// better on one): the choices worth making.
std::vector<bool> pareto_front(const std::vector<plan::StepResult>& results) {
  std::vector<bool> front(results.size(), false);
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].fits) continue;
    bool beaten = false;
    for (std::size_t j = 0; j < results.size() && !beaten; ++j) {
      const auto &a = results[i], &b = results[j];
      beaten = j != i && b.fits && b.tokens_per_s >= a.tokens_per_s && b.peak_memory_bytes <= a.peak_memory_bytes &&
               (b.tokens_per_s > a.tokens_per_s || b.peak_memory_bytes < a.peak_memory_bytes);
    }
    front[i] = !beaten;
  }
  return front;
}

// Tokens/s against peak memory, every plan a point (hollow where it does not fit), the Pareto
// front joined by a line, the capacity a vertical line.
void sweep_scatter(std::ostringstream& out, const std::vector<plan::StepResult>& results) {
  const int w = 760, h = 420, left = 70, bottom = 40;
  double max_gib = 0, max_tps = 0;
  for (const auto& r : results) {
    max_gib = std::max({max_gib, static_cast<double>(r.peak_memory_bytes) / kGib, static_cast<double>(r.memory_capacity_bytes) / kGib});
    max_tps = std::max(max_tps, r.tokens_per_s);
  }
  auto x_of = [&](double gib) { return left + (max_gib > 0 ? gib / max_gib : 0) * (w - left - 20); };
  auto y_of = [&](double tps) { return h - bottom - (max_tps > 0 ? tps / max_tps : 0) * (h - bottom - 20); };
  const auto front = pareto_front(results);
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"scatter\" width=\"" << w << "\" height=\"" << h << "\">\n";
  out << "<line x1=\"" << left << "\" x2=\"" << w - 20 << "\" y1=\"" << h - bottom << "\" y2=\"" << h - bottom << "\" stroke=\"#999\"/>"
      << "<line x1=\"" << left << "\" x2=\"" << left << "\" y1=\"20\" y2=\"" << h - bottom << "\" stroke=\"#999\"/>\n";
  if (!results.empty()) {
    const double cap = x_of(static_cast<double>(results.front().memory_capacity_bytes) / kGib);
    out << "<line x1=\"" << num(cap, 2) << "\" x2=\"" << num(cap, 2) << "\" y1=\"20\" y2=\"" << h - bottom
        << "\" stroke=\"#000\" stroke-width=\"2\"/><text x=\"" << num(cap + 4, 2) << "\" y=\"" << h - bottom - 6 << "\" class=\"axis\">capacity "
        << gibibytes(static_cast<double>(results.front().memory_capacity_bytes)) << "</text>\n";
  }
  std::vector<std::size_t> on_front;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (front[i]) on_front.push_back(i);
  std::sort(on_front.begin(), on_front.end(), [&](std::size_t a, std::size_t b) { return results[a].peak_memory_bytes < results[b].peak_memory_bytes; });
  if (!on_front.empty()) {
    out << "<polyline fill=\"none\" stroke=\"" << colour(1) << "\" stroke-width=\"2\" points=\"";
    for (std::size_t i : on_front)
      out << num(x_of(static_cast<double>(results[i].peak_memory_bytes) / kGib), 1) << "," << num(y_of(results[i].tokens_per_s), 1) << " ";
    out << "\"/>\n";
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const double gib = static_cast<double>(r.peak_memory_bytes) / kGib;
    out << "<circle cx=\"" << num(x_of(gib), 1) << "\" cy=\"" << num(y_of(r.tokens_per_s), 1) << "\" r=\"" << (front[i] ? 5 : 3)
        << "\" fill=\"" << (r.fits ? colour(front[i] ? 1 : 0) : "none") << "\" stroke=\"" << colour(front[i] ? 1 : 0)
        << "\" data-plan=\"" << xml_escape(r.name) << "\" data-gib=\"" << num(gib) << "\" data-tokens=\"" << num(r.tokens_per_s, 3)
        << "\" data-pareto=\"" << (front[i] ? 1 : 0) << "\"><title>" << xml_escape(r.name) << ": " << with_thousands(r.tokens_per_s)
        << " tokens/s, " << gibibytes(static_cast<double>(r.peak_memory_bytes)) << (r.fits ? "" : " (does not fit)") << "</title></circle>\n";
  }
  out << "<text x=\"" << left << "\" y=\"" << h - 12 << "\" class=\"axis\">peak memory per GPU, 0 to " << fixed(max_gib, 1)
      << " GiB →</text><text x=\"12\" y=\"14\" class=\"axis\">tokens/s, 0 to " << with_thousands(max_tps) << " ↑</text>\n</svg>\n";
}

}  // namespace

std::string render_sweep_html_report(const std::string& title, const std::vector<plan::StepResult>& results) {
  std::ostringstream out;
  page_head(out, title);
  std::size_t fit = 0;
  for (const auto& r : results) fit += r.fits ? 1 : 0;
  out << "<p>" << results.size() << " plans simulated, " << fit << " fit in memory. Each point is a plan (hollow: does not fit); "
      << "the line joins the Pareto front, the plans no other plan beats on both throughput and memory.</p>\n";
  sweep_scatter(out, results);
  std::vector<plan::StepResult> best;
  for (const auto& r : results)
    if (r.fits) best.push_back(r);
  std::stable_sort(best.begin(), best.end(), [](const auto& a, const auto& b) { return a.tokens_per_s > b.tokens_per_s; });
  if (best.size() > 20) best.resize(20);
  out << "<h2>The best plans that fit</h2>\n";
  comparison_table(out, best);
  out << "</body></html>\n";
  return out.str();
}

std::string render_html_report(const std::string& title, const std::vector<plan::StepResult>& results) {
  std::ostringstream out;
  page_head(out, title);
  out << "<h2>Verdict</h2>\n<pre>" << xml_escape(explain_winner(results)) << "</pre>\n";
  out << "<h2>Plans</h2>\n";
  comparison_table(out, results);
  out << "<h2>Where each step went</h2>\n";
  legend(out, {"compute", "pipeline bubbles", "exposed TP communication", "exposed pipeline send/recv",
               "exposed DP gradient reduction", "exposed ZeRO gathers and scatters", "exposed expert all-to-all",
               "exposed ring-attention K/V exchange", "sync stalls waiting for slower peers",
               "GPU idle while the host issues kernels", "GPU idle while the optimizer is offloaded (PCIe copies, CPU step)"});
  step_bars(out, results);
  out << "<h2>Memory at the peak</h2>\n";
  legend(out, {"parameters", "gradients", "optimizer states", "activations", "gathered parameters", "buffers", "reserve"});
  memory_bars(out, results);
  int index = 0;
  for (const auto& r : results) {
    if (r.tasks.empty()) continue;
    const std::string id = "timeline" + std::to_string(index++);
    out << "<h2>" << xml_escape(r.name) << ": timeline</h2>\n<p>zoom <input type=\"range\" class=\"zoom\" min=\"1\" max=\"16\" step=\"0.5\" value=\"1\" data-target=\""
        << id << "\"/></p>\n<div class=\"timeline\" id=\"" << id << "\">" << inline_svg(render_pipeline_svg(build_pipeline_view(r)))
        << "</div>\n";
    out << "<h3>" << xml_escape(r.name) << ": memory over the step</h3>\n";
    memory_over_time(out, r);
  }
  out << kScript << "\n</body></html>\n";
  return out.str();
}

}  // namespace stepsim::report
