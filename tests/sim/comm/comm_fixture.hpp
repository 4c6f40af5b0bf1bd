// Small hand-built clusters for sim/comm tests, so expected times can be derived by hand.
#pragma once

#include <vector>

#include "hardware/cluster.hpp"
#include "hardware/hardware_yaml.hpp"
#include "sim/comm/collective.hpp"
#include "sim/core/engine.hpp"

namespace stepsim::comm::testing {

/// n GPUs; link i→i+1 and i+1→i (mod n) of `bytes_per_s` each way, no link latency; efficiency 1,
/// launch 0, ring step latency `step_ps`, slices of `chunk` bytes.
inline hw::Cluster ring_cluster(int n, double bytes_per_s, std::int64_t step_ps, std::int64_t chunk = 1LL << 40) {
  hw::Cluster c;
  c.name = "ring";
  c.gpus_per_server = n;
  for (int g = 0; g < n; ++g) {
    c.nodes.push_back({hw::NodeKind::gpu, "gpu" + std::to_string(g), 0});
    c.gpu_nodes.push_back(g);
  }
  for (int g = 0; g < n; ++g) {
    hw::Link forward, back;
    forward.from = back.to = g;
    forward.to = back.from = (g + 1) % n;
    forward.bytes_per_s = back.bytes_per_s = bytes_per_s;
    c.links.push_back(forward);
    c.links.push_back(back);
  }
  c.comm = {.nvlink_efficiency = 1.0, .ring_step_latency_ps = step_ps, .launch_latency_ps = 0, .pipeline_chunk_bytes = chunk};
  return c;
}

/// n GPUs each joined to one PCIe switch by `bytes_per_s` each way; no latencies, efficiency 1.
inline hw::Cluster star_cluster(int n, double bytes_per_s) {
  hw::Cluster c = ring_cluster(n, bytes_per_s, 0);
  c.links.clear();
  c.nodes.push_back({hw::NodeKind::pcie_switch, "switch", 0});
  for (int g = 0; g < n; ++g) {
    hw::Link up, down;
    up.from = down.to = g;
    up.to = down.from = n;
    up.kind = down.kind = hw::LinkKind::pcie;
    up.bytes_per_s = down.bytes_per_s = bytes_per_s;
    c.links.push_back(up);
    c.links.push_back(down);
  }
  c.comm.pcie_efficiency = 1.0;
  return c;
}

/// Runs one collective per request in one fresh engine; returns each one's finish (the latest
/// member's), in microseconds.
inline std::vector<double> run_together(const hw::Router& router, const std::vector<CollectiveRequest>& requests) {
  core::Engine engine;
  Network net(engine, router.cluster(), router);
  std::vector<CollectiveTasks> tasks;
  for (const auto& r : requests) {
    std::vector<core::StreamId> streams;
    for (std::size_t i = 0; i < r.gpus.size(); ++i)
      streams.push_back(engine.add_stream(engine.add_device(), core::StreamKind::communication));
    tasks.push_back(add_collective(net, r, streams));
  }
  engine.run();
  std::vector<double> out;
  for (const auto& t : tasks) {
    double end = 0;
    for (auto m : t.members) end = std::max(end, static_cast<double>(engine.finish_of(m).ps) * 1e-6);
    out.push_back(end);
  }
  return out;
}

inline hw::ClusterShape shape(std::optional<int> nodes, std::optional<int> gpus_per_node) {
  hw::ClusterShape s;
  s.nodes = nodes;
  s.gpus_per_node = gpus_per_node;
  return s;
}

inline std::vector<int> first_gpus(int n) {
  std::vector<int> g;
  for (int i = 0; i < n; ++i) g.push_back(i);
  return g;
}

}  // namespace stepsim::comm::testing
