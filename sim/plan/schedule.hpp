// Pipeline schedules as pure data: for each stage, the ordered list of passes it runs in one
// step. A pass is F (forward), B (backward: input and weight gradient together, or input gradient
// only when the schedule splits it) or W (weight gradient) of one microbatch on one model chunk.
// The task builder turns each pass into tasks in this order on the stage's compute stream; the
// order is the only thing a schedule decides, the simulation finds the timing.
//
// Sources (each order checked in schedule_test.cpp against its textbook bubble):
// - gpipe: all forwards, then all backwards in the same microbatch order (Huang et al. 2019;
//   Megatron-LM forward_backward_no_pipelining order generalised to p stages).
// - 1f1b: PipeDream-Flush as Megatron-LM forward_backward_pipelining_without_interleaving:
//   warmup min(p−s−1, m) forwards, then F/B pairs, then the remaining backwards.
// - interleaved: Megatron-LM forward_backward_pipelining_with_interleaving (Narayanan et al. 2021):
//   virtual microbatch k runs chunk (k/p) mod v forwards, v−1−(k/p) mod v backwards, microbatch
//   (k/(p·v))·p + k mod p; warmup (p−s−1)·2 + (v−1)·p (all passes when m = p). Requires m mod p = 0.
// - zb-h1: Qi et al. 2024 (Zero Bubble, handcrafted ZB-H1): 1F1B order with B split into B and W;
//   stage s defers its first s weight-gradient passes (W of microbatch j follows the B of j + s),
//   and the deferred ones end the step. Same activation memory as 1F1B; bubble (p−1)(T_F+T_B−T_W).
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/plan/strategy.hpp"

namespace stepsim::plan {

enum class PassKind : std::uint8_t { forward, backward, weight };

struct Pass {
  PassKind kind = PassKind::forward;
  int microbatch = 0;
  int chunk = 0;  ///< model chunk on this stage; virtual stage = chunk·p + stage
  auto operator<=>(const Pass&) const = default;
};

struct PipelineSchedule {
  ScheduleKind kind = ScheduleKind::one_f_one_b;
  int stages = 1, microbatches = 1, chunks = 1;
  bool splits_weight_gradient = false;    ///< B is input-gradient only and W passes exist
  std::vector<std::vector<Pass>> passes;  ///< [stage] -> passes in issue order
};

/// Requires: p >= 1, m >= 1, v >= 1; interleaved: m % p == 0 (check_strategy reports it).
PipelineSchedule make_schedule(ScheduleKind kind, int stages, int microbatches, int chunks);

/// A pass by its place: passes[stage][index].
struct PassRef {
  int stage = 0;
  std::size_t index = 0;
  auto operator<=>(const PassRef&) const = default;
};

/// One data dependency of the pipeline: pass `to` needs what pass `from` produced. `hop`: they
/// are on different stages, so the activation (F) or input gradient (B) travels as a send/recv.
struct PassDependency {
  PassRef from, to;
  bool hop = false;
};

/// Every data dependency of the schedule, the one statement of the pipeline's rule: F of virtual
/// stage u needs F of u−1; B of u needs F of u and B of u+1; W needs B of the same pass (virtual
/// stage u = chunk·p + stage). Ordered by `from` (stage, then issue order), so the hops leaving a
/// stage come in the order its sends are issued. The task builder, ideal_makespan and the
/// bubble lesson all read it.
std::vector<PassDependency> pass_dependencies(const PipelineSchedule& schedule);

/// Where a stage's passes of one chunk start and end in its pass list: the index of the chunk's
/// last pass that finishes its gradients (W where the schedule splits them, else B), and of each
/// chunk's first forward and first backward ({F, B} per chunk; the list's size where none).
std::size_t last_pass_of_chunk(const PipelineSchedule& schedule, int stage, int chunk);
std::vector<std::array<std::size_t, 2>> first_passes_of_chunks(const PipelineSchedule& schedule, int stage);
/// The index of the stage's last pass that is not a forward.
std::size_t last_backward_index(const PipelineSchedule& schedule, int stage);

/// The textbook bubble: the time each stage idles in one step when every F takes t_f, B t_b and
/// W t_w (t_w = 0 unless the schedule splits W off B) and communication is free. GPipe and 1F1B
/// idle (p−1)(t_f+t_b) (Narayanan et al. 2021, eq. 1), interleaving with v chunks 1/v of that
/// (ibid., section 2.2), ZB-H1 (p−1)(t_f+t_b−t_w) (Qi et al. 2024, section 3).
double textbook_idle(ScheduleKind kind, int stages, int chunks, double t_f, double t_b, double t_w);
/// textbook_idle over the ideal step, idle + m·(t_f+t_b+t_w): (p−1)/(m+p−1) for 1F1B.
double textbook_bubble(ScheduleKind kind, int stages, int microbatches, int chunks, double t_f, double t_b, double t_w);

/// Makespan of a schedule when every F takes t_f, B t_b, W t_w and communication is free: the
/// analytic reference the tests compare the simulated step with.
std::int64_t ideal_makespan(const PipelineSchedule& schedule, std::int64_t t_f, std::int64_t t_b,
                            std::int64_t t_w);

}  // namespace stepsim::plan
