#include "sim/plan/link_loads.hpp"

#include "sim/comm/network.hpp"

namespace stepsim::plan {

void LinkLoadRecorder::on_link_load(core::LinkId link, core::TimePoint at, double bytes_per_s) {
  if (link.value >= samples_.size()) samples_.resize(link.value + 1);
  auto& s = samples_[link.value];
  if (!s.empty() && s.back().bytes_per_s == bytes_per_s) return;  // no change: no new sample
  if (!s.empty() && s.back().t_ps == at.ps) {
    s.back().bytes_per_s = bytes_per_s;  // several changes at one instant: the last holds
    return;
  }
  s.push_back({at.ps, bytes_per_s});
}

std::vector<LinkLoad> LinkLoadRecorder::loads(const hw::Cluster& cluster, const comm::Network& network,
                                              const std::vector<LinkFault>& faults) const {
  std::vector<double> factor(cluster.links.size(), 1.0);
  for (const auto& f : faults)
    for (int l : f.links) factor[static_cast<std::size_t>(l)] *= f.bandwidth_factor;
  std::vector<LinkLoad> out;
  for (std::size_t i = 0; i < cluster.links.size(); ++i) {
    const auto used = network.used_link(static_cast<int>(i));
    const std::size_t id = used ? used->value : samples_.size();
    if (id >= samples_.size() || samples_[id].empty()) continue;  // carried nothing: no empty track
    const hw::Link& l = cluster.links[i];
    out.push_back({.name = cluster.nodes[static_cast<std::size_t>(l.from)].name + "->" +
                           cluster.nodes[static_cast<std::size_t>(l.to)].name + (l.label.empty() ? "" : " (" + l.label + ")"),
                   .capacity_bytes_per_s = comm::effective_bytes_per_s(l, cluster.comm) * factor[i],
                   .samples = samples_[id]});
  }
  return out;
}

}  // namespace stepsim::plan
