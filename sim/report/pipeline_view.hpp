// The pipeline diagram's data, drawn by pipeline_ascii.cpp and pipeline_svg.cpp: one row per
// pipeline stage (the rank with tp = 0 and dp = 0 of that stage), its compute as F / B / W boxes per
// microbatch, its communication intervals, and the bubble measured beside the textbook formula.
//
// A box is a run of consecutive compute tasks on the stage's rank with the same (pass, microbatch,
// chunk); recompute is drawn as part of B. Optimizer time is its own box. Times are picoseconds
// from the step start.
//
// Textbook bubbles (fraction of the step a stage idles, zero communication, uniform stages):
// - gpipe, 1f1b: (p−1)/(m+p−1) (Huang et al. 2019; Narayanan et al. 2021, eq. 1 as a fraction of
//   the whole step);
// - interleaved: (p−1)/(v·m+p−1) (Narayanan et al. 2021, section 2.2: the bubble shrinks by v);
// - zb-h1: (p−1)(T_F+T_B−T_W)/step (Qi et al. 2024, ZB-H1), with T_F, T_B, T_W the mean box lengths
//   and step the span of the compute boxes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/plan/step_result.hpp"

namespace stepsim::report {

enum class BoxKind { forward, backward, weight, optimizer };

struct PipelineBox {
  BoxKind kind = BoxKind::forward;
  int microbatch = -1;
  int chunk = 0;
  std::int64_t start_ps = 0, end_ps = 0;
};

struct Interval {
  std::int64_t start_ps = 0, end_ps = 0;
};

struct PipelineRow {
  int stage = 0;
  int rank = 0;
  std::vector<PipelineBox> boxes;   ///< in time order
  std::vector<Interval> comm;       ///< communication tasks on this rank (any stream), in time order
};

struct PipelineView {
  std::string title;                ///< strategy name
  std::string schedule;             ///< "1f1b", "interleaved", …
  int stages = 1, microbatches = 1, chunks = 1;
  std::vector<PipelineRow> rows;    ///< stage 0 first
  std::int64_t end_ps = 0;          ///< end of the last task drawn
  double measured_bubble = 0;       ///< StepResult::bubble_fraction
  double formula_bubble = 0;
  std::string formula;              ///< "(p-1)/(m+p-1) = 3/11"
  std::int64_t time_quantum_ps = 0; ///< if > 0, ASCII columns are chosen as a whole fraction of it
};

/// Requires: result has ranks and tasks (the timeline); otherwise the view has no rows.
PipelineView build_pipeline_view(const plan::StepResult& result);

/// The textbook bubble and its formula text, for the schedule named in `view` (see above).
/// t_f, t_b, t_w, step_ps are used by zb-h1 only.
void set_textbook_bubble(PipelineView& view, double t_f, double t_b, double t_w, double step_ps);

/// "1f1b, p = 4, m = 8: measured bubble 27.3 %, textbook (p-1)/(m+p-1) = 3/11 = 27.3 %"
std::string bubble_caption(const PipelineView& view);

}  // namespace stepsim::report
