// What the papers of plans over one group of GPUs share (estimate.cpp): the routes of each pair of
// ranks they ask for, and, for plans in copies (StepPlan::copies), the renaming of links found so
// far. A tuner's candidates and an nccl-tests sweep's sizes ask for the same pairs again and
// again: a tree of 8,192 ranks for 32,766 pairs of its first copy, each checked against 7 more.
// Only a cache: the time on paper is the same with it as without. Internal to sim/comm.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "hardware/router.hpp"

namespace stepsim::comm {

struct PaperMemo {
  struct Pair {
    std::vector<hw::Route> routes;
    std::vector<std::int64_t> link_latency_ps;  ///< per route: its links' latencies, summed
    std::vector<bool> leaves;                   ///< per route: leaves_server()
    std::uint64_t paper = 0;                    ///< the last paper that asked for it
    bool renamed = false;                       ///< its copies' routes are `link_image`'s images
  };
  std::vector<int> gpus;                        ///< the group kept for; another one starts afresh
  std::unordered_map<std::int64_t, Pair> pairs; ///< by (hop, src rank, dst rank)
  std::uint64_t papers = 0;
  /// The renaming σ of links under which each renamed pair's copy g routes are copy g − 1's,
  /// for plans whose copies rename ranks by `copy_rank`; −1 where not found (estimate.cpp).
  std::vector<int> copy_rank;
  std::vector<int> link_image, link_source;
};

}  // namespace stepsim::comm
