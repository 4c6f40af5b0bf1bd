// A collective's plan as a core::TransferDag: each transfer a job over the routes the router
// gives it, at each link's effective rate, after the transfer's start latency. Alone on an idle
// machine, solving that DAG is step mode's time without the engine, whose tasks, streams and holds
// cost on top of the flows.
// Internal to sim/comm; used by the nccl-tests table (perf_table.cpp) and the ring lattice
// (folded_ring.cpp).
#pragma once

#include <optional>
#include <vector>

#include "hardware/router.hpp"
#include "sim/comm/step_plan.hpp"
#include "sim/core/time.hpp"
#include "sim/core/transfer_dag.hpp"

namespace stepsim::comm {

/// One route of a transfer as a DAG job takes it: the transfer's start latency on it (as the
/// engine's flow has) and each link's time per byte at its effective rate.
core::DagRoute dag_route(const hw::Cluster& cluster, const hw::Route& route, const PlannedTransfer& transfer);

/// `plan` (point-to-point transfers and joins, no folded ring) on the GPUs `gpus` as a DAG whose
/// job i is transfer i, links that others imply dropped. Throws std::invalid_argument on a plan
/// with a folded ring (folded_ring.hpp times those).
core::TransferDag step_plan_dag(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan);

/// Step mode's time for `plan` alone on an idle machine: the launch latency plus when the last
/// rank is done, by solving step_plan_dag(); nullopt where idle_timing() says the DAG is too large
/// (the caller times the plan on paper with estimate()).
std::optional<core::Duration> step_plan_time(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan);

}  // namespace stepsim::comm
