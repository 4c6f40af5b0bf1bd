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
// every group's load on each shared link, and where the groups share one plan (rails alike) that
// plan is kept in copies, the paper laying out one group's transfers instead of all of them.
#pragma once

#include <optional>
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

/// Where `plans` are all one plan (the DP groups of alike TP indices: each group's ranks in the
/// same order), merge_plans() of them as that plan in copies, group g + 1 being group g's ranks
/// renamed (StepPlan::copies): its expanded() is merge_plans()'s plan, transfer for transfer and
/// rank for rank, and the paper times it from the first group where the routes rename as the
/// ranks do, instead of laying out every group's transfers. nullopt for fewer than two plans, plans
/// that differ, or plans already in copies or with a folded ring.
std::optional<StepPlan> merged_as_copies(const std::vector<const StepPlan*>& plans);

}  // namespace stepsim::comm
