// A collective's plan timed on paper, on an idle machine (collective.hpp's estimate() says what it
// assumes), and what the papers of plans over one group of GPUs share. Internal to sim/comm: the
// tuner (estimate.cpp) times every candidate so.
//
// A PaperMemo keeps the routes of each pair of ranks papers ask for, and, for plans in copies
// (StepPlan::copies), the renaming of links found so far. A tuner's candidates and an nccl-tests
// sweep's sizes ask for the same pairs again and again: a tree of 8,192 ranks for tens of
// thousands of pairs of its first copy, each checked against 7 more. Only a cache: the time on
// paper is the same with it as without (tests/sim/comm/step_plan_test.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "hardware/router.hpp"
#include "sim/comm/step_plan.hpp"
#include "sim/core/time.hpp"

namespace stepsim::comm {

struct PaperMemo {
  struct Pair {
    std::vector<hw::Route> routes;
    std::vector<std::int64_t> link_latency_ps;  ///< per route: its links' latencies, summed
    std::vector<bool> leaves;                   ///< per route: leaves_server()
    std::uint64_t paper = 0;                    ///< the last paper that asked for it
    bool renamed = false;                       ///< its copies' routes are `link_image`'s images
  };
  /// The router and group kept for: another one starts afresh.
  const hw::Router* router = nullptr;
  std::vector<int> gpus;
  std::unordered_map<std::int64_t, Pair> pairs;  ///< by (hop, src rank, dst rank)
  std::uint64_t papers = 0;                      ///< papers laid out, each one's stamp on its pairs
  /// The plans in copies the renaming below is for: `copies` copies renaming ranks by `copy_rank`.
  int copies = 1;
  std::vector<int> copy_rank;
  /// A renaming σ of links: each renamed pair's routes in copy g are its routes in copy g − 1 with
  /// every link l as σ(l) = link_image[l] (link_preimage the inverse; −1 where none is known).
  std::vector<int> link_image, link_preimage;
};

/// `plan` on the GPUs `gpus` on paper: each transfer takes its latency (a folded ring's from
/// `folded`, its folded_ring_latencies(), where set) plus the time its busiest link needs for all
/// that the transfers of its dependency level put there, along the longest dependency chain, and
/// no link carries its bytes faster than its rate. A plan in copies is timed from its first copy
/// where its routes rename as its ranks do, else expanded(): the same time to the picosecond, the
/// copies' bytes summed on each link in another order. `memo` is reset for another router or group.
core::Duration on_paper(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan,
                        const std::vector<std::optional<std::int64_t>>& folded, PaperMemo& memo);

}  // namespace stepsim::comm
