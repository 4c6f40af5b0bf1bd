// The hardware graph bound into an engine: one engine link per directed Cluster link that
// something uses (added on first use), with the capacity the collective protocol achieves on it
// (bytes/s × the CommParams efficiency of its kind), and the routes a planned transfer takes. The Network refers to its Engine, Cluster and
// Router; all three must outlive it. Everything sim/comm puts on one Engine goes through one
// Network, so collectives that share a link share it max-min fairly.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "hardware/cluster.hpp"
#include "hardware/router.hpp"
#include "sim/comm/ops.hpp"
#include "sim/comm/step_plan.hpp"
#include "sim/core/engine.hpp"

namespace stepsim::comm {

/// A collective as add_collective() planned it: the algorithm it chose, its transfers, and the
/// latencies of its folded rings. The same collective (op, group, size, algorithm) recurs for
/// every layer and micro-batch of a training step; the Network keeps each plan so that the tuner
/// and the ring lattices (folded_ring.hpp, up to seconds for 512 ranks) run once per shape.
struct PlannedCollective {
  Algorithm chosen = Algorithm::ring;
  StepPlan plan{};  ///< plan.protocol is the protocol chosen
  std::vector<std::optional<std::int64_t>> folded_latency_ps{};
  /// Where the whole plan's ring lattice was solved as one DAG: when it ends, idle, from the plan's
  /// start (folded_ring.hpp, FoldedTiming).
  std::optional<std::int64_t> lattice_end_ps{};
};

struct CollectiveKey {
  Op op = Op::all_reduce;
  Algorithm algorithm = Algorithm::automatic;
  std::optional<hw::Protocol> protocol{};
  std::int64_t bytes = 0;
  int root = 0;
  bool coarse = false;
  std::vector<int> gpus{};
  auto operator<=>(const CollectiveKey&) const = default;
};

/// Collective plans and idle-machine estimates shared by the Networks of several simulations on
/// one cluster (the plans of a sweep): each is a function of the cluster, its routes and the
/// request alone, so each distinct collective is tuned, planned and estimated once for all of
/// them. Safe to use from several threads; a plan once kept is never changed or moved.
class PlanCache {
 public:
  explicit PlanCache(const hw::Cluster& cluster) : cluster_(&cluster) {}
  /// Whether it keeps plans of `cluster` (the same object it was made for).
  bool serves(const hw::Cluster& cluster) const { return &cluster == cluster_; }
  const PlannedCollective* find(const CollectiveKey& key) const;
  /// Keeps `planned` unless a plan of `key` is kept already; returns the one kept.
  const PlannedCollective& keep(CollectiveKey key, PlannedCollective planned);
  /// The same for estimate()s of a collective on the idle machine.
  std::optional<core::Duration> find_estimate(const CollectiveKey& key) const;
  void keep_estimate(CollectiveKey key, core::Duration d);

 private:
  const hw::Cluster* cluster_;
  mutable std::mutex mutex_;
  std::map<CollectiveKey, PlannedCollective> plans_;
  std::map<CollectiveKey, core::Duration> estimates_;
};

class Network {
 public:
  /// Adds a cluster link to `engine` when something first uses it (link()), so that a scratch
  /// network for one collective on a 16,384-GPU cluster holds that collective's links, not the
  /// cluster's. Requires: router was built on `cluster`.
  /// `shared`: plans and estimates kept for other simulations of the same cluster, used and added
  /// to (ignored when it serves another cluster).
  Network(core::Engine& engine, const hw::Cluster& cluster, const hw::Router& router, PlanCache* shared = nullptr);

  core::Engine& engine() const { return engine_; }
  const hw::Cluster& cluster() const { return cluster_; }
  const hw::Router& router() const { return router_; }
  /// The engine link of cluster link `index`, added to the engine now if nothing used it before.
  core::LinkId link(int index) const;
  /// The engine link of cluster link `index` if something used it, else nothing.
  std::optional<core::LinkId> used_link(int index) const;
  /// `route` kept by the engine (Engine::add_route), its links added as link() does.
  core::RouteId engine_route(const hw::Route& route) const;

  /// The plan kept for `key`, or null.
  const PlannedCollective* planned(const CollectiveKey& key) const;
  /// Keeps `planned` under `key` unless a plan is kept there already; returns the one kept.
  const PlannedCollective& remember(CollectiveKey key, PlannedCollective planned);
  /// An estimate() kept for `key` (comm::estimate(Network&, …)), or none; and keeping one.
  std::optional<core::Duration> estimated(const CollectiveKey& key) const;
  void remember_estimate(CollectiveKey key, core::Duration d);

 private:
  core::Engine& engine_;
  const hw::Cluster& cluster_;
  const hw::Router& router_;
  static constexpr std::uint32_t kNotAdded = UINT32_MAX;
  mutable std::vector<core::LinkId> links_;  // per cluster link: its engine link, or kNotAdded
  std::map<CollectiveKey, PlannedCollective> planned_;
  std::map<CollectiveKey, core::Duration> estimates_;
  PlanCache* shared_ = nullptr;
};

/// Payload bandwidth of a link under NCCL's Simple protocol: bytes_per_s × the efficiency of its
/// kind (nvlink_efficiency; pcie_efficiency for PCIe and CPU-socket links; network_efficiency
/// for InfiniBand and Ethernet; host_memory_efficiency for host-memory links).
double effective_bytes_per_s(const hw::Link& link, const hw::CommParams& params);

/// The routes (cluster link indices) a transfer from GPU `from` to GPU `to` takes: all
/// equal-cost routes for Hop::full; their first links for Hop::up; their last links for Hop::down
/// (each distinct link once). Requires: from != to.
std::vector<hw::Route> hop_routes(const hw::Router& router, int from, int to, Hop hop);

/// Whether a route uses an InfiniBand or Ethernet link (it leaves the server).
bool leaves_server(const hw::Cluster& cluster, const hw::Route& route);

/// Start latency of a planned point-to-point transfer on `route`: latency_steps × (its step
/// latency plus the links' own latencies, plus its network step latency when it leaves the
/// server). A folded ring's is folded_ring_latencies()'.
std::int64_t transfer_latency_ps(const hw::Cluster& cluster, const hw::Route& route, const PlannedTransfer& transfer);
/// The same for a route whose links' latencies sum to `link_latency_ps` and that `leaves` its server.
std::int64_t transfer_latency_ps(std::int64_t link_latency_ps, bool leaves, const PlannedTransfer& transfer);

}  // namespace stepsim::comm
