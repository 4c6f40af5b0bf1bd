// A DeepSpeed config (ds_config.json, https://www.deepspeed.ai/docs/config-json/) as the strategy
// it describes: a strategy's `deepspeed_config: FILE` (scenario_yaml.cpp) reads it.
//
// What it sets: framework deepspeed; zero_optimization.stage → zero_stage;
// train_micro_batch_size_per_gpu → micro_batch; zero_optimization.overlap_comm → dp_overlap and
// reduce_bucket_size (elements of 16-bit gradients) → dp_bucket_size, below ZeRO-3;
// stage3_param_persistence_threshold and stage3_max_reuse_distance → the zero3_ knobs;
// offload_optimizer.device and offload_param.device cpu (or nvme, noted) → offload_optimizer and
// offload_param.
// What it checks against the scenario: train_batch_size = training.global_batch,
// gradient_accumulation_steps = global batch / (micro batch · dp), fp16 / bf16 enabled =
// training.precision. "auto" (the HuggingFace Trainer's placeholder) takes the scenario's value.
// Keys that change a step's cost and that stepsim does not model (offload, prefetch buckets,
// gradient clipping, …) become positioned notes the commands print as warnings; keys with no
// effect on a step's time (logging, the learning-rate schedule, checkpoint saving, loss scaling)
// are read and left; a key this reader does not know is a warning too.
#pragma once

#include "sim/config/yaml_fwd.hpp"
#include "sim/plan/scenario.hpp"
#include "sim/plan/strategy.hpp"

namespace stepsim::plan {

/// The strategy keys a DeepSpeed config sets: a strategy that has one may not also write these.
const std::vector<std::string>& deepspeed_config_sets();

/// Applies the DeepSpeed config `root` to `s`, a strategy of a scenario whose training is
/// `training` on `gpus` GPUs. Throws config::ConfigError at the offending value.
void apply_deepspeed_config(const config::Field& root, const Training& training, int gpus, Strategy& s);

}  // namespace stepsim::plan
