// Internal to sim/plan: measuring a finished Build (metrics.cpp) and its memory (memory_timeline.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/plan/task_graph.hpp"

namespace stepsim::plan {

struct RankTimes {
  std::int64_t step_ps = 0;
  std::vector<std::int64_t> busy_ps, idle_ps, stall_ps;       ///< per local rank
  std::vector<std::int64_t> host_bound_ps;                    ///< per local rank: GPU idle, host busy
  std::vector<std::int64_t> offload_ps;                       ///< per local rank: GPU idle, offload busy
  std::vector<std::array<std::int64_t, kCommClasses>> exposed_ps;        ///< per local rank, by CommClass
};

RankTimes measure_ranks(const Build& b);
void fill_headline(const Build& b, const RankTimes& t, StepResult& r);

/// Reserve kept free of the plan's own tensors: CUDA context, cuBLAS/NCCL workspaces and the
/// caching allocator's fragmentation. Our assumption, not a measurement: 1 GiB (a PyTorch CUDA
/// context with cuBLAS and NCCL typically takes 0.5–1 GiB) plus 5 % of capacity.
std::int64_t memory_reserve_bytes(std::int64_t capacity);
/// Fills peak memory, the breakdown at the peak, fits / memory_note, and (detail) timelines.
void fill_memory(const Build& b, StepResult& r);
/// Fills tasks and ranks (detail).
void fill_detail(const Build& b, const RankTimes& t, StepResult& r);

}  // namespace stepsim::plan
