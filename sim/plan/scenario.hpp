// A scenario: one machine, one model, one training setup, and the strategies to compare on them,
// plus optional faults. Read from YAML by load_scenario (scenario_yaml.cpp); every value keeps
// its position so a later check (strategy_check.cpp) can point at the field that is wrong.
//
//   name: llama2-7b on 4 A100
//   hardware: {preset: dgx-a100, gpus: 4}      # hw::read_cluster
//   model: llama2-7b                           # models::read_model
//   training: {seq_len: 4096, global_batch: 64, precision: bf16, tokens: 300B, price_per_gpu_hour: 2}
//   strategies:
//     - {name: tp2-pp2, tp: 2, pp: 2, micro_batch: 2}
//   faults:
//     - {gpu: 3, compute_slowdown: 1.2}              # GPU 3 computes 20 % slower
//     - {link: gpu0-nvswitch0, bandwidth_factor: 0.5} # both directions of that cable at half speed
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "models/model_spec.hpp"
#include "sim/config/config_error.hpp"
#include "sim/config/yaml_fwd.hpp"
#include "sim/plan/strategy.hpp"

namespace stepsim::plan {


struct Training {
  std::int64_t seq_len = 2048;          ///< tokens per sequence s
  std::int64_t global_batch = 0;        ///< sequences per optimizer step
  Precision precision = Precision::bf16;
  /// How FP8 training scales its tensors (precision fp8 only; none otherwise).
  models::Fp8Recipe fp8_recipe = models::Fp8Recipe::none;
  std::optional<double> tokens;         ///< total training tokens, for time/cost estimates
  double price_per_gpu_hour = 0;        ///< USD; 0 = use the GPU spec's price if any
  config::SourcePos global_batch_pos;   ///< for "not divisible" errors
};

/// A GPU whose compute runs `compute_slowdown` times longer (1.2 = 20 % slower).
struct GpuFault {
  int gpu = 0;
  double compute_slowdown = 1.0;
};

/// Links (indices into Cluster::links) whose capacity is multiplied by `bandwidth_factor`.
struct LinkFault {
  std::string name;                     ///< as written: "gpu0-nvswitch0" or "17"
  std::vector<int> links;               ///< both directions of a named cable
  double bandwidth_factor = 1.0;
};

struct Faults {
  std::vector<GpuFault> gpus;
  std::vector<LinkFault> links;
  bool empty() const { return gpus.empty() && links.empty(); }
};

struct Scenario {
  std::string name;
  std::string file;                     ///< as the user named it
  hw::Cluster cluster;
  models::ModelSpec model;
  Training training;
  std::vector<Strategy> strategies;     ///< as written (dp may be 0 = derive); see check_strategy
  Faults faults;
};

/// Reads a scenario file, applying `overrides` ("key.path=value", from --set) first.
/// Errors: ConfigError with position for every mistake, unknown keys with "did you mean".
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
/// The same from an already-loaded document.
Scenario read_scenario(const config::YamlDocument& doc);
/// The same from text (tests and fuzz targets pass inline YAML); `name` names it in errors.
Scenario read_scenario_text(const std::string& yaml, const std::string& name);
/// A schedule or recompute field of a strategy (or of a sweep's list): its error lists the names.
ScheduleKind read_schedule(const config::Field& f);
Recompute read_recompute(const config::Field& f);

/// Resolves defaults (dp) and checks a strategy against the scenario's model and machine: the
/// returned copy is ready to simulate. Errors (ConfigError at the offending field): tp·pp·dp ≠
/// GPUs, heads or kv heads not divisible by tp, fewer layers than pp·v, global batch not divisible
/// by micro_batch·dp, interleaved with m not a multiple of pp, a TP group spanning servers without
/// allow_tp_across_servers, ZeRO-2/3 with pp > 1 (DeepSpeed does not support it), a bad rank order.
Strategy check_strategy(const Scenario& scenario, const Strategy& strategy);

/// Microbatches per step per pipeline: m = global_batch / (micro_batch · dp).
int microbatches(const Scenario& scenario, const Strategy& strategy);

/// The precision a strategy trains in: its own, else the scenario's training.precision.
Precision precision_of(const Training& training, const Strategy& strategy);
/// Its FP8 scaling recipe: none unless it trains in fp8; its own, else the scenario's, else delayed.
models::Fp8Recipe fp8_recipe_of(const Training& training, const Strategy& strategy);

}  // namespace stepsim::plan
