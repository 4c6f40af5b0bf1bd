#include "sim/report/pipeline_svg.hpp"

#include <algorithm>
#include <cmath>

#include "sim/report/format.hpp"

namespace stepsim::report {

std::string xml_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

constexpr double kWidth = 1100, kLeft = 120, kRight = 30, kTop = 64, kRowH = 44, kBoxH = 28, kCommH = 8;
constexpr const char* kIdle = "#eeeeee";
constexpr const char* kComm = "#e15759";

struct Colour {
  const char* fill;
  const char* text;
};

// Tableau 10 hues; the light variant (Tableau 20) for odd model chunks.
Colour colour_of(BoxKind kind, int chunk) {
  const bool light = chunk % 2 == 1;
  switch (kind) {
    case BoxKind::forward: return light ? Colour{"#a0cbe8", "#1b1b1b"} : Colour{"#4e79a7", "#ffffff"};
    case BoxKind::backward: return light ? Colour{"#ffbe7d", "#1b1b1b"} : Colour{"#f28e2b", "#1b1b1b"};
    case BoxKind::weight: return light ? Colour{"#8cd17d", "#1b1b1b"} : Colour{"#59a14f", "#ffffff"};
    case BoxKind::optimizer: return Colour{"#b07aa1", "#ffffff"};
  }
  return Colour{"#999999", "#000000"};
}

const char* name_of(BoxKind kind) {
  switch (kind) {
    case BoxKind::forward: return "F";
    case BoxKind::backward: return "B";
    case BoxKind::weight: return "W";
    case BoxKind::optimizer: return "optimizer";
  }
  return "?";
}

struct Frame {
  double span_ps = 1;
  double plot_w = kWidth - kLeft - kRight;
  double x(std::int64_t t_ps) const { return kLeft + plot_w * static_cast<double>(t_ps) / span_ps; }
};

std::string num(double v) { return fixed(v, 2); }

std::string rect(double x, double y, double w, double h, const char* fill, const std::string& extra = "") {
  return "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(w, 0.0)) + "\" height=\"" + num(h) +
         "\" fill=\"" + fill + "\"" + extra;
}

std::string text(double x, double y, const std::string& body, const std::string& attrs) {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" " + attrs + ">" + xml_escape(body) + "</text>\n";
}

std::string draw_box(const PipelineBox& b, const Frame& f, double y) {
  const Colour c = colour_of(b.kind, b.chunk);
  const double x0 = f.x(b.start_ps), w = f.x(b.end_ps) - x0;
  std::string tip = std::string(name_of(b.kind));
  if (b.microbatch >= 0) tip += " microbatch " + std::to_string(b.microbatch);
  if (b.chunk > 0) tip += " chunk " + std::to_string(b.chunk);
  tip += ": " + fixed(static_cast<double>(b.start_ps) * 1e-9, 3) + "-" + fixed(static_cast<double>(b.end_ps) * 1e-9, 3) + " ms";
  std::string out = rect(x0, y, w, kBoxH, c.fill, " stroke=\"#ffffff\" stroke-width=\"0.6\"><title>" + xml_escape(tip) +
                                                       "</title></rect>\n");
  const std::string label = b.microbatch >= 0 ? std::to_string(b.microbatch) : (b.kind == BoxKind::optimizer ? "O" : "");
  if (!label.empty() && w >= 7.0 * static_cast<double>(label.size()) + 2)
    out += text(x0 + w / 2, y + kBoxH / 2 + 4, label,
                std::string("text-anchor=\"middle\" font-size=\"11\" fill=\"") + c.text + "\"");
  return out;
}

std::string draw_row(const PipelineRow& row, const Frame& f, double y) {
  std::string out = text(kLeft - 10, y + kBoxH / 2 + 4, "stage " + std::to_string(row.stage), "text-anchor=\"end\" font-size=\"12\"");
  out += text(kLeft - 10, y + kBoxH / 2 + 16, "rank " + std::to_string(row.rank),
              "text-anchor=\"end\" font-size=\"9\" fill=\"#666666\"");
  out += rect(kLeft, y, f.plot_w, kBoxH, kIdle, "/>\n");
  // Communication has a lane of its own under the compute boxes; a collective shorter than a
  // pixel is still drawn a pixel and a half wide, so thousands of short TP all-reduces show.
  if (!row.comm.empty()) {
    out += rect(kLeft, y + kBoxH + 2, f.plot_w, kCommH, "#f3f3f3", "/>\n");
    out += text(kLeft - 10, y + kBoxH + 2 + kCommH, "comm", "text-anchor=\"end\" font-size=\"8\" fill=\"#666666\"");
  }
  for (const auto& c : row.comm)
    out += rect(f.x(c.start_ps), y + kBoxH + 2, std::max(f.x(c.end_ps) - f.x(c.start_ps), 1.5), kCommH, kComm, "/>\n");
  for (const auto& b : row.boxes) out += draw_box(b, f, y);
  return out;
}

std::string draw_axis(const Frame& f, double y) {
  const double min_step_ps = f.span_ps / 12;
  double step = 1;
  while (step * 10 <= min_step_ps) step *= 10;
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (step * m >= min_step_ps) { step *= m; break; }
  const double step_ms = step * 1e-9;
  const int decimals = step_ms >= 1 ? 0 : step_ms >= 0.1 ? 1 : step_ms >= 0.01 ? 2 : 3;
  std::string out = "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(y) + "\" x2=\"" + num(kLeft + f.plot_w) + "\" y2=\"" + num(y) +
                    "\" stroke=\"#333333\"/>\n";
  for (int k = 0; k * step <= f.span_ps * (1 + 1e-9); ++k) {
    const double x = f.x(static_cast<std::int64_t>(std::llround(k * step)));
    out += "<line x1=\"" + num(x) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x) + "\" y2=\"" + num(y + 5) + "\" stroke=\"#333333\"/>\n";
    out += text(x, y + 17, fixed(k * step_ms, decimals), "text-anchor=\"middle\" font-size=\"10\"");
  }
  out += text(kLeft - 10, y + 17, "time (ms)", "text-anchor=\"end\" font-size=\"10\"");
  return out;
}

