// Internal to sim/plan: the groups a layer's non-TP collectives span on one pipeline stage, each
// mapped to its members among the stage's simulated ranks — the expert-parallel groups (inside
// DP, or folded over TP × DP with whole experts), DeepEP's two parts of them across servers (the
// rail of one local GPU index, the ranks in one server), and the context-parallel rings. Built
// once per stage; O(simulated ranks × group size).
#pragma once

#include <map>
#include <vector>

#include "sim/plan/stage_costs.hpp"

namespace stepsim::plan {

class Build;

/// [global ranks of a group] -> its simulated members of this stage (local ranks).
using GroupMembers = std::map<std::vector<int>, std::vector<int>>;

class LayerGroups {
 public:
  /// `stage_ranks`: the local ranks of the stage's simulated TP groups.
  LayerGroups(const Build& b, const std::vector<int>& stage_ranks);
  /// Requires: group is not LayerGroup::tp (TP groups are the stage's own).
  const GroupMembers& of(LayerGroup group) const;

 private:
  GroupMembers data_subgroups(const Build& b, const std::vector<int>& ranks, int size) const;
  GroupMembers ep_, cp_, rail_, server_;
};

}  // namespace stepsim::plan
