// A torchtitan training config (its TOML job config, e.g. torchtitan/models/llama3/train_configs/
// llama3_70b.toml) as the strategy it describes: a strategy's `torchtitan_config: FILE`
// (scenario_yaml.cpp) reads it. Keys and defaults as torchtitan/config/job_config.py has them.
//
// What it sets: framework fsdp as torchtitan applies FSDP2 (apply_fsdp: each transformer block its
// own unit, gathers and reduce-scatters on one shard process group, one unit prefetched, gradients
// reduced in fp32: mixed_precision_reduce); [parallelism] tensor_parallel_degree → tp (with
// sequence parallelism, torchtitan's TP plan), pipeline_parallel_degree → pp with
// pipeline_parallel_schedule and pipeline_parallel_microbatch_size, data_parallel_shard_degree and
// data_parallel_replicate_degree → zero_stage 3 over the shard group (HSDP when both exceed 1,
// DDP when only replication does); [training] local_batch_size (or the older batch_size) →
// micro_batch; [activation_checkpoint] mode → recompute (selective_ac_option "op":
// selective_policy torch_ops); eager_ops (all three: torchtitan's Llama runs nn.RMSNorm, the
// complex rotary multiply and SwiGLU unfused) unless it compiles.
// What it checks against the scenario: seq_len, global_batch_size (or local batch × DP when it
// is −1), mixed_precision_param, and the llama3 flavour's shape against the scenario's model.
// Refused with their position: expert parallelism, schedules stepsim does not have. Keys that
// change a step's cost and are not modelled (float8, compile's other fusions, async TP, gradient
// clipping, CPU offload) and keys it does not know are positioned notes; logging, checkpoint,
// profiling, data and learning-rate keys are read and left.
#pragma once

#include <string>
#include <vector>

#include "sim/plan/scenario.hpp"

namespace stepsim::plan {

/// The strategy keys the config sets: a strategy that has one may not also write these.
const std::vector<std::string>& torchtitan_config_sets();

/// Applies the TOML `text` (read from `path`) to `s`, a strategy of a scenario with `model`,
/// `training` and `gpus` GPUs. Throws config::ConfigError at the offending value (a TOML syntax
/// error at its position).
void apply_torchtitan_config(const std::string& text, const std::string& path, const models::ModelSpec& model,
                             const Training& training, int gpus, Strategy& s);

}  // namespace stepsim::plan
