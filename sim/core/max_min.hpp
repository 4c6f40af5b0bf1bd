// Max-min fair rates of flows sharing links, by progressive filling (Bertsekas & Gallager, "Data
// Networks", 2nd ed., section 6.5.2): raise every unfrozen flow's rate together until some link is
// full; freeze the flows crossing it at that link's fair share; repeat on what is left.
//
// Units: capacities and rates in bytes/s. A route lists link indices; a flow that lists a link
// twice uses it twice. Result invariants (what the randomized test checks): no link carries more
// than its capacity (up to rounding), and every flow crosses at least one *bottleneck*: a link that
// is full and on which no flow has a higher rate.
//
// Complexity: O(H + L log L) for L links and H route hops in total, in practice: links wait in a
// min-heap keyed by their fair share (cap_left / unfrozen flows), which only grows as flows freeze,
// so a link is re-queued only when popped with a stale key.
// The solver owns scratch space so that the engine, which solves once per timestamp, does not
// allocate; one solver must not be used from two threads at once.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace stepsim::core {

/// One max-min problem in flat (CSR) form: flow f crosses route_links[route_begin[f] ..
/// route_begin[f + 1]). Requires: every capacity > 0, every route non-empty, every index in range.
struct MaxMinProblem {
  std::vector<double> capacity;                 ///< bytes/s per link
  std::vector<std::uint32_t> route_begin{0};    ///< flow count + 1 offsets into route_links
  std::vector<std::uint32_t> route_links;       ///< link indices

  std::size_t flow_count() const { return route_begin.size() - 1; }
  void clear() {
    capacity.clear();
    route_begin.assign(1, 0);
    route_links.clear();
  }
  /// Closes the route of the flow whose links were just appended to route_links.
  void end_flow() { route_begin.push_back(static_cast<std::uint32_t>(route_links.size())); }
};

class MaxMinSolver {
 public:
  /// Fills rates[f] (bytes/s) for every flow of `problem`.
  void solve(const MaxMinProblem& problem, std::vector<double>& rates);

 private:
  void index_links(const MaxMinProblem& problem);
  void freeze_link(const MaxMinProblem& problem, std::uint32_t link, double share, std::vector<double>& rates);
  double share_of(std::uint32_t link) const;

  std::vector<double> cap_left_;               ///< capacity not yet given to frozen flows
  std::vector<std::uint32_t> unfrozen_;        ///< route hops of unfrozen flows per link
  std::vector<std::uint32_t> link_begin_;      ///< CSR: flows crossing each link
  std::vector<std::uint32_t> link_flows_;
  std::vector<std::uint8_t> frozen_;
  std::vector<std::pair<double, std::uint32_t>> heap_;  ///< (share, link), min on top
};

/// Convenience form of MaxMinSolver::solve, for tests and one-off use: routes[f] lists the links
/// flow f crosses. Throws std::invalid_argument on an empty route, an index out of range or a
/// capacity <= 0.
std::vector<double> max_min_rates(const std::vector<double>& capacities,
                                  const std::vector<std::vector<std::uint32_t>>& routes);

}  // namespace stepsim::core
