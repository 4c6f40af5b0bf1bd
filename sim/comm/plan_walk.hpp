// Coarse mode for algorithms without a folded form (tree, broadcast chain, direct sends): their
// step plan walked by lattice_walk.hpp instead of the engine, which over many ranks behind one
// fabric re-solves thousands of flows at every event (a 64 MiB tree all-reduce over 128
// single-GPU servers ran for over two minutes). Internal to sim/comm; used by the nccl-tests
// table (perf_table.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hardware/router.hpp"
#include "sim/comm/lattice_walk.hpp"
#include "sim/comm/step_plan.hpp"
#include "sim/core/time.hpp"

namespace stepsim::comm {

/// What walking a plan may cost (lattice_walk.hpp), in flow-links touched: 2^26 in all (~2 s),
/// and beyond a first 2^22, 4096 per finished transfer. A ring lattice or a tree over servers of 8
/// GPUs costs ~100-500 per transfer (a 128x8 tree of 1M transfers at 256 MiB would need ~500M:
/// declined on the total); a tree over 32 single-GPU servers ~15,000 (declined within ~0.2 s).
inline constexpr WalkBudget kWalkBudget{.total = std::int64_t{1} << 26, .allowance = std::int64_t{1} << 22, .per_job = 4096};

/// One route of a transfer as the walker takes it: the transfer's start latency on it (as the
/// engine's flow has) and each link's time per byte at its effective rate.
WalkRoute walk_route(const hw::Cluster& cluster, const hw::Route& route, const PlannedTransfer& transfer);

/// Step mode's time for `plan` (point-to-point transfers and joins, no folded ring) on the GPUs
/// `gpus`: the launch latency plus when the last rank is done. Walked over every link of every
/// route less the implied ones, which is step mode's max-min exactly; nullopt where that would
/// exceed the budget (a tree over single-GPU servers: every edge shares a NIC with three others,
/// so each refill spans the whole tree; 32 servers already take ~5 s), and the caller falls back
/// on the engine or on estimate() (perf_table.cpp). Keeping only each route's most loaded links
/// instead is fast but 10-35 % off on PCIe boxes and single-GPU servers, so it is not offered.
std::optional<core::Duration> walk_step_plan(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan,
                                             const WalkBudget& budget = kWalkBudget);

}  // namespace stepsim::comm
