#include "sim/plan/megatron_flags.hpp"

#include <algorithm>
#include <set>

#include "models/layer_ops.hpp"
#include "sim/plan/strategy.hpp"

namespace stepsim::plan {
namespace {

// Flags whose value stepsim reads (one word each), and those it reads as switches.
const std::set<std::string> kValued{
    "tensor-model-parallel-size", "pipeline-model-parallel-size", "num-layers-per-virtual-pipeline-stage",
    "num-virtual-stages-per-pipeline-rank", "context-parallel-size", "mtp-num-layers", "expert-model-parallel-size", "num-experts",
    "micro-batch-size", "global-batch-size", "seq-length", "max-position-embeddings", "num-layers", "hidden-size",
    "ffn-hidden-size", "num-attention-heads", "num-query-groups", "normalization", "position-embedding-type",
    "recompute-granularity", "recompute-method", "recompute-num-layers", "ddp-bucket-size", "transformer-impl",
    "attention-backend", "fp8-format", "fp8-recipe", "clip-grad", "optimizer", "kv-channels",
    "expert-tensor-parallel-size", "moe-router-topk", "moe-ffn-hidden-size", "moe-shared-expert-intermediate-size",
    "moe-token-dispatcher-type", "moe-expert-capacity-factor", "moe-layer-freq", "moe-router-load-balancing-type",
    "moe-aux-loss-coeff", "moe-z-loss-coeff", "moe-router-score-function", "moe-router-dtype",
    "moe-router-topk-scaling-factor", "moe-router-num-groups", "moe-router-group-topk",
    "decoder-first-pipeline-num-layers", "decoder-last-pipeline-num-layers", "main-params-dtype", "main-grads-dtype",
    "exp-avg-dtype", "exp-avg-sq-dtype"};
const std::set<std::string> kSwitches{
    "sequence-parallel", "use-distributed-optimizer", "overlap-grad-reduce", "overlap-param-gather", "tp-comm-overlap",
    "grad-reduce-in-bf16", "bf16", "fp16", "swiglu", "group-query-attention", "untie-embeddings-and-output-weights",
    "use-flash-attn", "recompute-activations", "no-overlap-p2p-communication", "disable-bias-linear",
    "overlap-param-gather-with-optimizer-step", "overlap-p2p-communication-warmup-flush", "defer-embedding-wgrad-compute",
    "tp-comm-overlap-rs-dgrad", "accumulate-allreduce-grads-in-fp32", "no-gradient-accumulation-fusion",
    "use-cpu-initialization", "fp8-param-gather", "moe-grouped-gemm", "moe-enable-deepep", "moe-permute-fusion",
    "moe-router-enable-expert-bias", "moe-shared-expert-overlap", "use-precision-aware-optimizer",
    "account-for-embedding-in-pipeline-split", "account-for-loss-in-pipeline-split"};
// Read and left: they change no step's time (data, tokenizer, logging, checkpoints, the learning
// rate and its schedule, initialisation, dropout rates, evaluation) or are the launcher's own.
const std::set<std::string> kNoEffect{
    "data-path", "train-data-path", "valid-data-path", "test-data-path", "vocab-file", "merge-file", "tokenizer-type",
    "tokenizer-model", "split", "data-cache-path", "mock-data", "save", "load", "save-interval", "log-interval",
    "eval-interval", "eval-iters", "train-iters", "train-samples", "exit-interval", "exit-duration-in-mins", "lr",
    "min-lr", "lr-decay-style", "lr-decay-iters", "lr-decay-samples", "lr-warmup-fraction", "lr-warmup-iters",
    "lr-warmup-samples", "weight-decay", "adam-beta1", "adam-beta2", "adam-eps", "init-method-std", "seed",
    "tensorboard-dir", "wandb-project", "wandb-exp-name", "wandb-save-dir", "attention-dropout", "hidden-dropout",
    "norm-epsilon", "rotary-base", "rotary-percent", "make-vocab-size-divisible-by", "vocab-size", "padded-vocab-size",
    "distributed-backend", "distributed-timeout-minutes", "ckpt-format", "log-throughput", "log-timers-to-tensorboard",
    "log-validation-ppl-to-tensorboard", "log-memory-to-tensorboard", "log-params-norm", "log-num-zeros-in-grad",
    "timing-log-level", "timing-log-option", "tensorboard-log-interval", "use-mcore-models", "no-masked-softmax-fusion",
    "no-bias-gelu-fusion", "no-bias-dropout-fusion", "no-load-optim", "no-load-rng", "finetune", "use-checkpoint-args",
    "no-async-tensor-model-parallel-allreduce", "untie-embeddings", "position-embedding", "use-rotary-position-embeddings",
    "no-position-embedding", "num-workers", "dataloader-type", "eod-mask-loss", "reset-position-ids",
    "reset-attention-mask", "no-create-attention-mask-in-dataloader", "manual-gc", "manual-gc-interval",
    "empty-unused-memory-level",
    // torchrun / deepspeed launcher flags
    "nproc_per_node", "nproc-per-node", "nnodes", "node_rank", "node-rank", "master_addr", "master-addr",
    "master_port", "master-port", "rdzv_id", "rdzv_backend", "rdzv_endpoint", "rdzv-id", "rdzv-backend",
    "rdzv-endpoint", "standalone", "max_restarts", "max-restarts", "redirects", "tee", "log_dir", "log-dir"};

// Flags taking several words (argparse nargs='*'): their words up to the next flag.
const std::set<std::string> kListed{"recompute-modules"};

}  // namespace

bool is_valued(const std::string& flag) { return kValued.count(flag) > 0; }
bool is_switch(const std::string& flag) { return kSwitches.count(flag) > 0; }
bool is_listed(const std::string& flag) { return kListed.count(flag) > 0; }
bool has_no_effect(const std::string& flag) { return kNoEffect.count(flag) > 0; }

// A word of a listed flag's list: a variable, a module Megatron-Core names, or any snake_case
// word (a misspelt module lands in the list and is refused there). The lexer does not keep a
// pipe's or the next command's words apart, so any other word (tee, torchrun) ends the list.
bool is_list_word(const std::string& w) {
  if (w.empty() || w.compare(0, 2, "--") == 0) return false;
  const auto& modules = megatron_recompute_modules();
  return w[0] == '$' || std::find(modules.begin(), modules.end(), w) != modules.end() ||
         (w.find('_') != std::string::npos && w.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos);
}

}  // namespace stepsim::plan
