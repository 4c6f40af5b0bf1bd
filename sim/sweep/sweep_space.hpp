// The space of parallel plans a sweep tries on one scenario: framework × tp × pp × zero_stage ×
// offload × micro_batch × schedule (× v) × recompute × sequence_parallel, dp following from the GPU count. A SweepSpace
// narrows each field (a scenario's `sweep:` section, sweep_yaml.hpp); an empty list means "every
// sensible value", which is:
//   framework     generic only (a listed framework runs with its defaults, framework_defaults.hpp;
//                 megatron-core takes zero_stage 0 and 1 as its distributed optimizer off and on,
//                 fsdp takes zero_stage 3 only)
//   tp            divisors of the GPUs per server (of all GPUs with allow_tp_across_servers)
//   pp            divisors of GPUs / tp (dp = GPUs / (tp·pp))
//   zero_stage    0–3 with pp = 1, 0–1 with pp > 1 (DeepSpeed has no ZeRO-2/3 with pipelines);
//                 only 0 when dp = 1 (there is nothing to shard over), unless the stage
//                 carries ZeRO-Offload (offload listed true)
//   micro_batch   powers of two up to max_micro_batch while micro_batch·dp divides the global
//                 batch (at least one microbatch per step)
//   schedule      1f1b when pp = 1 (a single stage has no schedule); gpipe, 1f1b, interleaved,
//                 zb-h1 when pp > 1
//   v             interleaved only: 2 ≤ v ≤ kMaxChunks dividing layers / pp
//   recompute     none, selective, full
//   sequence_par. false, and true when tp > 1
//   offload       off (listed: DeepSpeed plans with ZeRO >= 1 try each value, others off)
//   ep            a MoE model's experts: every ep dividing dp and the experts (each expert split
//                 over TP), and under TP every ep dividing tp·dp and the experts with whole experts
//                 (etp 1, EP folded over TP × DP); ZeRO-0/1 only
// DP bucket size, ZeRO prefetch and rank order keep their defaults (strategy.hpp).
//
// enumerate_plans lists the candidates in a fixed order (the loops above, outermost first), so a
// candidate's index names it across threads, shards and machines. Each is checked with
// plan::check_strategy; a plan it rejects stays in the list, marked invalid with the reason.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/plan/scenario.hpp"

namespace stepsim::sweep {

/// Largest number of interleaved chunks per stage the default space tries.
inline constexpr int kMaxChunks = 4;
/// Largest micro-batch the default space tries (sequences).
inline constexpr int kDefaultMaxMicroBatch = 8;

struct SweepSpace {
  std::vector<plan::Framework> framework;               ///< empty = generic
  std::vector<int> tp, pp, zero_stage, micro_batch, v;  ///< empty = every sensible value
  /// Expert-parallel degrees; empty = for a MoE model every divisor of dp that divides its
  /// experts (ZeRO-0/1 only, where EP is modelled), for a dense model 1. Under TP each listed (or
  /// default) degree dividing tp·dp is also tried with whole experts (etp 1).
  std::vector<int> ep;
  /// Context-parallel degrees; empty = 1 (CP pays only for long sequences: list it to search it).
  std::vector<int> cp;
  std::vector<plan::ScheduleKind> schedule;
  std::vector<plan::Recompute> recompute;
  std::vector<bool> sequence_parallel;
  /// ZeRO-Offload on or off (Strategy::offload_optimizer); empty = off. On applies to DeepSpeed
  /// plans with ZeRO ≥ 1 only.
  std::vector<bool> offload_optimizer;
  int max_micro_batch = kDefaultMaxMicroBatch;  ///< cap when micro_batch is not listed
  bool allow_tp_across_servers = false;         ///< try TP groups that span servers too
};

struct Candidate {
  std::size_t index = 0;        ///< position in the enumeration order
  plan::Strategy strategy;      ///< checked (dp resolved) when valid, as built otherwise
  bool valid = true;
  std::string invalid_reason;   ///< ConfigError message when check_strategy rejected it
};

/// "tp2-pp2-dp2-z1-mb2-interleaved-v2-selective-sp": every field the sweep varies, the framework
/// first where it is not generic ("megatron-core-tp2-…").
std::string plan_name(const plan::Strategy& s);

/// All candidates of `space` on `scenario`, in enumeration order.
std::vector<Candidate> enumerate_plans(const plan::Scenario& scenario, const SweepSpace& space);

}  // namespace stepsim::sweep
