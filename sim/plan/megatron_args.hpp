// Megatron-LM's command-line arguments (a launch script such as its examples/gpt3/
// train_gpt3_175b_distributed.sh, or a file of arguments) as the strategy they describe: a
// strategy's `megatron_args: FILE` (scenario_yaml.cpp) reads it. Every `--flag value` written
// anywhere in the file counts, inside the quoted strings and arrays scripts keep them in too;
// shell variables the file assigns are expanded (config/shell_words.hpp).
//
// What it sets (names and defaults as megatron/training/arguments.py has them; a store_true flag
// that is absent is off): framework megatron-core; --tensor-model-parallel-size → tp,
// --pipeline-model-parallel-size → pp, --num-layers-per-virtual-pipeline-stage or
// --num-virtual-stages-per-pipeline-rank → v with the interleaved schedule,
// --account-for-embedding/loss-in-pipeline-split → pipeline_split_counts, --mtp-num-layers →
// mtp_layers (0 without it), --context-parallel-size → cp, --micro-batch-size →
// micro_batch, --sequence-parallel, --use-distributed-optimizer, --overlap-grad-reduce →
// dp_overlap, --overlap-param-gather, --tp-comm-overlap, --grad-reduce-in-bf16 (and
// --main-grads-dtype bf16), --use-precision-aware-optimizer with its dtypes → optimizer_states,
// --ddp-bucket-size (parameters), --recompute-granularity / --recompute-activations → recompute,
// --transformer-impl / --use-flash-attn / --attention-backend → flash_attention.
// What it checks against the scenario: --global-batch-size, --seq-length, --bf16 / --fp16, and
// the model's shape (--num-layers, --hidden-size, --ffn-hidden-size, --num-attention-heads,
// --group-query-attention with --num-query-groups, --swiglu, --normalization,
// --position-embedding-type, --untie-embeddings-and-output-weights).
// Refused with their position: expert parallelism and MoE (their model and plan are written in
// the scenario instead).
// Flags that change a step's cost and are not modelled, and flags this reader does not know, are
// positioned notes the commands print as warnings; data, logging, checkpoint and learning-rate
// flags are read and left.
#pragma once

#include <string>
#include <vector>

#include "sim/config/shell_words.hpp"
#include "sim/plan/scenario.hpp"

namespace stepsim::plan {

/// The strategy keys the arguments set: a strategy that has them may not also write these.
const std::vector<std::string>& megatron_args_sets();

/// Applies the arguments of `script` to `s`, a strategy of a scenario with `model` and
/// `training`. Throws config::ConfigError at the offending word.
void apply_megatron_args(const config::ShellScript& script, const models::ModelSpec& model, const Training& training,
                         Strategy& s);

}  // namespace stepsim::plan
