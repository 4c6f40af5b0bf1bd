// Parameters of the collective-communication model that belong to a machine: how much of each
// link's bandwidth a protocol achieves and what each algorithm step costs in latency. They are
// hardware data (YAML, calibratable from nccl-tests logs), never constants buried in sim/comm.
#pragma once

#include <cstdint>

namespace stepsim::hw {

/// NCCL's protocols (NCCL src/include/devcomm.h, NCCL_PROTO_LL/LL128/SIMPLE): Simple moves data in 512 KiB
/// buffer steps behind a memory fence; LL packs 4 data bytes with a 4-byte flag into every 8 B
/// store and LL128 120 data bytes with a flag into every 128 B line, so the receiver polls the
/// data itself: far lower latency per step, less bandwidth.
enum class Protocol { simple, ll128, ll };

/// What one protocol costs on a machine. NCCL's tuning model (src/graph/tuning.cc, 2.18-2.21):
/// baseLat per algorithm and protocol, hwLat per link type, algorithm and protocol, and the
/// bandwidth refinements it applies to Simple's bus bandwidth.
struct ProtocolCost {
  std::int64_t launch_latency_ps = 0;        ///< baseLat, once per collective
  std::int64_t ring_step_latency_ps = 0;     ///< hwLat, Ring, per ring step inside a server
  std::int64_t tree_step_latency_ps = 0;     ///< hwLat, Tree, per tree level inside a server
  std::int64_t network_step_latency_ps = 0;  ///< hwLat NET less the intra-server step it replaces
  double bandwidth_share = 1.0;              ///< of Simple's payload bandwidth
};

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
  // The low-latency protocols, which NCCL's tuner picks for small sizes. The fields above are
  // Simple's. Defaults: NCCL tuning.cc for NVLink. LL: baseLat Ring 6.6 us, hwLat Ring and Tree
  // 0.6 us, NET Ring 2.7 us (2.1 us over the NVLink step it replaces); bandwidth busBw/4 (Ring
  // all-reduce; 1/3.8 for Tree). LL128: baseLat 14 us, hwLat Ring 1.9 us, Tree 1.25 us, NET Ring
  // 4.0 us; bandwidth ×0.92 (120 of 128 bytes); NCCL enables it only where the GPUs of a server
  // talk over NVLink. A PCIe machine's preset gives its own (hwLat PCI: LL 1.0 us).
  ProtocolCost ll{.launch_latency_ps = 6'600'000, .ring_step_latency_ps = 600'000, .tree_step_latency_ps = 600'000,
                  .network_step_latency_ps = 2'100'000, .bandwidth_share = 0.25};
  ProtocolCost ll128{.launch_latency_ps = 14'000'000, .ring_step_latency_ps = 1'900'000,
                     .tree_step_latency_ps = 1'250'000, .network_step_latency_ps = 2'100'000,
                     .bandwidth_share = 0.92};
  /// Simple's cost from the fields above, or the low-latency protocol's.
  ProtocolCost cost(Protocol p) const {
    if (p == Protocol::ll) return ll;
    if (p == Protocol::ll128) return ll128;
    return {launch_latency_ps, ring_step_latency_ps, tree_step_latency_ps, network_step_latency_ps, 1.0};
  }
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
  // Host time of the calls a list-based collective makes per rank (torch.distributed all_gather
  // / reduce_scatter with one tensor per rank, the only form before PyTorch 1.9; see
  // Strategy::zero3_list_collectives): views made in Python (one an all-gather, two a
  // reduce-scatter) and a copy. Midpoints of the per-layer costs of jiahuanglin.xyz "From PyTorch
  // op to kernel launch": a view (tensor.narrow: bytecode ~1 us, pybind ~1 us, ATen dispatch
  // ~1-2 us) and a copy_ made in C++ by ProcessGroupNCCL (autograd layer ~1 us, dispatch ~1-2 us,
  // TensorIterator ~1-5 us, cudaMemcpyAsync ~1-3 us).
  std::int64_t host_view_call_ps = 3'500'000;
  std::int64_t host_copy_call_ps = 7'500'000;
  // Host time of one parameter's step of DeepSpeedCPUAdam under ZeRO-Offload, all of a server's
  // cores together (every rank of the server steps at once and they share them). DeepSpeed PR
  // #735 (Yazdani, 2021): "reduces the optimizer time from 56 seconds to 8.2 seconds to an 11.6B
  // parameter GPT2 model", 8.2 s / 11.6e9 = 707 ps. The PR names no CPU (the ZeRO-Offload
  // paper's machine was a DGX-2, 2x Xeon Platinum 8168); no other published timing names both
  // the CPU and the parameter count, so every machine starts from it. Measure yours: DeepSpeed's
  // wall_clock_breakdown prints optimizer_step per rank; that time / parameters of the server.
  std::int64_t cpu_adam_param_ps = 707;
};

}  // namespace stepsim::hw
