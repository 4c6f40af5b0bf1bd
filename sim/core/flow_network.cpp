#include "sim/core/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/core/rounding.hpp"

namespace stepsim::core {

LinkId FlowNetwork::add_link(double capacity_bytes_per_s) {
  if (!(capacity_bytes_per_s > 0.0) || !std::isfinite(capacity_bytes_per_s))
    throw std::invalid_argument("add_link: capacity must be a finite number > 0 bytes/s, got " +
                                std::to_string(capacity_bytes_per_s));
  Link link;
  link.capacity = capacity_bytes_per_s;
  links_.push_back(std::move(link));
  return LinkId{static_cast<std::uint32_t>(links_.size() - 1)};
}

void FlowNetwork::scale_link(LinkId link, double factor) {
  if (!has_link(link))
    throw std::invalid_argument("scale_link: unknown link " + std::to_string(link.value) + " (there are " +
                                std::to_string(links_.size()) + ")");
  if (!(factor > 0.0) || !std::isfinite(factor))
    throw std::invalid_argument("scale_link: factor must be a finite number > 0, got " + std::to_string(factor));
  links_[link.value].capacity *= factor;
}

void FlowNetwork::mark_dirty(std::uint32_t link) {
  if (links_[link].dirty) return;
  links_[link].dirty = true;
  dirty_links_.push_back(link);
}

std::uint32_t FlowNetwork::start_flow(std::span<const LinkId> route, double bytes, TaskId task,
                                      std::int64_t now_ps) {
  std::uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f.route.clear();
  f.slot.clear();
  for (const LinkId l : route) {
    Link& link = links_[l.value];
    if (link.flows.empty()) link.busy_since_ps = now_ps;
    f.route.push_back(l.value);
    f.slot.push_back(static_cast<std::uint32_t>(link.flows.size()));
    link.flows.push_back(id);
    link.hop.push_back(static_cast<std::uint32_t>(f.route.size() - 1));
    mark_dirty(l.value);
  }
  // No link of the route can fill below capacity / hops on it (flow_component.cpp, levels).
  for (const std::uint32_t l : f.route)
    level_ = std::min(level_, links_[l].capacity / static_cast<double>(links_[l].flows.size()));
  new_flows_.push_back(id);
  f.bytes = f.remaining = bytes;
  f.rate = 0;
  f.updated_ps = now_ps;
  f.task = task;
  return id;
}

// Removes hop `hop` of `flow` from its link's list by moving the last entry into its place; the
// moved flow's slot for that link is found by position, so a route that repeats a link still works.
void FlowNetwork::unlink_hop(std::uint32_t flow, std::size_t hop) {
  Link& link = links_[flows_[flow].route[hop]];
  const std::uint32_t pos = flows_[flow].slot[hop];
  const auto last = static_cast<std::uint32_t>(link.flows.size() - 1);
  link.flows[pos] = link.flows[last];
  link.hop[pos] = link.hop[last];
  link.flows.pop_back();
  link.hop.pop_back();
  if (pos != last) flows_[link.flows[pos]].slot[link.hop[pos]] = pos;
}

void FlowNetwork::finish_flow(std::uint32_t flow, std::int64_t now_ps) {
  if (completions_.contains(flow)) completions_.erase(flow);
  Flow& f = flows_[flow];
  level_ = std::min(level_, f.rate);
  for (std::size_t hop = 0; hop < f.route.size(); ++hop) {
    unlink_hop(flow, hop);
    Link& link = links_[f.route[hop]];
    link.bytes += f.bytes;
    if (link.flows.empty()) link.busy_ps += now_ps - link.busy_since_ps;
    mark_dirty(f.route[hop]);
  }
  f.rate = 0;
  free_.push_back(flow);
}

void FlowNetwork::apply_rate(std::uint32_t flow, double rate, std::int64_t now_ps, std::uint64_t& seq,
                             TraceSink* sink) {
  Flow& f = flows_[flow];
  if (rate == f.rate) return;  // its completion key is still right
  if (!(rate > 0.0))
    throw std::logic_error("internal: flow of task " + std::to_string(f.task.value) + " got rate " +
                           std::to_string(rate) + " bytes/s");
  f.remaining -= f.rate * static_cast<double>(now_ps - f.updated_ps) * 1e-12;
  f.updated_ps = now_ps;
  f.rate = rate;
  const std::int64_t left_ps = f.remaining < kDoneBytes ? 0 : ceil_transfer_ps(f.remaining, rate);
  completions_.set(flow, EventKey{now_ps + left_ps, ++seq});
  if (sink) sink->on_flow_rate(f.task, TimePoint{now_ps}, rate);
}

// Summed afresh in list order rather than adjusted by differences, so no rounding accumulates
// over millions of changes (is_saturated() reads these).
void FlowNetwork::update_loads(std::int64_t now_ps, TraceSink* sink) {
  for (const std::uint32_t l : comp_links_) {
    Link& link = links_[l];
    double load = 0;
    for (const std::uint32_t fl : link.flows) load += flows_[fl].rate;
    if (load == link.load) continue;
    link.load = load;
    if (sink) sink->on_link_load(LinkId{l}, TimePoint{now_ps}, load);
  }
}

void FlowNetwork::recompute(std::int64_t now_ps, std::uint64_t& seq, TraceSink* sink) {
  seed_component();
  do {
    build_problem();
    solver_.solve(problem_, rates_);
  } while (couple_filled_residuals());
  for (std::size_t i = 0; i < comp_flows_.size(); ++i) apply_rate(comp_flows_[i], rates_[i], now_ps, seq, sink);
  update_loads(now_ps, sink);
  level_ = kNoLevel;
  ++rate_updates_;
}

}  // namespace stepsim::core
