#include "sim/comm/network.hpp"

#include <algorithm>

namespace stepsim::comm {

const PlannedCollective* PlanCache::find(const CollectiveKey& key) const {
  const std::lock_guard lock(mutex_);
  const auto it = plans_.find(key);
  return it == plans_.end() ? nullptr : &it->second;
}

const PlannedCollective& PlanCache::keep(CollectiveKey key, PlannedCollective planned) {
  const std::lock_guard lock(mutex_);
  return plans_.try_emplace(std::move(key), std::move(planned)).first->second;
}

std::optional<core::Duration> PlanCache::find_estimate(const CollectiveKey& key) const {
  const std::lock_guard lock(mutex_);
  const auto it = estimates_.find(key);
  return it == estimates_.end() ? std::nullopt : std::optional<core::Duration>(it->second);
}

void PlanCache::keep_estimate(CollectiveKey key, core::Duration d) {
  const std::lock_guard lock(mutex_);
  estimates_.try_emplace(std::move(key), d);
}

Network::Network(core::Engine& engine, const hw::Cluster& cluster, const hw::Router& router, PlanCache* shared)
    : engine_(engine), cluster_(cluster), router_(router), shared_(shared && shared->serves(cluster) ? shared : nullptr) {
  links_.assign(cluster.links.size(), core::LinkId{kNotAdded});
}

core::LinkId Network::link(int index) const {
  core::LinkId& id = links_.at(static_cast<std::size_t>(index));
  if (id.value == kNotAdded) id = engine_.add_link(effective_bytes_per_s(cluster_.links[static_cast<std::size_t>(index)], cluster_.comm));
  return id;
}

std::optional<core::LinkId> Network::used_link(int index) const {
  const core::LinkId id = links_.at(static_cast<std::size_t>(index));
  return id.value == kNotAdded ? std::nullopt : std::optional<core::LinkId>(id);
}

core::RouteId Network::engine_route(const hw::Route& route) const {
  std::vector<core::LinkId> links;
  links.reserve(route.size());
  for (int l : route) links.push_back(link(l));
  return engine_.add_route(links);
}

const PlannedCollective* Network::planned(const CollectiveKey& key) const {
  if (shared_) return shared_->find(key);
  const auto it = planned_.find(key);
  return it == planned_.end() ? nullptr : &it->second;
}

const PlannedCollective& Network::remember(CollectiveKey key, PlannedCollective planned) {
  require_whole(planned.plan, "Network::remember");
  if (shared_) return shared_->keep(std::move(key), std::move(planned));
  // Never replaced once kept: callers hold pointers to kept plans (sim/plan's laid-out cache).
  return planned_.try_emplace(std::move(key), std::move(planned)).first->second;
}

std::optional<core::Duration> Network::estimated(const CollectiveKey& key) const {
  if (shared_) return shared_->find_estimate(key);
  const auto it = estimates_.find(key);
  return it == estimates_.end() ? std::nullopt : std::optional<core::Duration>(it->second);
}

void Network::remember_estimate(CollectiveKey key, core::Duration d) {
  if (shared_) shared_->keep_estimate(std::move(key), d);
  else estimates_.try_emplace(std::move(key), d);
}

double effective_bytes_per_s(const hw::Link& link, const hw::CommParams& params) {
  switch (link.kind) {
    case hw::LinkKind::nvlink: return link.bytes_per_s * params.nvlink_efficiency;
    case hw::LinkKind::pcie:
    case hw::LinkKind::socket: return link.bytes_per_s * params.pcie_efficiency;
    case hw::LinkKind::infiniband:
    case hw::LinkKind::ethernet: return link.bytes_per_s * params.network_efficiency;
    case hw::LinkKind::memory: return link.bytes_per_s * params.host_memory_efficiency;
  }
  return link.bytes_per_s;
}

std::vector<hw::Route> hop_routes(const hw::Router& router, int from, int to, Hop hop) {
  const auto& routes = router.routes(from, to);
  if (hop == Hop::full) return routes;
  std::vector<hw::Route> out;
  for (const auto& r : routes) {
    const hw::Route one{hop == Hop::up ? r.front() : r.back()};
    if (std::find(out.begin(), out.end(), one) == out.end()) out.push_back(one);
  }
  return out;
}

bool leaves_server(const hw::Cluster& cluster, const hw::Route& route) {
  return std::any_of(route.begin(), route.end(), [&](int l) {
    const auto kind = cluster.links[static_cast<std::size_t>(l)].kind;
    return kind == hw::LinkKind::infiniband || kind == hw::LinkKind::ethernet;
  });
}

std::int64_t transfer_latency_ps(const hw::Cluster& cluster, const hw::Route& route, const PlannedTransfer& transfer) {
  std::int64_t links = 0;
  for (int l : route) links += cluster.links[static_cast<std::size_t>(l)].latency_ps;
  return transfer_latency_ps(links, leaves_server(cluster, route), transfer);
}

std::int64_t transfer_latency_ps(std::int64_t link_latency_ps, bool leaves, const PlannedTransfer& transfer) {
  return (transfer.step_latency_ps + link_latency_ps + (leaves ? transfer.network_step_latency_ps : 0)) * transfer.latency_steps;
}

}  // namespace stepsim::comm
