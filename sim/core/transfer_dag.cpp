#include "sim/core/transfer_dag.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/core/dag_solve.hpp"

namespace stepsim::core {
namespace {

void check(const TransferDag& dag) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("transfer DAG: " + what); };
  if (dag.jobs.size() > UINT32_MAX) fail("more than 2^32 jobs");  // a flow names its job by a 32-bit TaskId
  if (dag.next_begin.size() != dag.jobs.size() + 1 || dag.next_begin.back() != static_cast<std::int64_t>(dag.next.size()))
    fail("successor offsets do not match the jobs");
  for (const auto n : dag.next)
    if (n < 0 || n >= static_cast<std::int64_t>(dag.jobs.size())) fail("a successor out of range");
  for (const auto& job : dag.jobs) {
    if (job.routes >= static_cast<int>(dag.routes.size())) fail("a job's routes out of range");
    if (job.routes >= 0 && job.slices < 1) fail("a moving job without slices");
  }
  for (const auto& kind : dag.routes)
    for (const auto& route : kind)
      for (const auto& c : route.links)
        if (c.link < 0 || !(c.ps_per_byte > 0) || !std::isfinite(c.ps_per_byte)) fail("a crossing without a link rate");
}

}  // namespace

void TransferDag::set_edges(const std::vector<std::pair<std::int64_t, std::int64_t>>& edges) {
  const auto count = static_cast<std::int64_t>(jobs.size());
  for (const auto& [before, after] : edges)
    if (before < 0 || before >= count || after < 0 || after >= count)
      throw std::invalid_argument("transfer DAG: an edge " + std::to_string(before) + " -> " + std::to_string(after) +
                                  " outside the " + std::to_string(count) + " jobs");
  next_begin.assign(jobs.size() + 1, 0);
  for (const auto& e : edges) ++next_begin[static_cast<std::size_t>(e.first) + 1];
  for (std::size_t j = 1; j < next_begin.size(); ++j) next_begin[j] += next_begin[j - 1];
  next.resize(edges.size());
  auto fill = next_begin;
  for (const auto& e : edges) next[static_cast<std::size_t>(fill[static_cast<std::size_t>(e.first)]++)] = e.second;
}

void drop_implied_links(std::vector<DagRoutes>& routes, std::size_t link_count) {
  std::vector<std::vector<int>> routes_on(link_count);  // link -> the routes (numbered in order) that cross it
  int number = 0;
  for (const auto& kind : routes)
    for (const auto& route : kind) {
      for (const auto& c : route.links) routes_on[static_cast<std::size_t>(c.link)].push_back(number);
      ++number;
    }
  for (auto& on : routes_on) on.erase(std::unique(on.begin(), on.end()), on.end());  // numbered in order: sorted
  std::vector<char> implied(link_count, 0), checked(link_count, 0);
  for (const auto& kind : routes)
    for (const auto& route : kind)
      for (const auto& a : route.links) {
        const auto ua = static_cast<std::size_t>(a.link);
        if (checked[ua]) continue;
        checked[ua] = 1;
        // A is full only when B is if B carries every flow A does, each at no less work per byte.
        for (const auto& b : route.links) {
          const auto ub = static_cast<std::size_t>(b.link);
          if (b.link == a.link || b.ps_per_byte < a.ps_per_byte * (1 - 1e-9)) continue;
          const bool mutual = routes_on[ua].size() == routes_on[ub].size() && b.ps_per_byte <= a.ps_per_byte * (1 + 1e-9);
          if (mutual && b.link > a.link) continue;  // of two that imply each other, the first stays
          if (std::includes(routes_on[ub].begin(), routes_on[ub].end(), routes_on[ua].begin(), routes_on[ua].end())) {
            implied[ua] = 1;
            break;
          }
        }
      }
  for (auto& kind : routes)
    for (auto& route : kind)
      std::erase_if(route.links, [&](const DagCrossing& c) { return implied[static_cast<std::size_t>(c.link)] != 0; });
}

std::int64_t flow_count(const TransferDag& dag) {
  const int common = common_slices(dag);
  std::int64_t total = 0;
  for (const auto& job : dag.jobs)
    if (job.routes >= 0)
      for (const auto& route : dag.routes[static_cast<std::size_t>(job.routes)])
        if (!route.links.empty()) total += job.slices / common;
  return total;
}

std::vector<double> finish_times(const TransferDag& dag, DagSolver solver) {
  check(dag);
  auto finish = solver == DagSolver::refills ? solve_by_refills(dag) : solve_on_flow_network(dag);
  for (std::size_t j = 0; j < dag.jobs.size(); ++j)
    if (std::isnan(finish[j])) throw std::invalid_argument("transfer DAG: job " + std::to_string(j) + " never released (a cycle)");
  return finish;
}

}  // namespace stepsim::core
