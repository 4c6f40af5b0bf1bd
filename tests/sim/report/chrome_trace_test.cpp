#include <doctest/doctest.h>

#include <set>
#include <sstream>

#include "json_check.hpp"
#include "sim/report/chrome_trace.hpp"
#include "sim/report/json_writer.hpp"
#include "synthetic.hpp"

using namespace stepsim;
using report::testing::Json;
using report::testing::parse_json;

TEST_CASE("JSON strings are escaped") {
  CHECK(report::json_quote("a\"b\\c\nd\x01") == "\"a\\\"b\\\\c\\nd\\u0001\"");
  CHECK(report::json_quote("GPU \xe2\x86\x92 NIC") == "\"GPU \xe2\x86\x92 NIC\"");  // UTF-8 passes through
  // Bytes that are not UTF-8 become U+FFFD (shared/reliability/scenario_nonutf8_name): a Latin-1
  // e-acute, a lone continuation byte, an overlong '/', a surrogate, a sequence cut short.
  CHECK(report::json_quote("caf\xe9") == "\"caf\\ufffd\"");
  CHECK(report::json_quote("\x80x") == "\"\\ufffdx\"");
  CHECK(report::json_quote("\xc0\xaf") == "\"\\ufffd\\ufffd\"");
  CHECK(report::json_quote("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");
  CHECK(report::json_quote("\xf0\x9f\x98") == "\"\\ufffd\\ufffd\\ufffd\"");
  CHECK(report::json_quote("\xf0\x9f\x98\x80") == "\"\xf0\x9f\x98\x80\"");  // U+1F600 passes
  std::ostringstream out;
  report::JsonWriter w(out);
  w.begin_object().key("a").value(1).key("b").begin_array().value(0.5).value("x").null().value(true).end_array();
  w.key("nan").value(0.0 / 0.0).key("t").fixed(1.5, 3).end_object();
  CHECK(out.str() == R"({"a":1,"b":[0.5,"x",null,true],"nan":null,"t":1.500})");
  CHECK_NOTHROW(parse_json(out.str()));
}

TEST_CASE("the test's JSON reader rejects what browsers reject") {
  CHECK_THROWS(parse_json("[1,]"));
  CHECK_THROWS(parse_json("{\"a\":1,}"));
  CHECK_THROWS(parse_json("\"tab\there\""));
  CHECK_THROWS(parse_json("{\"a\":01}"));
  CHECK_THROWS(parse_json("[1] x"));
  CHECK(parse_json(" {\"a\" : [1, -2.5e3, \"\\u00e9\"]} ")["a"].array[1].number == -2500);
}

TEST_CASE("rank filters read lists and ranges") {
  const auto f = report::RankFilter::parse("0-7,64");
  CHECK(f.contains(0));
  CHECK(f.contains(7));
  CHECK_FALSE(f.contains(8));
  CHECK(f.contains(64));
  CHECK(report::RankFilter{}.contains(12345));
  CHECK(report::RankFilter::parse(" 3 ").contains(3));
  auto message = [](const char* text) {
    try {
      report::RankFilter::parse(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("0-x") == "expected ranks such as 0-7,64, found '0-x'");
  CHECK(message("1,,2") == "expected ranks such as 0-7,64, found '1,,2'");
  CHECK(message("7-3") == "expected ranges A-B with A <= B, found '7-3' in '7-3'");
}

namespace {

struct TraceSummary {
  std::set<int> named_pids, x_pids;
  int threads = 0, slices = 0, flow_starts = 0, flow_ends = 0, memory_counters = 0, link_counters = 0;
  std::string first_process_name;
};

// Parses the trace (failing the test if it is not valid JSON) and counts its events by kind,
// checking the fields each kind must have.
TraceSummary summarize(const std::string& text) {
  const Json doc = parse_json(text);
  REQUIRE(doc.type == Json::Type::object);
  CHECK(doc["displayTimeUnit"].string == "ms");
  TraceSummary s;
  for (const Json& e : doc["traceEvents"].array) {
    const std::string ph = e["ph"].string;
    const int pid = static_cast<int>(e["pid"].number);
    if (ph == "M" && e["name"].string == "process_name") {
      if (s.first_process_name.empty()) s.first_process_name = e["args"]["name"].string;
      s.named_pids.insert(pid);
    }
    if (ph == "M" && e["name"].string == "thread_name") ++s.threads;
    if (ph == "X") {
      ++s.slices;
      s.x_pids.insert(pid);
      CHECK(e["ts"].type == Json::Type::number);
      CHECK(e["dur"].number >= 0);
      CHECK(e.has("tid"));
      CHECK(e["args"].has("category"));
    }
    if (ph == "s") ++s.flow_starts;
    if (ph == "f") {
      ++s.flow_ends;
      CHECK(e["bp"].string == "e");
    }
    if (ph == "C") ++(e["name"].string == "memory in use" ? s.memory_counters : s.link_counters);
  }
  return s;
}

std::string trace_of(const plan::StepResult& r, const report::TraceOptions& o = {}) {
  std::ostringstream out;
  report::write_chrome_trace(r, out, o);
  return out.str();
}

}  // namespace

TEST_CASE("a 4-GPU trace is valid JSON with a process per GPU and a thread per stream") {
  report::testing::PipelineShape shape;
  shape.tp = 2, shape.pp = 2, shape.dp = 1, shape.microbatches = 4;
  auto r = report::testing::synthetic_pipeline(shape);
  r.name = "quote\"and\\backslash";  // must be escaped in otherData
  r.links.push_back({"gpu0->gpu1 (NVLink)", 300e9, {{0, 150e9}, {1000 * report::testing::kUs, 0}}});
  const auto s = summarize(trace_of(r));
  CHECK(s.named_pids == std::set<int>{0, 1, 2, 3, 4});  // 4 GPUs and the "links" process
  CHECK(s.first_process_name == "rank 0: server 0 GPU 0 (tp 0, pp 0, dp 0)");
  CHECK(s.threads == 4 * 4);                        // 4 streams each
  CHECK(s.slices == static_cast<int>(r.tasks.size()));
  // Sends: 2 stage-0 ranks × 4 forward sends + 2 stage-1 ranks × 4 backward sends, each consumed.
  CHECK(s.flow_starts == 16);
  CHECK(s.flow_ends == 16);
  CHECK(s.memory_counters == 4 * (1 + 2 * 4));      // initial sample + one per F and per B
  CHECK(s.link_counters == 2);
}

TEST_CASE("a slice carries op, layer and microbatch in its name and args") {
  report::testing::PipelineShape shape;
  const auto r = report::testing::synthetic_pipeline(shape);
  const Json doc = parse_json(trace_of(r));
  const Json* first_x = nullptr;
  for (const Json& e : doc["traceEvents"].array)
    if (e["ph"].string == "X" && !first_x) first_x = &e;
  REQUIRE(first_x != nullptr);
  // The first task is F of microbatch 0 on rank 0 at t = 0 for 100 us, 1e12 FLOPs.
  CHECK((*first_x)["name"].string == "F layer L0 mb0");
  CHECK((*first_x)["cat"].string == "forward");
  CHECK((*first_x)["ts"].number == 0);
  CHECK((*first_x)["dur"].number == doctest::Approx(100.0));
  CHECK((*first_x)["args"]["microbatch"].number == 0);
  CHECK((*first_x)["args"]["layer"].number == 0);
  CHECK((*first_x)["args"]["flops"].number == doctest::Approx(1e12));
}

TEST_CASE("a 64-GPU trace parses, and --trace-ranks keeps only the ranks asked for") {
  report::testing::PipelineShape shape;
  shape.tp = 8, shape.pp = 4, shape.dp = 2, shape.microbatches = 8;
  const auto r = report::testing::synthetic_pipeline(shape);
  REQUIRE(r.ranks.size() == 64);
  const auto all = summarize(trace_of(r));
  CHECK(all.named_pids.size() == 64);
  CHECK(all.slices == static_cast<int>(r.tasks.size()));
  // Each of the 16 ranks of stages 0–2 sends 8 forwards, each of stages 1–3 sends 8 backwards.
  CHECK(all.flow_starts == 3 * 16 * 8 * 2);
  report::TraceOptions only;
  only.ranks = report::RankFilter::parse("0-7,63");
  const auto some = summarize(trace_of(r, only));
  CHECK(some.named_pids == std::set<int>{0, 1, 2, 3, 4, 5, 6, 7, 63});
  CHECK(some.x_pids == some.named_pids);
  // Ranks 0–7 (stage 0) send to ranks 16–23, which are filtered out: no arrows at all.
  CHECK(some.flow_starts == 0);
  CHECK(some.flow_ends == 0);
}
