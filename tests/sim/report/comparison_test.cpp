#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/report/comparison.hpp"
#include "sim/report/format.hpp"
#include "sim/report/text_table.hpp"

using namespace stepsim;
using stepsim::report::best_index;

namespace {

plan::StepResult headline(const std::string& name, double tokens_per_s, bool fits = true) {
  plan::StepResult r;
  r.name = name;
  r.tokens_per_s = tokens_per_s;
  r.step_time_s = 1.0;
  r.fits = fits;
  r.gpus = 4;
  r.peak_memory_bytes = std::int64_t{60} << 30;
  r.memory_capacity_bytes = std::int64_t{80} << 30;
  return r;
}

}  // namespace

TEST_CASE("formatting puts a unit on every number") {
  CHECK(report::with_thousands(39736.4) == "39,736");
  CHECK(report::with_thousands(999) == "999");
  CHECK(report::with_thousands(1000) == "1,000");
  CHECK(report::percent(3.0 / 11.0) == "27.3 %");
  CHECK(report::milliseconds(0.41234) == "412.3 ms");
  CHECK(report::gibibytes(80.0 * (1 << 30)) == "80.0 GiB");
  CHECK(report::duration(12.5e-6) == "12.5 us");
  CHECK(report::duration(2.414) == "2.41 s");
  CHECK(report::display_width("p\xe2\x88\x92" "1") == 3);  // "p−1": the minus sign is 3 bytes, 1 column
}

TEST_CASE("a text table right-aligns numbers and trims trailing spaces") {
  report::TextTable t({"name", "value"}, {report::Align::left, report::Align::right});
  t.add_row({"a", "1 ms"});
  t.add_row({"longer", "100 ms"});
  CHECK(t.render() ==
        "name     value\n"
        "------  ------\n"
        "a         1 ms\n"
        "longer  100 ms\n");
}

TEST_CASE("the best plan is the fastest one that fits") {
  // b is fastest but does not fit, so c (faster than a) wins.
  const std::vector<plan::StepResult> rs{headline("a", 100), headline("b", 300, false), headline("c", 200)};
  CHECK(best_index(rs) == 2u);
  CHECK_FALSE(best_index({headline("x", 1, false)}).has_value());
  CHECK_FALSE(best_index({}).has_value());
  // A tie goes to the earlier plan.
  CHECK(best_index({headline("p", 5), headline("q", 5)}) == 0u);
}

TEST_CASE("the comparison table shows every metric with units and marks the best plan") {
  auto a = headline("tp2-pp2", 30000);
  a.step_time_s = 0.5;
  a.bubble_fraction = 0.31;
  a.exposed_comm_s.tp = 0.06;  // 12 % of 0.5 s
  auto b = headline("zero3", 40000);
  b.step_time_s = 0.375;
  const std::string out = report::format_comparison({a, b});
  CHECK(out.find("*zero3") != std::string::npos);
  CHECK(out.find("*tp2-pp2") == std::string::npos);
  CHECK(out.find("500.0 ms") != std::string::npos);
  CHECK(out.find("30,000 tokens/s") != std::string::npos);
  CHECK(out.find("31.0 %") != std::string::npos);
  CHECK(out.find("60.0 ms (12.0 %)") != std::string::npos);
  CHECK(out.find("60.0 / 80.0 GiB") != std::string::npos);
  CHECK(out.find("* best: highest tokens/s") != std::string::npos);
  // Every value column is right-aligned, so every line of the table (header, rule, each metric)
  // ends at the same column: the last plan's values line up under its name.
  const std::string table = out.substr(0, out.find("* best"));
  std::vector<std::size_t> widths;
  for (std::size_t from = 0, to; (to = table.find('\n', from)) != std::string::npos; from = to + 1)
    widths.push_back(report::display_width(table.substr(from, to - from)));
  REQUIRE(widths.size() == 2 + 17);  // header, rule, one line per metric
  for (std::size_t w : widths) CHECK(w == widths.front());
}

TEST_CASE("explain_winner names the winner and what the others lose") {
  auto a = headline("tp2-pp2", 30000);
  a.bubble_fraction = 0.31;
  a.exposed_comm_s.tp = 0.12;  // of a 1 s step: 12 %
  auto b = headline("zero3", 40000);
  b.exposed_comm_s.zero = 0.08;
  auto c = headline("dp4", 50000, false);
  c.peak_memory_bytes = std::int64_t{95} << 30;
  const std::string text = report::explain_winner({a, b, c});
  // 40000 / 30000 = 1.33.
  CHECK(text.find("zero3 is the best plan that fits: 40,000 tokens/s") != std::string::npos);
  CHECK(text.find("1.33x the runner-up tp2-pp2") != std::string::npos);
  CHECK(text.find("It still loses 8 % of its step to exposed ZeRO gathers and scatters.") != std::string::npos);
  CHECK(text.find("tp2-pp2 (1.33x slower) loses 31 % of its step to pipeline bubbles and 12 % to exposed TP "
                  "communication.") != std::string::npos);
  CHECK(text.find("dp4 does not fit: it needs 95.0 GiB per GPU of 80.0 GiB.") != std::string::npos);
}

TEST_CASE("explain_winner when nothing fits points at the closest plan") {
  auto a = headline("a", 1, false);
  a.peak_memory_bytes = std::int64_t{100} << 30;
  auto b = headline("b", 1, false);
  b.peak_memory_bytes = std::int64_t{90} << 30;
  CHECK(report::explain_winner({a, b}) ==
        "No plan fits in memory. Closest: b does not fit: it needs 90.0 GiB per GPU of 80.0 GiB.\n");
  CHECK(report::explain_winner({}).empty());
}
