// What `stepsim bubble` prints: the advice line, the text form and the JSON form of a lesson.
#include <cmath>

#include "sim/report/bubble_lesson.hpp"
#include "sim/plan/schedule.hpp"
#include "sim/report/format.hpp"
#include "sim/report/json_writer.hpp"
#include "sim/report/pipeline_ascii.hpp"

namespace stepsim::report {

namespace {

// The lesson's textbook bubble: T_F = 1, T_B = 2 (B = W = 1 for zb-h1).
double ideal_bubble(plan::ScheduleKind kind, int p, int m, int v) {
  const bool split = kind == plan::ScheduleKind::zb_h1;
  return plan::textbook_bubble(kind, p, m, v, 1, split ? 1 : 2, split ? 1 : 0);
}

}  // namespace

std::string bubble_advice(const BubbleLessonInput& in, double measured, double formula) {
  using K = plan::ScheduleKind;
  const int p = in.stages, m = in.microbatches;
  if (p == 1) return "One stage has no pipeline bubble; pipeline stages are what create it.";
  const int v = in.schedule == K::interleaved ? in.chunks : 1;
  std::vector<std::string> options;
  options.push_back("4x the microbatches (m = " + std::to_string(4 * m) + "): " +
                    percent(ideal_bubble(in.schedule, p, 4 * m, v)));
  if (in.schedule != K::zb_h1) {
    const int v2 = in.schedule == K::interleaved ? 2 * v : 2;
    options.push_back("interleaving v = " + std::to_string(v2) + ": " + percent(ideal_bubble(K::interleaved, p, m, v2)) +
                      (m % p != 0 ? " (needs m a multiple of p)" : ""));
    options.push_back("zero-bubble zb-h1: " + percent(ideal_bubble(K::zb_h1, p, m, 1)));
  }
  std::string line = "Shrink it with ";
  for (std::size_t i = 0; i < options.size(); ++i) line += (i == 0 ? "" : ", ") + options[i];
  line += ".";
  if (in.comm_ratio > 0 && measured > formula)
    line += "\nThe sends (R = " + fixed(in.comm_ratio, 2) + ") add " + fixed(100 * (measured - formula), 1) +
            " points over the formula; overlap them with compute or use faster links.";
  return line;
}

std::string format_bubble_lesson(const BubbleLesson& lesson, int width) {
  return render_pipeline_ascii(lesson.view, width) + lesson.advice + "\n";
}

void write_bubble_json(const BubbleLesson& lesson, std::ostream& out) {
  JsonWriter w(out);
  w.begin_object();
  w.key("measured_bubble").value(lesson.view.measured_bubble).key("formula_bubble").value(lesson.view.formula_bubble);
  w.key("schedule").value(lesson.result.schedule).key("pp").value(lesson.input.stages);
  w.key("microbatches").value(lesson.input.microbatches).key("v").value(lesson.result.v);
  w.key("comm_ratio").value(lesson.input.comm_ratio).key("step_time_ms").value(lesson.result.step_time_s * 1e3);
  w.end_object();
  out << "\n";
}

}  // namespace stepsim::report
