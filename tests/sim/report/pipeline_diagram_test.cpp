#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "sim/report/bubble_lesson.hpp"
#include "sim/report/format.hpp"
#include "sim/report/pipeline_ascii.hpp"
#include "sim/report/pipeline_svg.hpp"
#include "synthetic.hpp"

using namespace stepsim;
using K = plan::ScheduleKind;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A minimal XML well-formedness check: tags nest and close, attribute values are quoted, text
// has no raw '<' and every '&' starts an entity. Returns "" or what is wrong.
std::string xml_problem(const std::string& doc) {
  std::vector<std::string> open;
  std::size_t i = 0;
  while (i < doc.size()) {
    if (doc[i] == '&') {
      const auto semi = doc.find(';', i);
      const std::string entity = semi == std::string::npos ? "" : doc.substr(i, semi - i + 1);
      if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" && entity != "&apos;")
        return "bad entity at " + std::to_string(i);
      i = semi + 1;
      continue;
    }
    if (doc[i] != '<') { ++i; continue; }
    const auto end = doc.find('>', i);
    if (end == std::string::npos) return "unclosed tag at " + std::to_string(i);
    const std::string tag = doc.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.front() == '?') continue;
    if (std::count(tag.begin(), tag.end(), '"') % 2 != 0) return "unbalanced quotes in <" + tag + ">";
    if (tag.front() == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return "mismatched </" + tag.substr(1) + ">";
      open.pop_back();
      continue;
    }
    const std::string name = tag.substr(0, tag.find_first_of(" \n/"));
    if (tag.back() != '/') open.push_back(name);
  }
  return open.empty() ? "" : "unclosed <" + open.back() + ">";
}

}  // namespace

TEST_CASE("the ASCII diagram of a two-stage 1F1B pipeline, column by column") {
  // p = 2, m = 2, T_F = 1 ms, T_B = 2 ms. Stage 0: F0 [0,1] F1 [1,2], then B0 [4,6] after stage 1's
  // B0 [2,4], B1 [7,9] after stage 1's B1 [5,7]; stage 1: F0 [1,2] B0 [2,4] F1 [4,5] B1 [5,7].
  // Width 40 leaves 40 − 9 ("stage 0 |") − 1 = 30 columns for 9 ms: 3 columns per ms.
  // Axis: ticks at least 8 columns (2.67 ms) apart, rounded up to 5 ms = column 15.
  const auto l = report::run_bubble_lesson({K::one_f_one_b, 2, 2, 1, 0});
  const auto text = report::render_pipeline_ascii(l.view, 40);
  CHECK(text ==
        "ideal 1f1b pipeline: T_F = 1 ms, T_B = 2 ms, sends free (R = 0)\n"
        "1f1b, p = 2, m = 2: measured bubble 33.3 %, textbook (p-1)/(m+p-1) = 1/3 = 33.3 %\n"
        "stage 0 |F0 F1 ......B0    ...B1\n"
        "stage 1 |...F0 B0    F1 B1    ......\n"
        "         +--------------+------------\n"
        "      ms 0              5\n"
        "F3 = forward of microbatch 3, B = backward, W = weight gradient, O = optimizer, ~ = communication, . = idle\n"
        "1 column = 333.3 us\n");
}

TEST_CASE("ASCII diagrams fit 120 columns, whatever the pipeline") {
  const std::vector<report::BubbleLessonInput> inputs{
      {K::one_f_one_b, 4, 8, 1, 0}, {K::interleaved, 4, 8, 2, 0}, {K::zb_h1, 8, 32, 1, 0.2}, {K::gpipe, 16, 64, 1, 0}};
  for (const auto& in : inputs) {
    const auto l = report::run_bubble_lesson(in);
    const auto lines = lines_of(report::format_bubble_lesson(l));
    CHECK(lines.size() >= static_cast<std::size_t>(in.stages) + 5);
    for (const auto& line : lines) CHECK(report::display_width(line) <= 120);
  }
}

