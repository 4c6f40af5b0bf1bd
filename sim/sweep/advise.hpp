// `stepsim advise`: from a finished sweep, which plan to run on this box, by how much it beats the
// best plain data-parallel / ZeRO plan (tp = pp = ep = 1) and the best 3D plan (tp > 1 and pp > 1; if
// none fits, the best with tp > 1 or pp > 1), why (each plan's step broken into bubble, exposed
// TP/PP/DP/ZeRO communication, stalls and memory), and what would change the answer: arithmetic
// on the measured losses ("if its TP all-reduce were free") and the three plans re-simulated on a
// changed machine or workload (more GPUs, a longer sequence) that the caller builds. When no plan
// fits, the plans of DeepSpeed's ZeRO-Offload (offload_space) are the caller's second sweep.
// Pure functions of their inputs; all text, no printing.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/plan/scenario.hpp"
#include "sim/sweep/sweep_outcome.hpp"
#include "sim/sweep/sweep_runner.hpp"
#include "sim/sweep/sweep_space.hpp"

namespace stepsim::sweep {

/// The three plans advise compares, as positions in SweepOutcome::results (nullopt: none fits).
struct Advice {
  std::optional<std::size_t> best, best_zero3, best_3d;
  bool best_3d_uses_both = false;  ///< best_3d has tp > 1 and pp > 1
  /// The fastest plan that fits for each tensor-parallel degree that has one, ascending tp: the
  /// "does TP pay on this box?" answer (each against the best without TP).
  std::vector<std::pair<int, std::size_t>> best_by_tp{};
};

Advice choose_plans(const SweepOutcome& outcome);

/// The picked plans simulated again on a changed scenario.
struct WhatIf {
  std::string change;                                ///< "16 GPUs (2 servers)", "seq 8192"
  std::optional<plan::StepResult> best, best_zero3, best_3d;  ///< nullopt: no valid variant there
};

/// Re-simulates each picked plan on `changed`: same tp, pp, ZeRO stage, schedule, recompute and
/// sequence parallelism; dp follows the GPU count and micro_batch is halved until the plan is
/// valid there.
WhatIf simulate_what_if(const std::string& change, const plan::Scenario& changed, const SweepOutcome& outcome,
                        const Advice& advice, const SimulateFn& simulate);

/// What `advise --nccl-log` fitted the box's collectives to: the log's largest size, its
/// measured bus bandwidth, and the simulated one before (the preset) and after the fit.
struct MeasuredComm {
  std::string file, op;
  int ranks = 0;
  std::int64_t size_bytes = 0;
  double measured_busbw_gbps = 0, preset_busbw_gbps = 0, fitted_busbw_gbps = 0;
};

/// What advise tries when no plan fits in GPU memory: DeepSpeed at ZeRO 1-3 with the optimizer in
/// host memory (Strategy::offload_optimizer), every other dimension as the default space has it.
SweepSpace offload_space();

/// The sweep of offload_space() and the fastest of its plans that fits.
struct OffloadAdvice {
  SweepOutcome outcome;
  std::optional<std::size_t> best;
};

/// The plain-words answer (several paragraphs, ~72 columns); with `measured`, first what the
/// collectives were fitted to; where no plan fits, what `offload` found.
std::string advise_text(const plan::Scenario& scenario, const SweepOutcome& outcome, const Advice& advice,
                        const std::vector<WhatIf>& what_ifs, const std::optional<MeasuredComm>& measured = std::nullopt,
                        const std::optional<OffloadAdvice>& offload = std::nullopt);

/// {"best": {…}, "best_zero3": {…}, "best_3d": {…}, "best_by_tp": [{"tp": t, "name": …,
/// "tokens_per_s": …, "vs_no_tp": ratio − 1 or null}, …], "tried": n, "fits": n}; null for a missing plan.
/// With `measured`, also "measured_comm": {"file", "op", "ranks", "size_bytes", "measured_busbw_gbps",
/// "preset_busbw_gbps", "fitted_busbw_gbps"}; with `offload`, "best_offload" (a plan or null).
void write_advice_json(std::ostream& out, const SweepOutcome& outcome, const Advice& advice,
                       const std::optional<MeasuredComm>& measured = std::nullopt,
                       const std::optional<OffloadAdvice>& offload = std::nullopt);

/// The interconnect between the GPUs of one server in words: "NVLink3 x12 (300 GB/s per direction)".
std::string describe_gpu_link(const hw::Cluster& cluster);

}  // namespace stepsim::sweep
