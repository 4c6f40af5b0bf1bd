// Internal to sim/comm: the PlanInput of a request on a cluster (servers of its GPUs, the
// cluster's CommParams).
#pragma once

#include "hardware/cluster.hpp"
#include "sim/comm/collective.hpp"
#include "sim/comm/step_plan.hpp"

namespace stepsim::comm {

PlanInput plan_input(const hw::Cluster& cluster, const CollectiveRequest& request);

}  // namespace stepsim::comm
