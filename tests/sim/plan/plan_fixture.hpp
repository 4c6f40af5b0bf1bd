// Shared by the sim/plan tests: scenarios from inline YAML.
#pragma once

#include <string>

#include "sim/config/config_error.hpp"
#include "sim/plan/scenario.hpp"
#include "sim/plan/simulate.hpp"

namespace plan_test {

inline stepsim::plan::Scenario scenario(const std::string& yaml) {
  return stepsim::plan::read_scenario_text(yaml, "test.yaml");
}

/// A small GPT (8 layers, h 1024, 16 heads) on one DGX A100, with `strategy` as the only one.
inline std::string small_gpt(const std::string& strategy, int global_batch = 16) {
  return R"(name: small
hardware: {preset: dgx-a100}
model: {name: small-gpt, layers: 8, hidden: 1024, heads: 16, vocab: 32000, max_seq: 1024}
training: {seq_len: 1024, global_batch: )" + std::to_string(global_batch) + R"(}
strategies:
  - )" + strategy + "\n";
}

/// The same small GPT in bf16 on `nodes` DGX A100 servers.
inline std::string small_gpt_on_nodes(const std::string& strategy, int nodes, int global_batch) {
  return R"(name: small
hardware: {preset: dgx-a100, nodes: )" + std::to_string(nodes) + R"(}
model: {name: small-gpt, layers: 8, hidden: 1024, heads: 16, vocab: 32000, max_seq: 1024}
training: {seq_len: 1024, global_batch: )" + std::to_string(global_batch) + R"(, precision: bf16}
strategies:
  - )" + strategy + "\n";
}

/// The message reading the scenario gives (a ConfigError), or "no error".
inline std::string read_error(const std::string& yaml) {
  try {
    scenario(yaml);
  } catch (const stepsim::config::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

/// The message check_strategy gives the scenario's first strategy, or "no error".
inline std::string strategy_error(const std::string& yaml) {
  const auto sc = scenario(yaml);
  try {
    stepsim::plan::check_strategy(sc, sc.strategies[0]);
  } catch (const stepsim::config::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

/// Options for analytic cases: every collective takes bytes / `bytes_per_s` with no latency, the
/// stages are uniform (no embedding or head), no optimizer step, the host issues at once.
inline stepsim::plan::SimOptions ideal_network(double bytes_per_s) {
  stepsim::plan::SimOptions opt;
  opt.hooks.comm_bytes_per_s = bytes_per_s;
  opt.hooks.skip_embedding_and_head = true;
  opt.hooks.skip_optimizer = true;
  opt.hooks.instant_host = true;
  return opt;
}

}  // namespace plan_test
