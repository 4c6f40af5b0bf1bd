// `stepsim bubble`: the pipeline bubble lesson. An ideal pipeline of p identical stages (T_F = 1 ms,
// T_B = 2 ms, or B = W = 1 ms when zb-h1 splits the weight gradient; each of an interleaved
// stage's v chunks takes 1/v of that; a pipeline send takes comm_ratio·T_F) is built from plan's schedule (pure data) as tasks on the core engine, simulated,
// and returned as a StepResult timeline, so it is drawn by the same ASCII/SVG code as real runs.
// The measured bubble is the share of p × step the stages' compute streams are idle.
#pragma once

#include <ostream>
#include <string>

#include "sim/plan/schedule.hpp"
#include "sim/plan/step_result.hpp"
#include "sim/report/pipeline_view.hpp"

namespace stepsim::report {

struct BubbleLessonInput {
  plan::ScheduleKind schedule = plan::ScheduleKind::one_f_one_b;
  int stages = 4;         ///< p
  int microbatches = 8;   ///< m
  int chunks = 1;         ///< v (interleaved only)
  double comm_ratio = 0;  ///< R: one send takes R·T_F
};

struct BubbleLesson {
  BubbleLessonInput input;
  plan::StepResult result;  ///< the simulated timeline (ranks = stages, streams "compute" and "pp")
  PipelineView view;        ///< measured and textbook bubble
  std::string advice;       ///< one line: what would shrink the bubble, with numbers
};

/// Throws std::invalid_argument with a message for the user when p, m or v < 1, comm_ratio < 0
/// or not finite, or interleaved with m not a multiple of p.
BubbleLesson run_bubble_lesson(const BubbleLessonInput& input);

/// A line on what would shrink the bubble (more microbatches, interleaving, zero-bubble), with
/// the textbook numbers each gives for this p and m; a second line on what the sends added when R > 0.
std::string bubble_advice(const BubbleLessonInput& input, double measured, double formula);

/// The ASCII diagram (`width` columns), the bubble line and the advice.
std::string format_bubble_lesson(const BubbleLesson& lesson, int width = 120);

/// {"measured_bubble", "formula_bubble", "schedule", "pp", "microbatches", "v", "comm_ratio",
/// "step_time_ms"} on one line.
void write_bubble_json(const BubbleLesson& lesson, std::ostream& out);

}  // namespace stepsim::report
