// What a strategy's `framework:` changes before its own keys are read: each framework's defaults
// for how it issues communication, taken from its source. A key the strategy writes afterwards
// overrides them.
//
// generic: the Strategy defaults as they are (PyTorch DDP buckets of 25 MB overlapped with the
//   backward, Megatron-LM's TP and PP, its fused gradient accumulation).
// deepspeed (deepspeed/runtime/zero/config.py): overlap_comm only at ZeRO stage 3,
//   reduce_bucket_size 5e8 elements of 16-bit gradients; gradients accumulated by autograd (with
//   bf16 and no ZeRO its BF16_Optimizer accumulates in fp32 instead: PlanInputs::bf16_optimizer).
// megatron-core, as NVIDIA's published performance configurations run it (NeMo's recipes and
//   Megatron-LM's pretraining examples pass these flags): the distributed optimizer
//   (--use-distributed-optimizer), --overlap-grad-reduce with Megatron-Core's default buckets of
//   max(40M, 1M·dp) parameters, --overlap-param-gather, and --tp-comm-overlap wherever sequence
//   parallelism is on (it needs it); gradients reduced in fp32 for bf16 models. A Megatron
//   argument list (megatron_args.hpp) sets each from its own flags instead.
// fsdp (torch.distributed.fsdp): FULL_SHARD (zero_stage 3), each transformer block its own unit,
//   BACKWARD_PRE prefetch; fsdp_sharding: hybrid_shard shards within a server instead, and
//   shard_grad_op (zero_stage 2 written with it) keeps each layer gathered from forward to backward;
//   gradients accumulated by autograd (where they are kept unsharded: no_sync, pipeline stages).
#pragma once

#include "sim/plan/strategy.hpp"

namespace stepsim::plan {

void apply_framework_defaults(Strategy& s);

}  // namespace stepsim::plan
