// Coarse mode for algorithms without a folded form (tree, broadcast chain, direct sends): their
// step plan walked by lattice_walk.hpp instead of the engine, which over hundreds of ranks behind
// one fabric re-solves thousands of flows at every event (a 128-server tree all-reduce of 64 MiB
// ran for over two minutes). Internal to sim/comm; used by the nccl-tests table (perf_table.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hardware/router.hpp"
#include "sim/comm/lattice_walk.hpp"
#include "sim/comm/step_plan.hpp"
#include "sim/core/time.hpp"

namespace stepsim::comm {

/// What walking a plan may cost (lattice_walk.hpp): ~1 s in all, and beyond a first ~0.1 s, 512
/// flow-links per finished transfer. A ring lattice costs ~30 per step and a 16-server tree ~1000
/// (accepted within the allowance); a tree over 32 single-GPU servers ~19,000 (given up in ~0.1 s).
inline constexpr WalkBudget kWalkBudget{.total = std::int64_t{1} << 25, .allowance = std::int64_t{1} << 22, .per_job = 4096};

/// Step mode's time for `plan` (point-to-point transfers and joins, no folded ring) on the GPUs
/// `gpus`: the launch latency plus when the last rank is done. Walked over every link of every
/// route less the implied ones, which is step mode's max-min exactly; nullopt where that would
/// exceed the budget (a tree over single-GPU servers: every edge shares a NIC with three others,
/// so each refill spans the whole tree; 32 servers already take ~5 s), and the caller falls back
/// on estimate(). Keeping only each route's most loaded links instead is fast but 10-35 % off on
/// PCIe boxes and single-GPU servers, so it is not offered.
std::optional<core::Duration> walk_step_plan(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan,
                                             const WalkBudget& budget = kWalkBudget);

}  // namespace stepsim::comm
