#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>

#include "sim/plan/simulate.hpp"
#include "sim/sweep/sweep_table.hpp"
#include "sweep_fixture.hpp"

using namespace stepsim;
using sweep::RunOptions;
using sweep::SweepOutcome;

namespace {

SweepOutcome run(const RunOptions& options) {
  static const auto sc = sweep_test::small_scenario();
  static const auto plans = sweep::enumerate_plans(sc, {});
  return sweep::run_sweep(sc, plans, options, sweep_test::fake_simulate);
}

}  // namespace

TEST_CASE("counts of the fake sweep, derived by hand") {
  // 378 candidates, 30 invalid (sweep_space_test.cpp), 348 simulated. The fake does not fit when
  // micro_batch > 2: valid plans with mb 4 or 8, per layout (counting as there, minus the invalid):
  //   (1,2,2) mb4: 2 z × 5 × 3 = 30 − 12 invalid = 18;  (1,4,1) mb4, mb8: 2 × 4 × 3 = 24 − 6 = 18
  //   (2,1,2) mb4: 4 × 3 × 2 = 24;  (2,2,1) mb4, mb8: 2 × 5 × 6 = 60 − 12 = 48;  (4,1,1) mb4, mb8: 2 × 6 = 12
  // Out of memory 18 + 18 + 24 + 48 + 12 = 120; fit 348 − 120 = 228.
  const auto o = run({});
  CHECK(o.enumerated == 378);
  CHECK(o.tried == 378);
  CHECK(o.invalid == 30);
  CHECK(o.results.size() == 348);
  CHECK(o.out_of_memory() == 120);
  CHECK(o.fits() == 228);
  CHECK_FALSE(o.interrupted);
  CHECK(sweep::format_counts(o) == "378 plans tried: 30 invalid, 348 simulated (120 out of memory, 228 fit)\n");
}

TEST_CASE("the ranking: highest tokens/s that fits, ties to the lower index") {
  // Fits only with mb ≤ 2, so the best is tp4 pp1 mb2 z0: 4000 + 100 + 20 = 4120 tokens/s. Six plans
  // tie there (3 recompute × 2 SP); the first enumerated is recompute none, no SP.
  const auto o = run({});
  const auto order = sweep::ranking(o);
  CHECK(order.size() == 228);
  const auto& best = o.results[order[0]];
  CHECK(best.result.name == "tp4-pp1-dp1-z0-mb2");
  CHECK(best.result.tokens_per_s == 4120);
  CHECK(o.results[order[1]].result.name == "tp4-pp1-dp1-z0-mb2-sp");
  CHECK(o.results[order[5]].result.name == "tp4-pp1-dp1-z0-mb2-full-sp");
  // Next: tp4 mb1 (4110 tokens/s).
  CHECK(o.results[order[6]].result.tokens_per_s == 4110);
  for (std::size_t i = 1; i < order.size(); ++i) {
    const auto& a = o.results[order[i - 1]];
    const auto& b = o.results[order[i]];
    CHECK((a.result.tokens_per_s > b.result.tokens_per_s ||
           (a.result.tokens_per_s == b.result.tokens_per_s && a.index < b.index)));
  }
}

TEST_CASE("any number of threads gives the single-thread outcome") {
  const std::string single = sweep_test::json_of(run({}));
  for (int threads : {2, 3, 8}) {
    RunOptions options;
    options.threads = threads;
    CHECK(sweep_test::json_of(run(options)) == single);
  }
}

TEST_CASE("shards merged give the single-thread outcome, through JSON files") {
  const SweepOutcome single = run({});
  std::vector<SweepOutcome> parts;
  std::vector<std::string> names;
  for (int k : {3, 1, 2}) {  // any order
    RunOptions options;
    options.shard = {k, 3};
    options.threads = 2;
    const SweepOutcome part = run(options);
    CHECK(part.tried == (378 + 3 - k) / 3);  // indices ≡ k−1 (mod 3) below 378: 126 each
    names.push_back("shard" + std::to_string(k) + ".json");
    parts.push_back(sweep::read_outcome_json_text(sweep_test::json_of(part), names.back()));
  }
  const SweepOutcome merged = sweep::merge_outcomes(parts, names);
  CHECK(merged.shards == std::vector<int>{1, 2, 3});
  // Identical apart from which shards it covers:
  SweepOutcome expected = single;
  expected.shard_count = 3;
  expected.shards = {1, 2, 3};
  CHECK(sweep_test::json_of(merged) == sweep_test::json_of(expected));
  CHECK(sweep::format_ranking(merged, 10) == sweep::format_ranking(single, 10));
}

TEST_CASE("JSON round trip is exact") {
  const SweepOutcome o = run({});
  const std::string text = sweep_test::json_of(o);
  CHECK(sweep_test::json_of(sweep::read_outcome_json_text(text, "x.json")) == text);
}

