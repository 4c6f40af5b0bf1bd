#include "sim/report/pipeline_ascii.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "sim/report/format.hpp"

namespace stepsim::report {

namespace {

char letter_of(const PipelineBox& b) {
  const char c = b.kind == BoxKind::forward ? 'F' : b.kind == BoxKind::backward ? 'B' : b.kind == BoxKind::weight ? 'W' : 'O';
  return b.chunk % 2 == 1 ? static_cast<char>(std::tolower(c)) : c;
}

struct Scale {
  double ps_per_col = 1;
  int cols = 1;  ///< columns the timeline uses
};

// Columns per unit of time: a whole number of columns per quantum when the view has one, so
// uniform boxes get equal widths.
Scale choose_scale(const PipelineView& v, int available) {
  Scale s;
  const double span = static_cast<double>(std::max<std::int64_t>(v.end_ps, 1));
  s.ps_per_col = span / available;
  if (v.time_quantum_ps > 0) {
    const double per_quantum = std::floor(available / (span / static_cast<double>(v.time_quantum_ps)));
    if (per_quantum >= 1) s.ps_per_col = static_cast<double>(v.time_quantum_ps) / per_quantum;
  }
  s.cols = std::clamp(static_cast<int>(std::ceil(span / s.ps_per_col - 1e-9)), 1, available);
  return s;
}

int column(std::int64_t t_ps, const Scale& s) {
  return std::clamp(static_cast<int>(std::llround(static_cast<double>(t_ps) / s.ps_per_col)), 0, s.cols);
}

std::string draw_row(const PipelineRow& row, const Scale& s) {
  std::string line(static_cast<std::size_t>(s.cols), '.');
  for (const auto& c : row.comm)
    for (int i = column(c.start_ps, s); i < std::max(column(c.end_ps, s), column(c.start_ps, s) + 1) && i < s.cols; ++i)
      line[static_cast<std::size_t>(i)] = '~';
  for (const auto& b : row.boxes) {
    const int c0 = std::min(column(b.start_ps, s), s.cols - 1);
    const int c1 = std::max(column(b.end_ps, s), c0 + 1);
    // The letter and microbatch when they fit with a space after them; otherwise the letter repeated, so narrow boxes still
    // show the F/B/W pattern instead of run-together digits.
    std::string label(1, letter_of(b));
    if (b.microbatch >= 0) label += std::to_string(b.microbatch);
    if (static_cast<int>(label.size()) >= c1 - c0) label = std::string(static_cast<std::size_t>(c1 - c0), label[0]);
    for (int i = c0; i < c1 && i < s.cols; ++i) {
      const auto k = static_cast<std::size_t>(i - c0);
      line[static_cast<std::size_t>(i)] = k < label.size() ? label[k] : ' ';
    }
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

// Whether some forward box of the row is too narrow for its letter and microbatch number.
bool labels_truncated(const PipelineRow& row, const Scale& s) {
  for (const auto& b : row.boxes) {
    if (b.kind != BoxKind::forward || b.microbatch < 0) continue;
    const int width = std::max(column(b.end_ps, s), std::min(column(b.start_ps, s), s.cols - 1) + 1) - column(b.start_ps, s);
    if (width <= static_cast<int>(std::to_string(b.microbatch).size()) + 1) return true;
  }
  return false;
}

// Under a row whose boxes cannot hold their numbers: the number of every k-th microbatch at the
// column where its forward (chunk 0) starts, k the smallest power of two that leaves a space
// between numbers, so a 32-microbatch pipeline still says which pass is which.
std::string microbatch_ruler(const PipelineRow& row, const Scale& s) {
  std::vector<std::pair<int, int>> starts;  // (column, microbatch)
  for (const auto& b : row.boxes)
    if (b.kind == BoxKind::forward && b.chunk == 0 && b.microbatch >= 0) starts.emplace_back(column(b.start_ps, s), b.microbatch);
  for (int k = 1; !starts.empty() && k <= (1 << 24); k *= 2) {
    std::string line(static_cast<std::size_t>(s.cols), ' ');
    int free_from = 0;
    bool fits = true;
    for (const auto& [col, mb] : starts) {
      if (mb % k != 0) continue;
      const std::string label = std::to_string(mb);
      if (col + static_cast<int>(label.size()) > s.cols) continue;  // no room before the row ends
      if (col < free_from) {
        fits = false;
        break;
      }
      line.replace(static_cast<std::size_t>(col), label.size(), label);
      free_from = col + static_cast<int>(label.size()) + 1;
    }
    if (!fits) continue;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
  }
  return "";
}

// The smallest 1, 2 or 5 × 10^k picoseconds that is at least `min_ps`.
double nice_step(double min_ps) {
  double base = 1;
  while (base * 10 <= min_ps) base *= 10;
  for (const double f : {1.0, 2.0, 5.0, 10.0})
    if (base * f >= min_ps) return base * f;
  return base * 10;
}

// Ticks at round times (1, 2 or 5 × 10^k ms apart), at least kMinGap columns apart, labelled in ms.
std::string axis(const Scale& s, std::size_t indent) {
  constexpr int kMinGap = 8;
  const double step_ps = nice_step(kMinGap * s.ps_per_col);
  const double step_ms = step_ps * 1e-9;
  const int decimals = step_ms >= 1 ? 0 : step_ms >= 0.1 ? 1 : step_ms >= 0.01 ? 2 : 3;
  std::string ticks(static_cast<std::size_t>(s.cols) + 1, '-');
  std::string labels = pad_left("ms", indent - 1) + " ";
  for (int k = 0;; ++k) {
    const int col = static_cast<int>(std::llround(k * step_ps / s.ps_per_col));
    if (col > s.cols) break;
    ticks[static_cast<std::size_t>(col)] = '+';
    const std::size_t at = indent + static_cast<std::size_t>(col);
    if (labels.size() > at) continue;  // the previous label is still running
    labels += std::string(at - labels.size(), ' ') + fixed(k * step_ms, decimals) + " ";
  }
  while (!labels.empty() && labels.back() == ' ') labels.pop_back();
  return std::string(indent, ' ') + ticks + "\n" + labels + "\n";
}

}  // namespace

std::string render_pipeline_ascii(const PipelineView& v, int width) {
  width = std::max(width, 40);
  std::string out = v.title.empty() ? "" : v.title + "\n";
  out += bubble_caption(v) + "\n";
  if (v.rows.empty() || v.end_ps <= 0) return out + "(no timeline to draw)\n";
  std::size_t label_width = 0;
  for (const auto& row : v.rows) label_width = std::max(label_width, ("stage " + std::to_string(row.stage)).size());
  const std::size_t indent = label_width + 2;  // "stage 0 |"
  const Scale s = choose_scale(v, width - static_cast<int>(indent) - 1);
  bool ruled = false;
  for (const auto& row : v.rows) {
    out += pad_right("stage " + std::to_string(row.stage), label_width) + " |" + draw_row(row, s) + "\n";
    if (!labels_truncated(row, s)) continue;
    if (const std::string ruler = microbatch_ruler(row, s); !ruler.empty())
      out += pad_right("mb", label_width) + " |" + ruler + "\n", ruled = true;
  }
  out += axis(s, indent);
  out += "F3 = forward of microbatch 3, B = backward, W = weight gradient, O = optimizer, ~ = communication, . = idle\n";
  if (ruled) out += "mb row: where the forward of the microbatch numbered there starts on the stage above\n";
  if (v.chunks > 1) out += "lower case = odd model chunk (interleaved: chunk c of stage s is virtual stage c*p+s)\n";
  out += "1 column = " + duration(s.ps_per_col * 1e-12) + "\n";
  return out;
}

}  // namespace stepsim::report
