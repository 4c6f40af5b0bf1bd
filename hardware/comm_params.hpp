// Parameters of the collective-communication model that belong to a machine: how much of each
// link's bandwidth a protocol achieves and what each algorithm step costs in latency. They are
// hardware data (YAML, calibratable from nccl-tests logs), never constants buried in sim/comm.
#pragma once

#include <cstdint>

namespace stepsim::hw {

struct CommParams {
  // Fraction of a link's per-direction bandwidth that NCCL's Simple protocol moves as payload.
  double nvlink_efficiency = 0.8;
  double pcie_efficiency = 0.8;
  double network_efficiency = 0.9;
  // Fraction of host DRAM bandwidth that staged (no-P2P) transfers sustain, on `memory` links
  // (cluster_template.hpp). Unused unless the server has `host_memory`.
  double host_memory_efficiency = 0.8;
  // Per-step latency of one algorithm step (one ring hop, one tree level), picoseconds.
  std::int64_t ring_step_latency_ps = 5'000'000;
  std::int64_t tree_step_latency_ps = 5'000'000;
  std::int64_t network_step_latency_ps = 10'000'000;  ///< added per inter-server step
  // NVLS (in-switch reduction on NVSwitch, H100 and later).
  bool nvls = false;
  double nvls_efficiency = 0.8;
  std::int64_t nvls_latency_ps = 10'000'000;
  // Fixed cost of launching one collective (kernel launch + setup).
  std::int64_t launch_latency_ps = 5'000'000;
  // Pipeline slice of the step-by-step simulation: NCCL's Simple protocol moves one buffer slot
  // per step, 4 MiB buffer / 8 steps = 512 KiB (NCCL_BUFFSIZE, NCCL_STEPS in src/include/
  // collectives.h); sim/comm cuts each algorithm step into slices of this size (capped per
  // algorithm) so that later steps overlap earlier ones.
  std::int64_t pipeline_chunk_bytes = 512 * 1024;
  // Host-side time each pipeline pass (a forward or backward of one microbatch on one stage) spends
  // outside kernels when pp > 1: Megatron's p2p `_communicate` posts batch_isend_irecv, waits and
  // synchronizes the device before the pass can start. 1.5 ms: Zero Bubble's A100 runs (Qi et al.
  // 2024, Tables 4 and 6) measure steps ~3 ms per (F, B) slot longer than their own profiled kernel
  // times, the same for 1.5B to 28.3B models; a framework cost, so the default for every machine.
  std::int64_t pipeline_pass_overhead_ps = 1'500'000'000;
  // Host time per framework call (models::OpCost::fwd_host_calls; one per backward autograd
  // node): the framework's CPU thread issues every kernel and collective in program order, and a
  // kernel cannot start before it is issued, so narrow layers become CPU-bound. Eager PyTorch
  // spends ~5-25 us of CPU per op before the kernel is queued (Python, binding, autograd
  // recording, dispatcher, cudaLaunchKernel; jiahuanglin.xyz "From PyTorch op to kernel launch");
  // Megatron's module and autograd-function code adds to it. 0 turns the host stream off.
  std::int64_t host_call_overhead_ps = 30'000'000;
};

}  // namespace stepsim::hw
