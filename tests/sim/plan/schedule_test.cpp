#include <doctest/doctest.h>

#include "sim/plan/schedule.hpp"

using namespace stepsim::plan;

namespace {
int count(const std::vector<Pass>& passes, PassKind kind) {
  int n = 0;
  for (const auto& p : passes) n += p.kind == kind;
  return n;
}
}  // namespace

TEST_CASE("every schedule runs each pass of each microbatch and chunk exactly once per stage") {
  for (auto kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved, ScheduleKind::zb_h1}) {
    const int v = kind == ScheduleKind::interleaved ? 3 : 1;
    auto s = make_schedule(kind, 4, 8, v);
    for (const auto& stage : s.passes) {
      CHECK(count(stage, PassKind::forward) == 8 * v);
      CHECK(count(stage, PassKind::backward) == 8 * v);
      CHECK(count(stage, PassKind::weight) == (kind == ScheduleKind::zb_h1 ? 8 : 0));
    }
  }
}

TEST_CASE("1f1b warmup is p-s-1 forwards (Megatron-LM)") {
  auto s = make_schedule(ScheduleKind::one_f_one_b, 4, 8, 1);
  // Stage 0: F0 F1 F2 | F3 B0 | F4 B1 ...; last stage: F0 B0 F1 B1 ...
  CHECK(s.passes[0][3] == Pass{PassKind::forward, 3, 0});
  CHECK(s.passes[0][4] == Pass{PassKind::backward, 0, 0});
  CHECK(s.passes[3][1] == Pass{PassKind::backward, 0, 0});
}

TEST_CASE("textbook bubbles with uniform stages and free communication") {
  // Bubble fraction = (makespan − ideal) / makespan, ideal = m·v·(t_f + t_b) per stage.
  // GPipe and 1F1B: (p−1)/(m+p−1) (Narayanan et al. 2021 §2.2); interleaved: (p−1)/(v·m+p−1).
  for (int p : {2, 4, 8}) {
    for (int m : {p, 2 * p, 3 * p}) {
      for (auto kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b}) {
        auto mk = ideal_makespan(make_schedule(kind, p, m, 1), 1, 2, 0);
        CHECK(mk == (m + p - 1) * 3);
      }
      for (int v : {2, 3}) {
        // Per chunk F = 1, B = 2: makespan = (v·m + p − 1)·3.
        auto mk = ideal_makespan(make_schedule(ScheduleKind::interleaved, p, m, v), 1, 2, 0);
        CHECK(mk == (v * m + p - 1) * 3);
      }
    }
  }
}

TEST_CASE("zb-h1 bubble is (p-1)(T_F + T_B - T_W) (Qi et al. 2024, Table 2)") {
  struct Case { int p, m; std::int64_t f, b, w; };
  for (auto c : {Case{4, 8, 1, 1, 1}, Case{4, 8, 3, 2, 1}, Case{6, 12, 2, 3, 2}, Case{8, 8, 5, 5, 4}}) {
    auto mk = ideal_makespan(make_schedule(ScheduleKind::zb_h1, c.p, c.m, 1), c.f, c.b, c.w);
    CHECK(mk - c.m * (c.f + c.b + c.w) == (c.p - 1) * (c.f + c.b - c.w));
  }
}

TEST_CASE("the pipeline's data dependencies: one hop per activation and gradient, F before B on each stage") {
  // p stages, v chunks, m microbatches: m(pv − 1) activation hops, m(pv − 1) gradient hops, and
  // m·pv same-stage F→B edges (plus m·p B→W edges when W is split). Each hop changes stage.
  for (ScheduleKind kind : {ScheduleKind::one_f_one_b, ScheduleKind::interleaved, ScheduleKind::zb_h1}) {
    const int p = 4, m = 8, v = kind == ScheduleKind::interleaved ? 2 : 1;
    const auto sch = make_schedule(kind, p, m, v);
    const auto deps = pass_dependencies(sch);
    int hops = 0, local = 0;
    for (const auto& d : deps) {
      CHECK(d.hop == (d.from.stage != d.to.stage));
      (d.hop ? hops : local) += 1;
      const Pass& from = sch.passes[d.from.stage][d.from.index];
      const Pass& to = sch.passes[d.to.stage][d.to.index];
      CHECK(from.microbatch == to.microbatch);
      if (d.hop) CHECK(from.kind == to.kind);
    }
    CHECK(hops == 2 * m * (p * v - 1));
    CHECK(local == m * p * v + (kind == ScheduleKind::zb_h1 ? m * p : 0));
    // Ordered by sender: stage, then issue order.
    for (std::size_t i = 1; i < deps.size(); ++i) CHECK(deps[i - 1].from <= deps[i].from);
  }
}

TEST_CASE("the textbook bubble is the idle time of ideal_makespan") {
  // With free communication the simulated ideal step is m·(t_f+t_b+t_w) of work plus the
  // textbook idle, for every schedule (p = 4, m = 8; interleaved v = 2; zb-h1 with B and W split).
  const int p = 4, m = 8;
  for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved, ScheduleKind::zb_h1}) {
    const int v = kind == ScheduleKind::interleaved ? 2 : 1;
    const bool split = kind == ScheduleKind::zb_h1;
    const std::int64_t f = 6, b = split ? 6 : 12, w = split ? 6 : 0;  // per chunk: divisible by v
    const auto sch = make_schedule(kind, p, m, v);
    const double step = static_cast<double>(ideal_makespan(sch, f / v, b / v, w / v));
    CHECK(step == doctest::Approx(m * (f + b + w) + textbook_idle(kind, p, v, f, b, w)));
    CHECK(textbook_bubble(kind, p, m, v, f, b, w) == doctest::Approx(textbook_idle(kind, p, v, f, b, w) / step));
  }
  CHECK(textbook_bubble(ScheduleKind::one_f_one_b, 4, 8, 1, 1, 2, 0) == doctest::Approx(3.0 / 11));
}
