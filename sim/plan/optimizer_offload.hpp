// DeepSpeed's ZeRO-Offload (zero_optimization.offload_optimizer.device: cpu; Ren et al., USENIX
// ATC'21), as deepspeed/runtime/zero/stage_1_and_2.py and stage3.py run it (Strategy::
// offload_optimizer):
// - Gradients leave the GPU as each reduction of them ends (a bucket's reduce-scatter, ZeRO-3's
//   per layer), on the stream that reduced them (reduction_stream), the rank's slice over PCIe to
//   host memory. At the accumulation boundary it goes in fp32, 4 B an element (async_inplace_copy_
//   grad_to_fp32_buffer_from_gpu: .float() on the GPU, then copy_). ZeRO-1 reduces at the
//   boundary only. ZeRO-2/3 reduce every micro-step: the first sends its 16-bit slice (2 B); each
//   later one brings the sum so far back (2 B), adds on the GPU and sends the new sum out (2 B, or
//   4 B at the boundary) (async_accumulate_grad_in_cpu_via_gpu; stage3.py partition_grads).
// - The step: DeepSpeedCPUAdam on the host thread (hw::CommParams::cpu_adam_param_ps a parameter,
//   every rank of a server stepping its shard at once on the server's cores), then the updated
//   16-bit partition back over PCIe (2 B; through a pinned 16-bit buffer since DeepSpeed PR
//   #7309), which ZeRO-1/2's parameter all-gather waits for (ZeRO-3 gathers in the next forward).
// With ZeRO-Infinity's parameter offload (Strategy::offload_param) the 16-bit partition stays in
// host memory: each all-gather of it first copies the rank's partition to the GPU, on the stream
// of the gather (partitioned_param_coordinator: ds_tensor moved to the device before the
// all-gather), and the step copies nothing back (the CPU's Adam updates it in place).
// The copies are flows on the GPU's own PCIe route to its socket (hw::gpu_to_host), so they share
// those links with everything else on them. In symmetric fidelity the ranks not simulated add no
// flows there.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/ids.hpp"
#include "sim/plan/task_graph.hpp"

namespace stepsim::plan {

/// Where a reduction of gradients falls among the step's micro-steps.
enum class MicroStep { only, first, middle, last };
/// The micro-step a backward is, from whether it is the step's first and whether its last.
MicroStep micro_step(bool first, bool last);

/// Parameters whose optimizer state one rank of `stage` holds and steps: dense parameters over
/// the shard group, routed experts over their replicas (ZeRO ≥ 1), or all of the stage's.
std::int64_t optimizer_shard_params(const Build& b, int stage);

/// One per Build (Build::offload()): it keeps each simulated rank's routes to and from host memory
/// and each server's optimizer parameters, found on first use.
class OptimizerOffload {
 public:
  explicit OptimizerOffload(Build& b) : b_(b) {}
  /// Rank `local`'s slice of `elements` gradients (already its share) to host memory after
  /// `reduced`, as micro-step `when` moves it (ZeRO-1: always at the boundary). Returns the last
  /// copy.
  core::TaskId gradients_out(int local, core::TaskId reduced, std::int64_t elements, MicroStep when, int layer, int mb);
  /// The optimizer step of rank `local` of `stage`, after `after`: the CPU's Adam, then the 16-bit
  /// parameters back. Returns the copy the parameters' all-gather (or the step's end) waits for.
  core::TaskId step(int local, int stage, core::TaskId after);
  /// Parameter offload: rank `local`'s `bytes` of a parameter partition copied to the GPU on its
  /// `slot` stream after `after`, before the all-gather that follows it there.
  core::TaskId parameters_in(int local, Slot slot, std::int64_t bytes, core::TaskId after, int layer, int mb);

 private:
  core::TaskId copy(int local, bool to_host, std::int64_t bytes, int layer, int mb, Slot slot = Slot::dp);
  /// The sum of optimizer_shard_params over the GPUs of `global`'s server: what its CPU steps.
  std::int64_t server_params(int global);

  /// A rank's way to host memory and back, as routes kept by the engine, with the links' latency.
  struct HostWay {
    core::RouteId out, in;
    core::Duration latency;
  };
  const HostWay& way(int local);

  Build& b_;
  std::vector<std::optional<HostWay>> ways_;             // [local rank]
  std::vector<std::optional<std::int64_t>> server_params_;  // [server]
};

}  // namespace stepsim::plan