TEST_CASE("merge refuses shards of other sweeps and shards given twice") {
  RunOptions one;
  one.shard = {1, 2};
  const SweepOutcome a = run(one);
  auto error_of = [](const std::vector<SweepOutcome>& parts) {
    try {
      sweep::merge_outcomes(parts, {"a.json", "b.json"});
    } catch (const config::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of({a, a}) == "b.json: shard 1/2 was already given; merge each shard once");
  SweepOutcome other = a;
  other.fingerprint = "0000000000000000";
  CHECK(error_of({a, other}) ==
        "b.json: its plans (378, fingerprint 0000000000000000) are other plans than a.json; merge only shards of one sweep");
  SweepOutcome thirds = a;
  thirds.shard_count = 3;
  CHECK(error_of({a, thirds}) ==
        "b.json: it is a slice of 3, a different number of shards than a.json; merge only shards of one sweep");
}

TEST_CASE("a stop request keeps the finished plans and counts the rest as not run") {
  std::atomic<bool> stop{false};
  RunOptions options;
  options.threads = 2;
  options.stop = &stop;
  options.on_progress = [&stop](const sweep::Progress& p) {
    CHECK(p.total == 348);
    if (p.done == 100) stop = true;
  };
  const SweepOutcome o = run(options);
  CHECK(o.interrupted);
  // Each worker finishes the plan it holds: at least 100, at most 100 + (threads − 1) results.
  CHECK(o.results.size() >= 100);
  CHECK(o.results.size() <= 101);
  CHECK(o.results.size() + o.not_run == 348);
  for (std::size_t i = 1; i < o.results.size(); ++i) CHECK(o.results[i - 1].index < o.results[i].index);
}

TEST_CASE("an exception in one plan stops the sweep and reaches the caller") {
  static const auto sc = sweep_test::small_scenario();
  static const auto plans = sweep::enumerate_plans(sc, {});
  RunOptions options;
  options.threads = 3;
  auto failing = [](const plan::Scenario& s, const plan::Strategy& st) {
    if (st.tp == 2) throw std::runtime_error("boom");
    return sweep_test::fake_simulate(s, st);
  };
  CHECK_THROWS_WITH(sweep::run_sweep(sc, plans, options, failing), "boom");
}

TEST_CASE("progress line: bar, count, rate, time left") {
  // 412 of 984 after 20 s: 20.6 plans/s; 572 left take 27.8 s -> "28 s". 412/984 of 30 columns = 12.
  CHECK(sweep::format_progress(412, 984, 20.0) ==
        "[############..................]  412/984  20.6 plans/s  ETA 28 s");
  CHECK(sweep::format_progress(0, 10, 0.0, 4) == "[....]  0/10  0.0 plans/s  ETA --");
  // 1 of 100 after 2 s: 99 left at 0.5/s = 198 s = 3 min 18 s.
  CHECK(sweep::format_progress(1, 100, 2.0, 2) == "[..]  1/100  0.5 plans/s  ETA 3 min 18 s");
  CHECK(sweep::format_progress(2, 4, 1.0, 4, "sizes") == "[##..]  2/4  2.0 sizes/s  ETA 1 s");
}

TEST_CASE("with the real simulate: two threads and two shards give the single-thread outcome") {
  // The small GPT on 4 GPUs, narrowed to tp, pp ∈ {1, 2}, mb 2, 1f1b, no recompute, ZeRO 0 and 1:
  // (1,1,4) 2 z + (1,2,2) 2 z + (2,1,2) 2 z × 2 sp + (2,2,1) 1 z × 2 sp = 10 plans.
  const auto sc = sweep_test::small_scenario();
  sweep::SweepSpace space;
  space.tp = {1, 2};
  space.pp = {1, 2};
  space.zero_stage = {0, 1};
  space.micro_batch = {2};
  space.schedule = {plan::ScheduleKind::one_f_one_b};
  space.recompute = {plan::Recompute::none};
  const auto plans = sweep::enumerate_plans(sc, space);
  REQUIRE(plans.size() == 10);
  auto simulate = [](const plan::Scenario& s, const plan::Strategy& st) { return plan::simulate(s, st); };
  const SweepOutcome single = sweep::run_sweep(sc, plans, {}, simulate);
  CHECK(single.results.size() == 10);
  RunOptions two;
  two.threads = 2;
  CHECK(sweep_test::json_of(sweep::run_sweep(sc, plans, two, simulate)) == sweep_test::json_of(single));
  std::vector<SweepOutcome> parts;
  for (int k : {1, 2}) {
    RunOptions shard;
    shard.threads = 2;
    shard.shard = {k, 2};
    parts.push_back(sweep::run_sweep(sc, plans, shard, simulate));
  }
  const SweepOutcome merged = sweep::merge_outcomes(parts, {"1.json", "2.json"});
  CHECK(sweep::format_ranking(merged, 10) == sweep::format_ranking(single, 10));
  CHECK(sweep::format_counts(merged) == sweep::format_counts(single));
}
