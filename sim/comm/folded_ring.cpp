#include "sim/comm/folded_ring.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "sim/comm/network.hpp"

namespace stepsim::comm {
namespace {

using HopRoutes = std::vector<std::vector<hw::Route>>;  // per hop p (ring[p] → ring[p+1]): its routes

HopRoutes hop_routes_of(const hw::Router& router, const std::vector<int>& gpus, const PlannedTransfer& t) {
  const std::size_t n = t.ring.size();
  HopRoutes hops;
  hops.reserve(n);
  for (std::size_t p = 0; p < n; ++p)
    hops.push_back(hop_routes(router, gpus[static_cast<std::size_t>(t.ring[p])],
                              gpus[static_cast<std::size_t>(t.ring[(p + 1) % n])], Hop::full));
  return hops;
}

// Dependency depth, as estimate() counts it (a join adds none): folded rings of one depth run at once.
std::vector<int> levels_of(const StepPlan& plan) {
  std::vector<int> level;
  level.reserve(plan.transfers.size());
  for (const auto& t : plan.transfers) {
    int depth = 0;
    for (int a : t.after) depth = std::max(depth, level[static_cast<std::size_t>(a)] + (t.is_join ? 0 : 1));
    level.push_back(depth);
  }
  return level;
}

double step_bytes(const PlannedTransfer& t) {
  return static_cast<double>(t.bytes) * t.wire_factor / static_cast<double>(std::max(1, t.latency_steps));
}

// Per hop p of a ring, in picoseconds: d = one step's start latency, busy = the time its busiest
// link needs for one step of every folded ring at this level (the link's share of the period),
// alone = the time that link needs for this hop's own bytes of one step.
struct HopTimes {
  std::vector<double> d, busy, alone, others;  // others: busy − alone on that same link
};

HopTimes hop_times(const hw::Cluster& cluster, const PlannedTransfer& ring, const HopRoutes& hops,
                   const std::vector<double>& link_step_bytes) {
  const PlannedTransfer one_step{.step_latency_ps = ring.step_latency_ps};
  HopTimes h;
  for (const auto& routes : hops) {
    std::unordered_map<int, double> own;  // link -> this hop's bytes per step on it
    double d = 0;
    for (const auto& r : routes) {
      d = std::max(d, static_cast<double>(transfer_latency_ps(cluster, r, one_step)));
      for (int l : r) own[l] += step_bytes(ring) / static_cast<double>(routes.size());
    }
    double busy = 0, alone = 0, others = 0;
    for (const auto& [l, bytes] : own) {
      const double ps_per_byte = 1e12 / effective_bytes_per_s(cluster.links[static_cast<std::size_t>(l)], cluster.comm);
      const double link_busy = link_step_bytes[static_cast<std::size_t>(l)] * ps_per_byte;
      if (link_busy > busy) busy = link_busy, alone = bytes * ps_per_byte, others = link_busy - alone;
    }
    h.d.push_back(d), h.busy.push_back(busy), h.alone.push_back(alone), h.others.push_back(others);
  }
  return h;
}

// T = max_p F(S−1, p), the recurrence of folded_ring.hpp: a step crosses hop p in `cross` after
// its data arrives, and follows the previous step on p's link by `busy`.
double lattice_time_ps(const HopTimes& h, const std::vector<double>& cross, int steps) {
  const std::size_t n = h.d.size();
  std::vector<double> f(n), next(n);
  for (std::size_t p = 0; p < n; ++p) f[p] = h.d[p] + cross[p];
  for (int s = 1; s < steps; ++s) {
    for (std::size_t p = 0; p < n; ++p) next[p] = std::max(f[(p + n - 1) % n] + h.d[p] + cross[p], f[p] + h.busy[p]);
    std::swap(f, next);
  }
  return *std::max_element(f.begin(), f.end());
}

// How long one step takes to cross each hop when the hop's link also carries other hops' steps,
// each present part of the ring's period λ: processor sharing stretches a job of size x to
// x / (1 − ρ) under a load ρ of others (Kleinrock 1967, M/G/1-PS), here ρ = others / λ. λ, the
// time per step of the whole ring, is its cycle mean (every hop's d + cross, over n hops that
// hold n steps between them) or its busiest link, whichever is longer; a few rounds settle it.
std::vector<double> crossing_times(const HopTimes& h) {
  constexpr double kMaxLoad = 0.9;  // the step's own share never falls below a tenth
  const double n = static_cast<double>(h.d.size());
  const double busiest = *std::max_element(h.busy.begin(), h.busy.end());
  std::vector<double> cross = h.alone;
  for (int round = 0; round < 8; ++round) {
    double cycle = 0;
    for (std::size_t p = 0; p < h.d.size(); ++p) cycle += h.d[p] + cross[p];
    const double period = std::max(busiest, cycle / n);
    for (std::size_t p = 0; p < h.d.size(); ++p)
      cross[p] = h.alone[p] / (1.0 - std::min(kMaxLoad, h.others[p] / period));
  }
  return cross;
}

// Start latency of one folded ring given the per-step bytes every link carries at its level.
std::int64_t fill_latency_ps(const hw::Cluster& cluster, const PlannedTransfer& ring, const HopRoutes& hops,
                             const std::vector<double>& link_step_bytes) {
  const HopTimes h = hop_times(cluster, ring, hops, link_step_bytes);
  const double bytes_time = ring.latency_steps * *std::max_element(h.busy.begin(), h.busy.end());
  return std::llround(std::max(0.0, lattice_time_ps(h, crossing_times(h), ring.latency_steps) - bytes_time));
}

}  // namespace

std::vector<hw::Route> planned_routes(const hw::Router& router, const std::vector<int>& gpus, const PlannedTransfer& t) {
  if (t.is_join) return {};
  if (t.ring.empty())
    return hop_routes(router, gpus[static_cast<std::size_t>(t.src)], gpus[static_cast<std::size_t>(t.dst)], t.hop);
  const HopRoutes hops = hop_routes_of(router, gpus, t);
  std::size_t subrings = 1;
  for (const auto& h : hops) subrings = std::max(subrings, h.size());
  std::vector<hw::Route> out(subrings);
  for (std::size_t k = 0; k < subrings; ++k)
    for (const auto& h : hops) out[k].insert(out[k].end(), h[k % h.size()].begin(), h[k % h.size()].end());
  return out;
}

std::vector<std::optional<std::int64_t>> folded_ring_latencies(const hw::Router& router, const std::vector<int>& gpus,
                                                               const StepPlan& plan) {
  std::vector<std::optional<std::int64_t>> out(plan.transfers.size());
  // Step-mode plans (every collective outside coarse mode) have no folded ring: nothing to do.
  if (std::none_of(plan.transfers.begin(), plan.transfers.end(), [](const auto& t) { return !t.ring.empty(); }))
    return out;
  const hw::Cluster& cluster = router.cluster();
  const auto level = levels_of(plan);
  std::vector<HopRoutes> hops(plan.transfers.size());
  std::unordered_map<int, std::vector<double>> link_step_bytes;  // by level
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    if (t.ring.empty()) continue;
    hops[i] = hop_routes_of(router, gpus, t);
    auto& load = link_step_bytes.try_emplace(level[i], cluster.links.size(), 0.0).first->second;
    for (const auto& routes : hops[i])
      for (const auto& r : routes)
        for (int l : r) load[static_cast<std::size_t>(l)] += step_bytes(t) / static_cast<double>(routes.size());
  }
  for (std::size_t i = 0; i < plan.transfers.size(); ++i)
    if (!plan.transfers[i].ring.empty())
      out[i] = fill_latency_ps(cluster, plan.transfers[i], hops[i], link_step_bytes.at(level[i]));
  return out;
}

}  // namespace stepsim::comm
