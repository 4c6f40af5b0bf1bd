#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include "json_check.hpp"
#include "sim/report/result_formats.hpp"

using namespace stepsim;
using report::testing::parse_json;

namespace {

plan::StepResult sample(const std::string& name, double tokens_per_s, bool fits) {
  plan::StepResult r;
  r.name = name, r.tokens_per_s = tokens_per_s, r.fits = fits, r.gpus = 4, r.tp = 2, r.pp = 2;
  r.step_time_s = 0.5, r.exposed_comm_s.tp = 0.0625, r.schedule = "1f1b", r.recompute = "none";
  r.peak_memory_bytes = std::int64_t{70} << 30, r.memory_capacity_bytes = std::int64_t{80} << 30;
  return r;
}

}  // namespace

TEST_CASE("results JSON parses and names the best plan") {
  auto slow = sample("slow", 1000, true);
  auto huge = sample("huge, \"quoted\"", 5000, false);
  huge.memory_note = "activations dominate";
  std::ostringstream out;
  report::write_results_json({slow, huge}, out, "llama2-7b on 4 A100");
  const auto doc = parse_json(out.str());
  CHECK(doc["scenario"].string == "llama2-7b on 4 A100");
  CHECK(doc["format_version"].number == report::kResultFormatVersion);
  CHECK(doc["best"].string == "slow");  // huge is faster but does not fit
  REQUIRE(doc["results"].array.size() == 2);
  const auto& first = doc["results"].array[0];
  CHECK(first["best"].boolean);
  CHECK(first["step_time_s"].number == 0.5);
  CHECK(first["exposed_comm_s"]["tp"].number == 0.0625);
  CHECK(first["peak_memory_bytes"].number == 70.0 * (1 << 30));
  CHECK(doc["results"].array[1]["name"].string == "huge, \"quoted\"");
  CHECK(doc["results"].array[1]["fits"].boolean == false);
  std::ostringstream none;
  report::write_results_json({huge}, none);
  CHECK(parse_json(none.str())["best"].type == report::testing::Json::Type::null);
  CHECK_FALSE(parse_json(none.str()).has("scenario"));
}

TEST_CASE("results CSV has a header and one quoted-where-needed row per plan") {
  std::ostringstream out;
  report::write_results_csv({sample("a", 1000, true), sample("b,\"c\"", 2000, true)}, out);
  std::istringstream in(out.str());
  std::string header, row_a, row_b;
  std::getline(in, header), std::getline(in, row_a), std::getline(in, row_b);
  CHECK(header == report::csv_header());
  CHECK(std::count(header.begin(), header.end(), ',') == 33);  // 34 columns
  CHECK(row_a ==
        "a,4,2,2,1,0,1,1,1,1f1b,none,false,0.5,1000,0,0,0,0,0.0625,0,0,0,0,75161927680,85899345920,true,,0,1,0,1,0,false,0");
  CHECK(row_b.rfind("\"b,\"\"c\"\"\",4,", 0) == 0);  // RFC 4180: quotes doubled inside quotes
}
