#include "sim/report/pipeline_view.hpp"

#include <algorithm>
#include <map>

#include "sim/plan/schedule.hpp"
#include "sim/report/format.hpp"

namespace stepsim::report {

namespace {

using C = plan::TaskCategory;

bool is_comm(C c) { return plan::is_communication(c); }

bool box_kind_of(C c, BoxKind& kind) {
  switch (c) {
    case C::forward: kind = BoxKind::forward; return true;
    case C::backward_input:
    case C::recompute: kind = BoxKind::backward; return true;
    case C::backward_weight: kind = BoxKind::weight; return true;
    case C::optimizer: kind = BoxKind::optimizer; return true;
    default: return false;
  }
}

PipelineRow build_row(const plan::StepResult& r, const plan::RankInfo& info) {
  PipelineRow row;
  row.stage = info.pp;
  row.rank = info.rank;
  std::vector<const plan::TaskRecord*> mine;
  for (const auto& t : r.tasks)
    if (t.rank == info.rank) mine.push_back(&t);
  std::stable_sort(mine.begin(), mine.end(), [](auto* a, auto* b) { return a->start_ps < b->start_ps; });
  for (const auto* t : mine) {
    if (is_comm(t->category)) {
      if (t->end_ps > t->start_ps) row.comm.push_back({t->start_ps, t->end_ps});
      continue;
    }
    BoxKind kind{};
    if (!box_kind_of(t->category, kind)) continue;
    auto& boxes = row.boxes;
    if (!boxes.empty() && boxes.back().kind == kind && boxes.back().microbatch == t->microbatch &&
        boxes.back().chunk == t->chunk) {
      boxes.back().end_ps = std::max(boxes.back().end_ps, t->end_ps);
    } else {
      boxes.push_back({kind, t->microbatch, t->chunk, t->start_ps, t->end_ps});
    }
  }
  return row;
}

double mean_length(const PipelineView& v, BoxKind kind) {
  double sum = 0;
  int n = 0;
  for (const auto& row : v.rows)
    for (const auto& b : row.boxes)
      if (b.kind == kind) sum += static_cast<double>(b.end_ps - b.start_ps), ++n;
  return n > 0 ? sum / n : 0;
}

}  // namespace

void set_textbook_bubble(PipelineView& v, double t_f, double t_b, double t_w, double step_ps) {
  const int p = v.stages, m = v.microbatches, vv = v.chunks;
  if (p <= 1) {
    v.formula = "no pipeline (p = 1)";
    v.formula_bubble = 0;
    return;
  }
  const auto kind = plan::schedule_named(v.schedule).value_or(plan::ScheduleKind::one_f_one_b);
  if (kind == plan::ScheduleKind::zb_h1) {
    // Over the simulated step: ZB-H1's idle does not scale with the microbatches' work alone.
    v.formula_bubble = step_ps > 0 ? plan::textbook_idle(kind, p, 1, t_f, t_b, t_w) / step_ps : 0;
    v.formula = "(p-1)(T_F+T_B-T_W)/step = " + std::to_string(p - 1) + " x " + duration((t_f + t_b - t_w) * 1e-12) +
                " / " + duration(step_ps * 1e-12);
    return;
  }
  // The ratio is the same whatever the pass times: (p−1)/(v·m+p−1), v = 1 unless interleaved.
  const int chunks = kind == plan::ScheduleKind::interleaved ? vv : 1;
  v.formula_bubble = plan::textbook_bubble(kind, p, m, chunks, 1, 2, 0);
  v.formula = (chunks > 1 ? "(p-1)/(v*m+p-1) = " : "(p-1)/(m+p-1) = ") + std::to_string(p - 1) + "/" +
              std::to_string(chunks * m + p - 1);
}

PipelineView build_pipeline_view(const plan::StepResult& r) {
  PipelineView v;
  // The whole plan and its step in the title, so a diagram read alone says what it shows.
  v.title = r.name + ": tp" + std::to_string(r.tp) + " pp" + std::to_string(r.pp) + " dp" + std::to_string(r.dp) +
            (r.zero_stage > 0 ? " ZeRO-" + std::to_string(r.zero_stage) : "") + ", " + r.schedule + " m=" +
            std::to_string(r.microbatches) + ", step " + milliseconds(r.step_time_s);
  v.schedule = r.schedule;
  v.stages = r.pp, v.microbatches = r.microbatches, v.chunks = r.v;
  v.measured_bubble = r.bubble_fraction;
  std::map<int, const plan::RankInfo*> stage_rank;
  for (const auto& info : r.ranks)
    if (info.tp == 0 && info.dp == 0 && !stage_rank.count(info.pp)) stage_rank[info.pp] = &info;
  std::int64_t first = -1, last = 0;
  for (const auto& [stage, info] : stage_rank) {
    v.rows.push_back(build_row(r, *info));
    for (const auto& b : v.rows.back().boxes) {
      if (b.kind == BoxKind::optimizer) continue;
      first = first < 0 ? b.start_ps : std::min(first, b.start_ps);
      last = std::max(last, b.end_ps);
    }
  }
  for (const auto& t : r.tasks) v.end_ps = std::max(v.end_ps, t.end_ps);
  set_textbook_bubble(v, mean_length(v, BoxKind::forward), mean_length(v, BoxKind::backward),
                      mean_length(v, BoxKind::weight), static_cast<double>(last - std::max<std::int64_t>(first, 0)));
  return v;
}

std::string bubble_caption(const PipelineView& v) {
  std::string s = (v.schedule.empty() ? "pipeline" : v.schedule);
  if (v.chunks > 1) s += " (v = " + std::to_string(v.chunks) + ")";
  s += ", p = " + std::to_string(v.stages) + ", m = " + std::to_string(v.microbatches) + ": measured bubble " +
       percent(v.measured_bubble);
  if (v.stages <= 1) return s + " (one stage: no pipeline bubble)";
  return s + ", textbook " + v.formula + " = " + percent(v.formula_bubble);
}

}  // namespace stepsim::report
