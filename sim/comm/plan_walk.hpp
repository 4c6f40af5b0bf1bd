// Coarse mode for algorithms without a folded form (tree, broadcast chain, direct sends): their
// step plan walked by lattice_walk.hpp (or, where that is slow, flow_walk.hpp) instead of the
// engine, whose tasks, streams and holds cost on top of the flows (a 256 MiB tree over 8 a100-pcie
// servers: 2.55 s at full fidelity, 2.33 s walked; over 32 single-GPU servers at 64 MiB: 1.57 s
// against 1.19 s).
// Internal to sim/comm; used by the nccl-tests table (perf_table.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hardware/router.hpp"
#include "sim/comm/lattice_walk.hpp"
#include "sim/comm/step_plan.hpp"
#include "sim/core/time.hpp"

namespace stepsim::comm {

/// What walking a plan with walk_max_min() may cost (lattice_walk.hpp), in flow-links touched:
/// 2^26 in all (~2 s), and beyond a first 2^22, 4096 per finished transfer. A ring lattice or a
/// tree over servers of 8 GPUs costs ~100-500 per transfer (a 128x8 tree of 1M transfers at
/// 256 MiB would need ~500M: declined on the total); a tree over 32 single-GPU servers ~15,000
/// (declined within ~0.2 s).
inline constexpr WalkBudget kWalkBudget{.total = std::int64_t{1} << 26, .allowance = std::int64_t{1} << 22, .per_job = 4096};

/// What the fallback walk on the engine's flow network may cost (flow_walk.hpp): 2^30 units
/// (~10 ns each here), judged by projection from 2^25 on, so that a walk that cannot fit gives up
/// within a second or two. Measured (units, time walked): a100-pcie 8x8 tree at 256 MiB 182M
/// (2.3 s); rtx4090 16x8 at 256 MiB 382M (5.5 s); 48 single-GPU DGX A100 servers at 64 MiB 595M
/// (3.0 s); 128 DGX A100s at 256 MiB 553M (8.3 s); 1024 single-GPU servers at 1 MiB 117M (1.4 s),
/// at 16 MiB 2049M (19.5 s: declined).
inline constexpr WalkBudget kFlowWalkBudget{.total = std::int64_t{1} << 30, .allowance = std::int64_t{1} << 25};

/// One route of a transfer as the walker takes it: the transfer's start latency on it (as the
/// engine's flow has) and each link's time per byte at its effective rate.
WalkRoute walk_route(const hw::Cluster& cluster, const hw::Route& route, const PlannedTransfer& transfer);

/// Step mode's time for `plan` (point-to-point transfers and joins, no folded ring) on the GPUs
/// `gpus`: the launch latency plus when the last rank is done. Walked over every link of every
/// route less the implied ones, which is step mode's max-min exactly: by walk_max_min() within
/// `budget`, else on the engine's flow network within `fallback` (flow_walk.hpp: faster where
/// each refill spans the whole plan, as in a tree over single-GPU servers, where every edge shares
/// a NIC with three others). nullopt where both would exceed their budgets, and the caller times
/// the plan on paper with estimate() (perf_table.cpp). Keeping only each route's most loaded links
/// instead is fast but 10-35 % off on PCIe boxes and single-GPU servers, so it is not offered.
std::optional<core::Duration> walk_step_plan(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan,
                                             const WalkBudget& budget = kWalkBudget, const WalkBudget& fallback = kFlowWalkBudget);

}  // namespace stepsim::comm
