// The way between a GPU and host memory, for what a framework moves there itself (ZeRO-Offload's
// gradients out and parameters back): GPU -> PCIe switches -> the CPU of its own socket, and on
// into that socket's memory node where the server models one (cluster_template.hpp). Not a GPU
// pair, so not the Router's business: the path is short, fixed, and asked for once per GPU.
#pragma once

#include "hardware/cluster.hpp"
#include "hardware/router.hpp"

namespace stepsim::hw {

/// Links from GPU `gpu` to the nearest CPU of its server (fewest links, through PCIe switches
/// only; ties to the lower node index), then into that CPU's memory node if it has one. Empty
/// when no CPU is reachable that way (a server drawn without one).
Route gpu_to_host(const Cluster& cluster, int gpu);
/// The same links the other way, memory (or CPU) to GPU.
Route host_to_gpu(const Cluster& cluster, int gpu);

}  // namespace stepsim::hw
