#include "sim/plan/layer_groups.hpp"

#include <stdexcept>

#include "sim/plan/task_graph.hpp"

namespace stepsim::plan {

LayerGroups::LayerGroups(const Build& b, const std::vector<int>& stage_ranks) {
  const Strategy& st = b.in.st;
  if (st.ep > 1) {
    if (st.folds_experts_over_tp()) {
      for (int r : stage_ranks) ep_[b.in.grid.folded_ep_group(b.global_of[r], st.ep)].push_back(r);
    } else {
      ep_ = data_subgroups(b, stage_ranks, st.ep);
    }
  }
  if (st.moe_deepep && b.in.cost_in.ep_servers > 1) {
    const hw::Cluster& cluster = b.in.sc.cluster;
    for (const auto& [group, locals] : ep_)
      for (int r : locals) {
        const int gpu = b.global_of[r];
        std::vector<int> rail, server;
        for (int g : group) {
          if (cluster.local_index(g) == cluster.local_index(gpu)) rail.push_back(g);
          if (cluster.server_of(g) == cluster.server_of(gpu)) server.push_back(g);
        }
        rail_[rail].push_back(r);
        server_[server].push_back(r);
      }
  }
  if (b.in.grid.cp() > 1) cp_ = data_subgroups(b, stage_ranks, b.in.grid.cp());
}

const GroupMembers& LayerGroups::of(LayerGroup group) const {
  switch (group) {
    case LayerGroup::ep: return ep_;
    case LayerGroup::cp: return cp_;
    case LayerGroup::ep_rail: return rail_;
    case LayerGroup::ep_server: return server_;
    case LayerGroup::tp: break;
  }
  throw std::logic_error("LayerGroups::of(tp): TP groups are the stage's own");
}

// `size` consecutive data indices around each rank (EP inside DP, CP).
GroupMembers LayerGroups::data_subgroups(const Build& b, const std::vector<int>& ranks, int size) const {
  GroupMembers out;
  for (int r : ranks) out[b.in.grid.ep_group(b.global_of[r], size)].push_back(r);
  return out;
}

}  // namespace stepsim::plan
