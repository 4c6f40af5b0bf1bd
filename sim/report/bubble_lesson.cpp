#include "sim/report/bubble_lesson.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

#include "sim/core/engine.hpp"
#include "sim/report/format.hpp"
#include "sim/report/json_writer.hpp"
#include "sim/report/pipeline_ascii.hpp"

namespace stepsim::report {

namespace {

constexpr std::int64_t kUnitPs = 1'000'000'000;  // T_F = 1 ms

struct Builder {
  core::Engine engine;
  std::vector<core::TaskId> ids;           // parallel to records
  std::vector<plan::TaskRecord> records;
  std::vector<std::vector<std::uint32_t>> pass_index;  // [stage][pass index] -> record

  std::map<std::pair<int, int>, std::uint32_t> last_on_stream;  // (rank, stream) -> record

  std::uint32_t add(core::TaskId id, plan::TaskRecord record) {
    const auto me = static_cast<std::uint32_t>(records.size());
    if (auto [it, first] = last_on_stream.try_emplace({record.rank, record.stream}, me); !first) {
      record.stream_pred = it->second;
      it->second = me;
    }
    ids.push_back(id);
    records.push_back(std::move(record));
    return me;
  }
  void depend(std::uint32_t before, std::uint32_t after) {
    engine.add_dependency(ids[before], ids[after]);
    records[after].deps.push_back(before);
  }
};

plan::TaskCategory category_of(plan::PassKind k) {
  if (k == plan::PassKind::forward) return plan::TaskCategory::forward;
  if (k == plan::PassKind::weight) return plan::TaskCategory::backward_weight;
  return plan::TaskCategory::backward_input;  // all of backward unless the schedule splits off W
}

// A chunk holds 1/v of the stage's layers, so its passes take 1/v of the stage's time.
std::int64_t length_of(plan::PassKind k, bool split, int chunks) {
  const std::int64_t units = (k == plan::PassKind::backward && !split) ? 2 : 1;
  return units * kUnitPs / chunks;
}

// Compute tasks in schedule order on each stage's compute stream.
void add_passes(Builder& b, const plan::PipelineSchedule& sch, const std::vector<core::StreamId>& compute) {
  const int p = sch.stages;
  b.pass_index.resize(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s)
    for (const auto& pass : sch.passes[static_cast<std::size_t>(s)]) {
      plan::TaskRecord r;
      r.rank = s, r.stream = 0, r.microbatch = pass.microbatch, r.chunk = pass.chunk;
      r.category = category_of(pass.kind);
      r.op = pass.kind == plan::PassKind::forward ? "F" : pass.kind == plan::PassKind::backward ? "B" : "W";
      const std::int64_t len = length_of(pass.kind, sch.splits_weight_gradient, sch.chunks);
      b.pass_index[static_cast<std::size_t>(s)].push_back(
          b.add(b.engine.add_compute(compute[static_cast<std::size_t>(s)], core::Duration{len}), r));
    }
}

// The pipeline's data dependencies (plan::pass_dependencies); a hop between stages goes through
// a send of R·T_F on the sender's pp stream (issued in the sender's order).
void add_dependencies(Builder& b, const plan::PipelineSchedule& sch, const std::vector<core::StreamId>& pp,
                      std::int64_t send_ps) {
  auto record_of = [&](const plan::PassRef& ref) {
    return b.pass_index[static_cast<std::size_t>(ref.stage)][ref.index];
  };
  for (const auto& dep : plan::pass_dependencies(sch)) {
    const auto from = record_of(dep.from), to = record_of(dep.to);
    if (!dep.hop || send_ps <= 0) {
      b.depend(from, to);
      continue;
    }
    plan::TaskRecord r;
    r.rank = b.records[from].rank, r.stream = 1, r.category = plan::TaskCategory::pp_comm, r.op = "send";
    r.microbatch = b.records[from].microbatch, r.chunk = b.records[from].chunk, r.peer_rank = b.records[to].rank;
    const auto send = b.add(b.engine.add_delay(core::Duration{send_ps}, pp[static_cast<std::size_t>(r.rank)]), r);
    b.depend(from, send);
    b.depend(send, to);
  }
}

void check_input(const BubbleLessonInput& in) {
  if (in.stages < 1) throw std::invalid_argument("--pp: expected at least 1 stage, found " + std::to_string(in.stages));
  if (in.microbatches < 1)
    throw std::invalid_argument("--microbatches: expected at least 1, found " + std::to_string(in.microbatches));
  if (in.chunks < 1) throw std::invalid_argument("--v: expected at least 1 chunk, found " + std::to_string(in.chunks));
  if (!std::isfinite(in.comm_ratio) || in.comm_ratio < 0)
    throw std::invalid_argument("--comm-ratio: expected a number >= 0, found " + fixed(in.comm_ratio, 3));
  if (in.schedule == plan::ScheduleKind::interleaved && in.microbatches % in.stages != 0)
    throw std::invalid_argument("--microbatches: interleaved needs a multiple of --pp (" + std::to_string(in.stages) +
                                "), found " + std::to_string(in.microbatches));
}

plan::StepResult to_result(const BubbleLessonInput& in, Builder& b, const core::RunStats& stats) {
  plan::StepResult r;
  r.name = std::string("ideal ") + plan::to_string(in.schedule) + " pipeline";
  r.schedule = plan::to_string(in.schedule);
  r.gpus = r.pp = in.stages, r.microbatches = in.microbatches;
  r.v = in.schedule == plan::ScheduleKind::interleaved ? in.chunks : 1;
  r.step_time_s = stats.makespan.seconds();
  r.events = stats.events;
  double busy_ps = 0;
  for (std::size_t i = 0; i < b.records.size(); ++i) {
    b.records[i].start_ps = b.engine.start_of(b.ids[i]).ps;
    b.records[i].end_ps = b.engine.finish_of(b.ids[i]).ps;
    if (b.records[i].stream == 0) busy_ps += static_cast<double>(b.records[i].end_ps - b.records[i].start_ps);
  }
  r.bubble_fraction = 1.0 - busy_ps / (static_cast<double>(in.stages) * static_cast<double>(stats.makespan.ps));
  for (int s = 0; s < in.stages; ++s) {
    plan::RankInfo info;
    info.rank = info.gpu = info.pp = s;
    info.streams = {"compute", "pp"};
    r.ranks.push_back(info);
  }
  r.tasks = std::move(b.records);
  return r;
}

}  // namespace

BubbleLesson run_bubble_lesson(const BubbleLessonInput& in) {
  check_input(in);
  const auto sch = plan::make_schedule(in.schedule, in.stages, in.microbatches, in.chunks);
  Builder b;
  std::vector<core::StreamId> compute, pp;
  for (int s = 0; s < in.stages; ++s) {
    const auto device = b.engine.add_device(0.0);
    compute.push_back(b.engine.add_stream(device, core::StreamKind::compute));
    pp.push_back(b.engine.add_stream(device, core::StreamKind::communication));
  }
  add_passes(b, sch, compute);
  add_dependencies(b, sch, pp, std::llround(in.comm_ratio * static_cast<double>(kUnitPs)));
  const auto stats = b.engine.run();
  BubbleLesson lesson;
  lesson.input = in;
  lesson.result = to_result(in, b, stats);
  lesson.view = build_pipeline_view(lesson.result);
  lesson.view.time_quantum_ps = kUnitPs / sch.chunks;
  lesson.view.title = lesson.result.name + ": T_F = 1 ms, " +
                      (sch.splits_weight_gradient ? "T_B = 1 ms, T_W = 1 ms" : "T_B = 2 ms") +
                      (sch.chunks > 1 ? " per stage (1/" + std::to_string(sch.chunks) + " per chunk)" : "") +
                      (in.comm_ratio > 0 ? ", send R*T_F = " + fixed(in.comm_ratio, 2) + " ms" : ", sends free (R = 0)");
  lesson.advice = bubble_advice(in, lesson.view.measured_bubble, lesson.view.formula_bubble);
  return lesson;
}

}  // namespace stepsim::report
