// Shared by the sim/sweep tests: a small scenario from inline YAML, and a fake simulate function
// whose numbers a test can derive by hand (so enumeration, threads, shards and merges are tested
// without the cost or the physics of plan::simulate).
#pragma once

#include <sstream>
#include <string>

#include "sim/config/yaml_field.hpp"
#include "sim/plan/scenario.hpp"
#include "sim/sweep/sweep_json.hpp"
#include "sim/sweep/sweep_runner.hpp"

namespace sweep_test {

/// A small GPT (8 layers, h 1024, 16 heads, MLP 4096) on 4 GPUs of a DGX A100, global batch 8.
inline std::string small_scenario_yaml(const std::string& sweep_section = "sweep: {}") {
  return R"(name: small
hardware: {preset: dgx-a100, gpus: 4}
model: {name: small-gpt, layers: 8, hidden: 1024, heads: 16, vocab: 32000, max_seq: 1024}
training: {seq_len: 1024, global_batch: 8}
)" + sweep_section + "\n";
}

inline const stepsim::config::YamlDocument& small_document() {
  static const auto doc = stepsim::config::YamlDocument::load_string(small_scenario_yaml(), "test.yaml");
  return doc;
}

inline stepsim::plan::Scenario small_scenario() { return stepsim::plan::read_scenario(small_document()); }

/// tokens/s = 1000·tp + 100·pp + 10·micro_batch + zero_stage (so plans differing only in
/// schedule, recompute or SP tie, and the lower index must win); fits when micro_batch ≤ 2.
inline stepsim::plan::StepResult fake_simulate(const stepsim::plan::Scenario& sc, const stepsim::plan::Strategy& s) {
  stepsim::plan::StepResult r;
  r.name = s.name;
  r.gpus = sc.cluster.gpu_count();
  r.tp = s.tp, r.pp = s.pp, r.dp = s.dp, r.zero_stage = s.zero_stage, r.micro_batch = s.micro_batch, r.v = s.v;
  r.microbatches = stepsim::plan::microbatches(sc, s);
  r.schedule = stepsim::plan::to_string(s.schedule);
  r.recompute = stepsim::models::to_string(s.recompute);
  r.sequence_parallel = s.sequence_parallel;
  r.tokens_per_s = 1000.0 * s.tp + 100.0 * s.pp + 10.0 * s.micro_batch + s.zero_stage;
  r.step_time_s = 8.0 * 1024 / r.tokens_per_s;
  r.mfu = r.tokens_per_s / 1e4 + 0.1;  // a non-round double, to test the exact JSON round trip
  r.fits = s.micro_batch <= 2;
  r.peak_memory_bytes = std::int64_t{s.micro_batch} << 33;
  r.memory_capacity_bytes = std::int64_t{80} << 30;
  r.memory_at_peak.activations = r.peak_memory_bytes;
  return r;
}

inline std::string json_of(const stepsim::sweep::SweepOutcome& o) {
  std::ostringstream out;
  stepsim::sweep::write_outcome_json(out, o);
  return out.str();
}

}  // namespace sweep_test
