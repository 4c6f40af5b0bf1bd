// When two groups of GPUs look the same to a computation that reads the machine only through the
// routes between them: the same routes up to renaming links and servers. Stages of a pipeline,
// and the TP indices of a DP group, are such groups on a regular cluster, so a collective timed
// for one holds for the others; checked pair by pair, never assumed from the plan's layout (a
// rail-less fabric, a degraded NIC or an odd server count break the symmetry).
#pragma once

#include <utility>
#include <vector>

#include "hardware/router.hpp"

namespace stepsim::hw {

/// Whether asking `router` again for every pair in `pairs` (what a computation asked for:
/// Router::record_pairs), with each GPU from[i] renamed to[i], gets the same answers up to a
/// one-to-one renaming of links and of servers: as many routes, in the same order, each crossing
/// links that correspond one to one and have the same kind, rate and latency. The renamed GPUs
/// must also sit in servers that correspond one to one, and each must have outgoing links of the
/// same kinds and rates as the GPU it renames (a tuner reads a GPU's total send rate). A GPU of
/// `pairs` without a renaming, two renamed alike, or a number that is not a GPU of the cluster,
/// gives false.
bool same_up_to_renaming(const Router& router, const std::vector<std::pair<int, int>>& pairs, const std::vector<int>& from,
                         const std::vector<int>& to);

}  // namespace stepsim::hw
