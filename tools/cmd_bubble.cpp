// `stepsim bubble --pp P --microbatches M`: the pipeline bubble lesson. Simulates an ideal pipeline
// of uniform stages under a schedule, draws it, and puts the measured bubble beside the textbook
// formula (sim/report/bubble_lesson.hpp).
#include <fstream>
#include <iostream>

#include "sim/report/bubble_lesson.hpp"
#include "sim/report/pipeline_svg.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"

namespace stepsim::cli {
namespace {

plan::ScheduleKind parse_schedule(const std::string& text) {
  for (const auto kind : {plan::ScheduleKind::gpipe, plan::ScheduleKind::one_f_one_b, plan::ScheduleKind::interleaved,
                          plan::ScheduleKind::zb_h1})
    if (text == plan::to_string(kind)) return kind;
  throw UsageError("stepsim bubble: --schedule: expected gpipe, 1f1b, interleaved or zb-h1, found '" + text + "'");
}

}  // namespace

int run_bubble(const Args& args) {
  po::options_description options("Options");
  options.add_options()("pp", po::value<int>()->required(), "pipeline stages P")(
      "microbatches", po::value<int>()->required(), "microbatches per step M")(
      "schedule", po::value<std::string>()->default_value("1f1b"), "gpipe, 1f1b, interleaved or zb-h1")(
      "v", po::value<int>(), "model chunks per stage (interleaved; default 2)")(
      "comm-ratio", po::value<double>()->default_value(0.0), "a pipeline send takes R times a forward pass")(
      "svg", po::value<std::string>(), "also write the diagram as SVG to FILE")(
      "json", "print {measured_bubble, formula_bubble, schedule, pp, microbatches, ...} instead of the diagram");
  const auto vm = parse_command_line(
      "bubble", "--pp P --microbatches M [--schedule S] [--v V] [--comm-ratio R] [--svg FILE] [--json]",
      "The pipeline bubble, simulated: p identical stages (T_F = 1 ms, T_B = 2 ms, or B = W = 1 ms for\n"
      "zb-h1), sends of R*T_F, drawn as text, with the measured bubble beside the textbook formula.",
      options, {}, args);
  if (!vm) return 0;
  report::BubbleLessonInput in;
  in.schedule = parse_schedule((*vm)["schedule"].as<std::string>());
  in.stages = (*vm)["pp"].as<int>();
  in.microbatches = (*vm)["microbatches"].as<int>();
  in.chunks = vm->count("v") ? (*vm)["v"].as<int>() : (in.schedule == plan::ScheduleKind::interleaved ? 2 : 1);
  in.comm_ratio = (*vm)["comm-ratio"].as<double>();
  report::BubbleLesson lesson;
  try {
    lesson = report::run_bubble_lesson(in);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("stepsim bubble: ") + e.what());
  }
  if (vm->count("svg")) {
    const std::string path = (*vm)["svg"].as<std::string>();
    std::ofstream out(path);
    if (!(out << report::render_pipeline_svg(lesson.view)))
      throw UsageError("stepsim bubble: --svg: cannot write '" + path + "'");
  }
  if (vm->count("json")) report::write_bubble_json(lesson, std::cout);
  else std::cout << report::format_bubble_lesson(lesson);
  return 0;
}

}  // namespace stepsim::cli
