#include <doctest/doctest.h>

#include <sstream>

#include "sim/sweep/advise.hpp"
#include "sweep_fixture.hpp"

using namespace stepsim;

namespace {

plan::StepResult result(const std::string& name, int tp, int pp, double tokens_per_s, bool fits) {
  plan::StepResult r;
  r.name = name;
  r.tp = tp;
  r.pp = pp;
  r.tokens_per_s = tokens_per_s;
  r.step_time_s = 1.0;
  r.fits = fits;
  r.memory_capacity_bytes = std::int64_t{80} << 30;
  r.peak_memory_bytes = std::int64_t{40} << 30;
  return r;
}

// Four simulated plans: ZeRO-3 at 1000 tokens/s losing 10 % to ZeRO gathers, a 3D plan at 900
// losing 20 % to TP, a faster tp2 plan that does not fit, and a tp4 plan at 950.
sweep::SweepOutcome four_plans() {
  sweep::SweepOutcome o;
  o.tried = 5;
  o.invalid = 1;
  o.results = {{0, result("zero3", 1, 1, 1000, true)},
               {1, result("tp2-pp2", 2, 2, 900, true)},
               {2, result("tp2-big", 2, 1, 1200, false)},
               {3, result("tp4", 4, 1, 950, true)}};
  o.results[0].result.exposed_comm_s.zero = 0.1;
  o.results[1].result.exposed_comm_s.tp = 0.2;
  return o;
}

// One simulated plan: tp1-pp1-dp4, ZeRO-0, 1f1b, no recompute, at `micro_batch`.
sweep::SweepOutcome one_dp_plan(int micro_batch) {
  sweep::SweepOutcome o;
  plan::StepResult r = result("tp1-pp1-dp4-z0-mb" + std::to_string(micro_batch), 1, 1, 1000, true);
  r.micro_batch = micro_batch;
  r.schedule = "1f1b";
  r.recompute = "none";
  o.results = {{0, r}};
  return o;
}

}  // namespace

TEST_CASE("advise picks the best plan, the best with tp = pp = 1 and the best 3D plan") {
  const auto o = four_plans();
  const auto a = sweep::choose_plans(o);
  CHECK(a.best == 0u);        // 1000 tokens/s; tp2-big is faster but does not fit
  CHECK(a.best_zero3 == 0u);
  CHECK(a.best_3d == 1u);     // the only fitting plan with tp > 1 and pp > 1
  CHECK(a.best_3d_uses_both);
}

TEST_CASE("without a fitting tp>1-and-pp>1 plan, the best with tp > 1 or pp > 1 stands in") {
  auto o = four_plans();
  o.results[1].result.fits = false;
  const auto a = sweep::choose_plans(o);
  CHECK(a.best_3d == 3u);  // tp4 at 950
  CHECK_FALSE(a.best_3d_uses_both);
}

TEST_CASE("advise in words: margins and what would change the answer, from the numbers") {
  const auto sc = sweep_test::small_scenario();
  const auto o = four_plans();
  const std::string text = sweep::advise_text(sc, o, sweep::choose_plans(o), {});
  // 1000 vs 900 tokens/s: 1000/900 − 1 = 11.1 %.
  CHECK(text.find("vs the best 3D plan (tp > 1 and pp > 1): tp2-pp2, 900 tokens/s; the winner is 11.1 % faster.") !=
        std::string::npos);
  CHECK(text.find("vs the best plain data-parallel / ZeRO plan (tp = pp = 1): it is that plan.") != std::string::npos);
  // tp2-pp2 loses 0.2 s of its 1 s step to TP; without it 900 / 0.8 = 1,125 tokens/s, which is
  // 1125/1000 − 1 = 12.5 % faster than the winner.
  CHECK(text.find("  - tp2-pp2 loses 20.0 % of its step to exposed TP communication (its TP collectives run over "
                  "NVLink3 x12 (300 GB/s per direction)); without that it would reach 1,125 tokens/s, 12.5 % faster "
                  "than the winner: it would win.\n") != std::string::npos);
  // The winner loses 10 %: 1000 / 0.9 = 1,111 tokens/s.
  CHECK(text.find("  - zero3 loses 10.0 % of its step to exposed ZeRO gathers and scatters; without that it would "
                  "reach 1,111 tokens/s and stay first.\n") != std::string::npos);
  CHECK(text.find("5 plans tried: 1 invalid, 4 simulated (1 out of memory, 3 fit)") != std::string::npos);
}

TEST_CASE("what-if: the picked plans re-simulated, micro-batch halved until they fit") {
  // On the small scenario, the fake fits only with micro_batch ≤ 2: a winner with micro_batch 8
  // comes back as micro_batch 2 (8 -> 4 does not fit -> 2 fits).
  const auto sc = sweep_test::small_scenario();
  const auto o = one_dp_plan(8);
  const auto a = sweep::choose_plans(o);
  const auto w = sweep::simulate_what_if("same box", sc, o, a, sweep_test::fake_simulate);
  REQUIRE(w.best);
  // mb 8 · dp 4 = 32 does not divide the global batch 8, nor does 4 · 4; mb 2 · 4 = 8 does and fits.
  CHECK(w.best->name == "tp1-pp1-dp4-z0-mb2");
  CHECK(w.best->fits);
  CHECK_FALSE(w.best_3d);
}