std::string draw_legend(const PipelineView& v, double y) {
  struct Item { const char* fill; std::string label; };
  bool has[4] = {false, false, false, false}, has_comm = false;
  for (const auto& row : v.rows) {
    for (const auto& b : row.boxes) has[static_cast<int>(b.kind)] = true;
    has_comm = has_comm || !row.comm.empty();
  }
  std::vector<Item> items;  // only what the diagram shows
  const char* labels[4] = {"F forward", "B backward", "W weight gradient", "optimizer"};
  for (int k = 0; k < 4; ++k)
    if (has[k]) items.push_back({colour_of(static_cast<BoxKind>(k), 0).fill, labels[k]});
  if (has_comm) items.push_back({kComm, "communication"});
  items.push_back({kIdle, "idle"});
  if (v.chunks > 1) items.push_back({colour_of(BoxKind::forward, 1).fill, "lighter: odd model chunk"});
  std::string out;
  double x = kLeft;
  for (const auto& item : items) {
    out += rect(x, y, 14, 14, item.fill, " stroke=\"#999999\" stroke-width=\"0.5\"/>\n");
    out += text(x + 19, y + 11, item.label, "font-size=\"11\"");
    x += 34 + 6.5 * static_cast<double>(item.label.size());
  }
  out += text(kLeft, y + 32, "numbers in boxes: microbatch", "font-size=\"10\" fill=\"#555555\"");
  return out;
}

}  // namespace

std::string render_pipeline_svg(const PipelineView& v) {
  Frame f;
  f.span_ps = static_cast<double>(std::max<std::int64_t>(v.end_ps, 1));
  const double axis_y = kTop + kRowH * static_cast<double>(v.rows.size()) + 4;
  const double legend_y = axis_y + 34;
  const double height = legend_y + 46;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + num(kWidth) + "\" height=\"" + num(height) +
         "\" viewBox=\"0 0 " + num(kWidth) + " " + num(height) + "\" font-family=\"Helvetica, Arial, sans-serif\">\n";
  out += rect(0, 0, kWidth, height, "#ffffff", "/>\n");
  out += text(kLeft, 24, v.title.empty() ? "pipeline" : v.title, "font-size=\"15\" font-weight=\"bold\"");
  out += text(kLeft, 44, bubble_caption(v), "font-size=\"12\"");
  for (std::size_t i = 0; i < v.rows.size(); ++i) out += draw_row(v.rows[i], f, kTop + kRowH * static_cast<double>(i));
  out += draw_axis(f, axis_y);
  out += draw_legend(v, legend_y);
  return out + "</svg>\n";
}

}  // namespace stepsim::report