TEST_CASE("where boxes cannot hold their numbers, an mb row says where each k-th microbatch's forward starts") {
  // 1F1B, p = 2, m = 32 (T_F = 1 ms, 99 ms in all) in 110 columns: a forward box is one column
  // wide, so its number does not fit. Under each stage an "mb" row puts microbatch numbers
  // (every k-th, k a power of two) at the column where that forward starts: the stage row has an
  // F there. (Narrower, a forward can be less than a column and hide under the next box.)
  const auto l = report::run_bubble_lesson({K::one_f_one_b, 2, 32, 1, 0});
  const auto lines = lines_of(report::render_pipeline_ascii(l.view, 110));
  std::size_t rulers = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].rfind("mb      |", 0) != 0) continue;
    ++rulers;
    const std::string& stage = lines[i - 1];
    REQUIRE(stage.rfind("stage ", 0) == 0);
    std::vector<int> numbers;
    for (std::size_t c = 9; c < lines[i].size(); ++c) {
      if (lines[i][c] == ' ' || (c > 9 && lines[i][c - 1] != ' ')) continue;
      CAPTURE(c);
      REQUIRE(c < stage.size());
      CHECK(stage[c] == 'F');
      numbers.push_back(std::stoi(lines[i].substr(c)));
    }
    REQUIRE(numbers.size() >= 2);
    const int k = numbers[1] - numbers[0];
    CHECK(numbers.front() == 0);
    CHECK((k & (k - 1)) == 0);  // a power of two
    CHECK(report::display_width(lines[i]) <= 110);
  }
  CHECK(rulers == 2);
  CHECK(lines.back().find("1 column") == 0);
  // In 60 columns the stage and mb rows still fit the width.
  for (const auto& line : lines_of(report::render_pipeline_ascii(l.view, 60)))
    if (line.rfind("stage ", 0) == 0 || line.rfind("mb      |", 0) == 0) CHECK(report::display_width(line) <= 60);
  // Wide enough for the numbers (m = 2 above): no mb row.
  const auto roomy = report::render_pipeline_ascii(report::run_bubble_lesson({K::one_f_one_b, 2, 2, 1, 0}).view, 40);
  CHECK(roomy.find("mb      |") == std::string::npos);
}

TEST_CASE("communication shows as '~' where a stage is not computing") {
  // p = 2, m = 1, R = 1: stage 0 F0 [0,1], send [1,2], stage 1 F0 [2,3] B0 [3,5], send [5,6],
  // stage 0 B0 [6,8]. The send intervals on each rank's pp stream are drawn where it idles.
  const auto l = report::run_bubble_lesson({K::one_f_one_b, 2, 1, 1, 1.0});
  const auto lines = lines_of(report::render_pipeline_ascii(l.view, 40));
  REQUIRE(lines.size() > 3);
  // 30 columns / 8 ms = 3 columns per ms.
  CHECK(lines[2] == "stage 0 |F0 ~~~............B0");
  CHECK(lines[3] == "stage 1 |......F0 B0    ~~~......");  // idle while stage 0 runs B0 [6,8]
}

TEST_CASE("the SVG diagram is well-formed and carries boxes, axis, legend and caption") {
  auto l = report::run_bubble_lesson({K::zb_h1, 4, 8, 1, 0.25});
  l.view.title = "zb-h1 <ideal> & \"friends\"";  // must be escaped
  const std::string svg = report::render_pipeline_svg(l.view);
  CHECK(xml_problem(svg).empty());
  CHECK(xml_problem("<a><b></a>") == "mismatched </a>");  // the checker itself catches errors
  CHECK(xml_problem("<a>x & y</a>") == "bad entity at 5");  // offset of '&' 
  CHECK(svg.find("zb-h1 &lt;ideal&gt; &amp; &quot;friends&quot;") != std::string::npos);
  CHECK(svg.find("measured bubble") != std::string::npos);
  CHECK(svg.find("(p-1)(T_F+T_B-T_W)/step") != std::string::npos);
  CHECK(svg.find("time (ms)") != std::string::npos);
  for (const char* legend : {"F forward", "B backward", "W weight gradient", "communication", "idle"})
    CHECK(svg.find(legend) != std::string::npos);
  CHECK(svg.find(">optimizer<") == std::string::npos);  // the legend lists only what is drawn
  // One tooltip per box: 4 stages × 8 microbatches × (F, B, W).
  std::size_t titles = 0;
  for (auto at = svg.find("<title>"); at != std::string::npos; at = svg.find("<title>", at + 1)) ++titles;
  CHECK(titles == 4 * 8 * 3);
  // Distinct fills for F, B, W and communication.
  for (const char* fill : {"#4e79a7", "#f28e2b", "#59a14f", "#e15759"}) CHECK(svg.find(fill) != std::string::npos);
}

TEST_CASE("a real run's view takes the tp=0, dp=0 rank of each stage and merges a pass's layers") {
  report::testing::PipelineShape shape;
  shape.tp = 2, shape.pp = 2, shape.dp = 2, shape.microbatches = 3;
  const auto r = report::testing::synthetic_pipeline(shape);
  const auto v = report::build_pipeline_view(r);
  REQUIRE(v.rows.size() == 2);
  CHECK(v.rows[0].rank == 0);
  CHECK(v.rows[1].rank == 4);  // rank = tp + 2·(dp + 2·pp)
  // Per stage: 3 F, 3 B and the optimizer.
  CHECK(v.rows[0].boxes.size() == 7);
  CHECK(v.rows[0].boxes.back().kind == report::BoxKind::optimizer);
  CHECK(v.formula == "(p-1)/(m+p-1) = 1/4");
}