TEST_CASE("what-if: a plan stopped by a resource limit is an error, not a plan skipped as invalid") {
  const auto sc = sweep_test::small_scenario();
  const auto o = one_dp_plan(2);
  const auto a = sweep::choose_plans(o);
  const sweep::SimulateFn over_limit = [](const plan::Scenario&, const plan::Strategy&) -> plan::StepResult {
    throw config::LimitError({"s.yaml", 0, 0}, "x", "past its event limit");
  };
  CHECK_THROWS_AS(sweep::simulate_what_if("same box", sc, o, a, over_limit), config::LimitError);
  const sweep::SimulateFn invalid = [](const plan::Scenario&, const plan::Strategy&) -> plan::StepResult {
    throw config::ConfigError({"s.yaml", 0, 0}, "x", "tp does not divide");
  };
  CHECK_FALSE(sweep::simulate_what_if("same box", sc, o, a, invalid).best);
}

TEST_CASE("advise JSON: best, best_zero3, best_3d, tried, fits") {
  const auto o = four_plans();
  std::ostringstream out;
  sweep::write_advice_json(out, o, sweep::choose_plans(o));
  const std::string json = out.str();
  CHECK(json.rfind("{\"best\":{\"name\":\"zero3\",", 0) == 0);
  CHECK(json.find("\n\"best_zero3\":{\"name\":\"zero3\",") != std::string::npos);
  CHECK(json.find("\n\"best_3d\":{\"name\":\"tp2-pp2\",") != std::string::npos);
  CHECK(json.find("\"tried\":5,\"fits\":3}\n") != std::string::npos);
}

TEST_CASE("advise says when twice the micro-batch would not fit") {
  // The winner runs micro-batch 1; the sweep also simulated it with micro-batch 2 at 90 GiB of 80.
  const auto sc = sweep_test::small_scenario();
  auto o = four_plans();
  plan::StepResult big = result("zero3-mb2", 1, 1, 1100, false);
  big.micro_batch = 2;
  big.peak_memory_bytes = std::int64_t{90} << 30;
  o.results.push_back({4, big});
  const std::string text = sweep::advise_text(sc, o, sweep::choose_plans(o), {});
  CHECK(text.find("GiB buffers; with micro-batch 2 it would need 90.0 GiB and not fit.\n") != std::string::npos);
}

TEST_CASE("does TP pay: the best fitting plan per TP degree, each against the best without TP") {
  // tp1: zero3 (1000); tp2: tp2-pp2 (900; tp2-big is faster but does not fit); tp4: tp4 (950).
  const auto o = four_plans();
  const auto a = sweep::choose_plans(o);
  REQUIRE(a.best_by_tp.size() == 3);
  CHECK(a.best_by_tp[0] == std::pair<int, std::size_t>{1, 0});
  CHECK(a.best_by_tp[1] == std::pair<int, std::size_t>{2, 1});
  CHECK(a.best_by_tp[2] == std::pair<int, std::size_t>{4, 3});
  std::ostringstream out;
  sweep::write_advice_json(out, o, a);
  // 900 / 1000 - 1 = -0.1 and 950 / 1000 - 1 = -0.05 (as the shortest doubles that round-trip).
  CHECK(out.str().find("\"best_by_tp\":[{\"tp\":1,\"name\":\"zero3\",\"tokens_per_s\":1000,\"vs_no_tp\":0},"
                       "{\"tp\":2,\"name\":\"tp2-pp2\",\"tokens_per_s\":900,\"vs_no_tp\":-0.09999999999999998},"
                       "{\"tp\":4,\"name\":\"tp4\",\"tokens_per_s\":950,\"vs_no_tp\":-0.050000000000000044}]") !=
        std::string::npos);
  const std::string text = sweep::advise_text(sweep_test::small_scenario(), o, a, {});
  CHECK(text.find("  tp 4: tp4, 950 tokens/s, 5.0 % slower than without TP.\n") != std::string::npos);
  CHECK(text.find("  TP does not pay here: the best plan without TP is 5.3 % faster than the best with it (tp 4).\n") !=
        std::string::npos);
}

TEST_CASE("advise says what the collectives were fitted to") {
  const auto o = four_plans();
  const sweep::MeasuredComm m{"box.txt", "all_reduce", 4, std::int64_t{1} << 31, 2.59, 25.2, 2.6};
  const std::string text = sweep::advise_text(sweep_test::small_scenario(), o, sweep::choose_plans(o), {}, m);
  CHECK(text.rfind("Collectives fitted to box.txt (all_reduce over 4 GPUs): at 2 GiB it measured 2.6 GB/s bus bandwidth, "
                   "the preset gives 25.2 GB/s, the fit 2.6 GB/s.", 0) == 0);
  std::ostringstream out;
  sweep::write_advice_json(out, o, sweep::choose_plans(o), m);
  CHECK(out.str().find("\"measured_comm\":{\"file\":\"box.txt\",\"op\":\"all_reduce\",\"ranks\":4,\"size_bytes\":2147483648,"
                       "\"measured_busbw_gbps\":2.59,\"preset_busbw_gbps\":25.2,\"fitted_busbw_gbps\":2.6}") != std::string::npos);
}
