// Several collectives that start together on an otherwise idle machine and share its links: the
// DP groups of a stage (one per TP index) reducing the same bucket, which sim/plan times once per
// size in symmetric fidelity.
//
// One timing decision, the one timing_method.hpp makes for a single collective: rings (and
// hierarchical's ring phases) run as their folded flows in a scratch engine, a few flows per
// ring; other plans (trees, chains, direct sends) are one step plan over all the groups' ranks,
// solved as a transfer DAG within idle_timing()'s bound and timed on paper above it. A tree over
// 128 single-GPU servers for each of 8 DP groups is 500 thousand transfers that the engine
// re-solves at every event (minutes per bucket size); as one plan its on-paper time still sees
// every group's load on each shared link.
#pragma once

#include <vector>

#include "hardware/router.hpp"
#include "sim/comm/collective.hpp"
#include "sim/core/time.hpp"

namespace stepsim::comm {

/// A link of the router's cluster running at `factor` (> 0) of its rate: a degraded link.
struct LinkScale {
  int link = 0;
  double factor = 1.0;
};

/// Time from the common start until the last rank of the last of `requests` is done. With
/// degraded links every plan runs in the engine, which scales them (the DAG and the paper read
/// the cluster's rates). `tuned`, where given: per request, the coarse plan the tuner made for
/// exactly it (AlgorithmChoice::coarse_plan of its algorithm, protocol and size), or null; taken
/// as it is instead of planned again, its ring lattices being the costliest part. Requires: every
/// request valid for add_collective().
core::Duration concurrent_idle_time(const hw::Router& router, const std::vector<CollectiveRequest>& requests,
                                    const std::vector<LinkScale>& degraded = {},
                                    const std::vector<const PlannedCollective*>& tuned = {});

/// `plans` (no folded ring), each over its own `gpus`, as one plan over the concatenated GPUs
/// (written to `merged_gpus`): ranks and transfer indices shifted. Throws std::invalid_argument
/// unless there is one GPU list per plan, no plan has a folded ring, and all start after the same
/// launch latency.
StepPlan merge_plans(const std::vector<StepPlan>& plans, const std::vector<std::vector<int>>& gpus,
                     std::vector<int>& merged_gpus);

}  // namespace stepsim::comm
