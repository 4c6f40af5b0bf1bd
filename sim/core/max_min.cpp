#include "sim/core/max_min.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

namespace stepsim::core {

namespace {
using HeapEntry = std::pair<double, std::uint32_t>;
// Min-heap on (share, link): among equal shares the lower link index goes first, so the result
// does not depend on heap internals. A function object, so the heap algorithms inline it.
struct Larger {
  bool operator()(const HeapEntry& a, const HeapEntry& b) const { return b < a; }
};
}  // namespace

void MaxMinSolver::index_links(const MaxMinProblem& problem) {
  const std::size_t links = problem.capacity.size();
  link_begin_.assign(links + 1, 0);
  for (const std::uint32_t l : problem.route_links) ++link_begin_[l + 1];
  for (std::size_t l = 0; l < links; ++l) link_begin_[l + 1] += link_begin_[l];
  link_flows_.resize(problem.route_links.size());
  unfrozen_.assign(links, 0);  // doubles as the fill cursor, ending as the hop count per link
  for (std::uint32_t f = 0; f < problem.flow_count(); ++f) {
    for (std::uint32_t h = problem.route_begin[f]; h < problem.route_begin[f + 1]; ++h) {
      const std::uint32_t l = problem.route_links[h];
      link_flows_[link_begin_[l] + unfrozen_[l]++] = f;
    }
  }
}

double MaxMinSolver::share_of(std::uint32_t link) const {
  return std::max(cap_left_[link], 0.0) / unfrozen_[link];
}

void MaxMinSolver::freeze_link(const MaxMinProblem& problem, std::uint32_t link, double share,
                               std::vector<double>& rates) {
  for (std::uint32_t i = link_begin_[link]; i < link_begin_[link + 1]; ++i) {
    const std::uint32_t f = link_flows_[i];
    if (frozen_[f]) continue;
    frozen_[f] = 1;
    rates[f] = share;
    for (std::uint32_t h = problem.route_begin[f]; h < problem.route_begin[f + 1]; ++h) {
      const std::uint32_t l = problem.route_links[h];
      cap_left_[l] -= share;
      --unfrozen_[l];
    }
  }
}

void MaxMinSolver::solve(const MaxMinProblem& problem, std::vector<double>& rates) {
  const std::size_t links = problem.capacity.size();
  rates.assign(problem.flow_count(), 0.0);
  index_links(problem);
  cap_left_.assign(problem.capacity.begin(), problem.capacity.end());
  frozen_.assign(problem.flow_count(), 0);
  heap_.clear();
  for (std::uint32_t l = 0; l < links; ++l)
    if (unfrozen_[l] > 0) heap_.emplace_back(share_of(l), l);
  std::make_heap(heap_.begin(), heap_.end(), Larger{});
  // Freezing flows at the smallest share s never lowers another link's share: (c - k·s)/(n - k)
  // >= c/n when s <= c/n. So keys only go stale upward, and a link is re-queued only when it is
  // popped with an outdated key (lazy increase-key), instead of after every change.
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Larger{});
    const auto [key, link] = heap_.back();
    heap_.pop_back();
    if (unfrozen_[link] == 0) continue;
    const double share = share_of(link);
    if (share > key) {
      heap_.emplace_back(share, link);
      std::push_heap(heap_.begin(), heap_.end(), Larger{});
      continue;
    }
    freeze_link(problem, link, share, rates);
  }
}

std::vector<double> max_min_rates(const std::vector<double>& capacities,
                                  const std::vector<std::vector<std::uint32_t>>& routes) {
  MaxMinProblem problem;
  for (std::size_t l = 0; l < capacities.size(); ++l)
    if (!(capacities[l] > 0.0))
      throw std::invalid_argument("max_min_rates: link " + std::to_string(l) + " has capacity " +
                                  std::to_string(capacities[l]) + "; expected > 0");
  problem.capacity = capacities;
  for (std::size_t f = 0; f < routes.size(); ++f) {
    if (routes[f].empty()) throw std::invalid_argument("max_min_rates: flow " + std::to_string(f) + " has an empty route");
    for (const std::uint32_t l : routes[f]) {
      if (l >= capacities.size())
        throw std::invalid_argument("max_min_rates: flow " + std::to_string(f) + " crosses link " +
                                    std::to_string(l) + " but there are " + std::to_string(capacities.size()));
      problem.route_links.push_back(l);
    }
    problem.end_flow();
  }
  MaxMinSolver solver;
  std::vector<double> rates;
  solver.solve(problem, rates);
  return rates;
}

}  // namespace stepsim::core
