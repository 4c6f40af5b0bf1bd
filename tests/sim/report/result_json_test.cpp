#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "sim/config/yaml_field.hpp"
#include "sim/report/result_json.hpp"

using namespace stepsim;

namespace {

// Every field a distinct value that is not its default, including numbers with no short
// decimal form, so a key written but not read (or read into the wrong field) shows.
plan::StepResult every_field_set() {
  plan::StepResult r;
  r.name = "tp2-pp2 \"quoted\", ü";
  r.step_time_s = 1.0 / 3, r.tokens_per_s = 12345.678, r.tflops_per_gpu = 150.25, r.mfu = 0.1 + 0.2, r.hfu = 0.51;
  r.bubble_fraction = 0.031, r.exposed_comm_s = {0.11, 0.12, 0.13, 0.14, 0.17, 0.18}, r.sync_stall_s = 0.015, r.host_bound_s = 0.016;
  r.offload_optimizer = true, r.offload_param = true, r.offload_s = 0.019, r.host_memory_bytes = 123'456'789'012,
  r.host_ram_bytes = 2'000'000'000'000;
  r.peak_memory_bytes = (std::int64_t{70} << 30) + 1, r.memory_capacity_bytes = std::int64_t{80} << 30, r.fits = false;
  r.memory_note = "activations dominate";
  r.memory_at_peak = {1, 2, 3, 4, 5, 6, 7};
  r.gpus = 8, r.tp = 2, r.pp = 2, r.dp = 2, r.ep = 2, r.etp = 1, r.cp = 4, r.zero_stage = 1, r.micro_batch = 4, r.microbatches = 16, r.v = 2;
  r.schedule = "interleaved", r.recompute = "selective", r.sequence_parallel = true;
  r.stage_layers = {3, 4, 5};
  r.events = 1234567890123ULL, r.symmetric = true;
  return r;
}

std::string written(const plan::StepResult& r) {
  std::ostringstream out;
  report::JsonWriter w(out);
  w.begin_object();
  report::write_result_fields(w, r);
  w.end_object();
  return out.str();
}

plan::StepResult read_back(const std::string& text) {
  return report::read_result_fields(config::YamlDocument::load_string(text, "result.json").root());
}

}  // namespace

TEST_CASE("a result read back from its JSON equals the result, field for field") {
  const plan::StepResult r = every_field_set();
  const plan::StepResult back = read_back(written(r));
  CHECK(back.name == r.name);
  CHECK(back.step_time_s == r.step_time_s);
  CHECK(back.tokens_per_s == r.tokens_per_s);
  CHECK(back.tflops_per_gpu == r.tflops_per_gpu);
  CHECK(back.mfu == r.mfu);
  CHECK(back.hfu == r.hfu);
  CHECK(back.bubble_fraction == r.bubble_fraction);
  CHECK(back.exposed_comm_s.tp == r.exposed_comm_s.tp);
  CHECK(back.exposed_comm_s.pp == r.exposed_comm_s.pp);
  CHECK(back.exposed_comm_s.dp == r.exposed_comm_s.dp);
  CHECK(back.exposed_comm_s.zero == r.exposed_comm_s.zero);
  CHECK(back.exposed_comm_s.ep == r.exposed_comm_s.ep);
  CHECK(back.exposed_comm_s.cp == r.exposed_comm_s.cp);
  CHECK(back.sync_stall_s == r.sync_stall_s);
  CHECK(back.host_bound_s == r.host_bound_s);
  CHECK(back.offload_optimizer);
  CHECK(back.offload_param);
  CHECK(back.offload_s == r.offload_s);
  CHECK(back.host_memory_bytes == r.host_memory_bytes);
  CHECK(back.host_ram_bytes == r.host_ram_bytes);
  CHECK(back.peak_memory_bytes == r.peak_memory_bytes);
  CHECK(back.memory_capacity_bytes == r.memory_capacity_bytes);
  CHECK(back.fits == r.fits);
  CHECK(back.memory_note == r.memory_note);
  CHECK(back.memory_at_peak.parameters == 1);
  CHECK(back.memory_at_peak.gradients == 2);
  CHECK(back.memory_at_peak.optimizer_states == 3);
  CHECK(back.memory_at_peak.activations == 4);
  CHECK(back.memory_at_peak.gathered_parameters == 5);
  CHECK(back.memory_at_peak.buffers == 6);
  CHECK(back.memory_at_peak.reserve == 7);
  CHECK(back.gpus == r.gpus);
  CHECK(back.tp == r.tp);
  CHECK(back.pp == r.pp);
  CHECK(back.dp == r.dp);
  CHECK(back.ep == r.ep);
  CHECK(back.etp == r.etp);
  CHECK(back.cp == r.cp);
  CHECK(back.zero_stage == r.zero_stage);
  CHECK(back.micro_batch == r.micro_batch);
  CHECK(back.microbatches == r.microbatches);
  CHECK(back.v == r.v);
  CHECK(back.schedule == r.schedule);
  CHECK(back.recompute == r.recompute);
  CHECK(back.stage_layers == r.stage_layers);
  CHECK(back.sequence_parallel == r.sequence_parallel);
  CHECK(back.events == r.events);
  CHECK(back.symmetric == r.symmetric);
  // And writing it again gives the same text: nothing is lost or rounded on the way.
  CHECK(written(back) == written(r));
}

TEST_CASE("a non-finite number is written as null and read back as NaN") {
  plan::StepResult r = every_field_set();
  r.mfu = std::nan("");
  const std::string text = written(r);
  CHECK(text.find("\"mfu\":null") != std::string::npos);
  CHECK(std::isnan(read_back(text).mfu));
}

TEST_CASE("a missing key is an error at the object that lacks it") {
  std::string text = written(every_field_set());
  const auto at = text.find("\"host_bound_s\"");
  const auto comma = text.find(',', at);
  text.erase(at, comma + 1 - at);
  CHECK_THROWS_WITH_AS(read_back(text), doctest::Contains("host_bound_s"), config::ConfigError);
}
