#include "sim/comm/folded_ring.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>

#include "sim/comm/network.hpp"
#include "sim/core/rounding.hpp"

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

// A folded ring as its step lattice sees it. Per hop: the start latency of one step; its routes,
// each a flow of the hop's step (equal-cost routes split the bytes, as step mode splits each
// transfer over them) over the links that can hold it back; and `busy`, the time the hop's
// busiest link needs for one step of every ring at the level. For the round-by-round walk, the
// hop's bottlenecks: the links with the most work per step from every folded ring at the level
// (staged PCIe routes have ties), each with the time it needs for this hop's own step.
struct Crossing {
  int link = 0;
  double work = 0;  // ps to move the flow's bytes at the link's full rate
};

struct RouteFlow {
  double bytes = 0;
  std::vector<Crossing> links{};
};

struct LatticeRing {
  int steps = 0;
  std::vector<double> d{};
  std::vector<std::vector<RouteFlow>> flows{};
  std::vector<std::vector<Crossing>> crossings{};
  std::vector<double> busy{};
};

double ps_per_byte(const hw::Cluster& cluster, int link) {
  return 1e12 / effective_bytes_per_s(cluster.links[static_cast<std::size_t>(link)], cluster.comm);
}

LatticeRing lattice_ring(const hw::Cluster& cluster, const PlannedTransfer& ring, const HopRoutes& hops,
                         const std::vector<double>& link_step_bytes) {
  const PlannedTransfer one_step{.step_latency_ps = ring.step_latency_ps};
  LatticeRing out{.steps = ring.latency_steps};
  for (const auto& routes : hops) {
    double d = 0, busy = 0;
    const double route_bytes = step_bytes(ring) / static_cast<double>(routes.size());
    std::map<int, double> own;  // link -> this hop's work per step on it
    std::vector<RouteFlow> flows;
    for (const auto& r : routes) {
      d = std::max(d, static_cast<double>(transfer_latency_ps(cluster, r, one_step)));
      RouteFlow flow{.bytes = route_bytes};
      for (int l : r) {
        flow.links.push_back({l, route_bytes * ps_per_byte(cluster, l)});
        own[l] += route_bytes * ps_per_byte(cluster, l);
        busy = std::max(busy, link_step_bytes[static_cast<std::size_t>(l)] * ps_per_byte(cluster, l));
      }
      flows.push_back(std::move(flow));
    }
    std::vector<Crossing> bottlenecks;
    for (const auto& [l, work] : own)
      if (link_step_bytes[static_cast<std::size_t>(l)] * ps_per_byte(cluster, l) >= busy * (1 - 1e-9)) bottlenecks.push_back({l, work});
    out.d.push_back(d), out.flows.push_back(std::move(flows)), out.crossings.push_back(std::move(bottlenecks));
    out.busy.push_back(busy);
  }
  return out;
}

// Drops from every route the links whose max-min constraint another link of the same route
// implies: A is redundant when every route that crosses A also crosses B and B is no faster
// (then Σ over A's flows of work_A·rate ≤ Σ over B's of work_B·rate, so A is full only when B is).
// Exact for max-min, and it leaves on most routes only the links that are shared or slowest; of
// links that imply each other, the first stays.
void drop_implied_links(std::vector<LatticeRing>& rings, const hw::Cluster& cluster) {
  std::vector<std::vector<int>> routes_on(cluster.links.size());  // link -> the routes (numbered below) that cross it
  int route = 0;
  for (const auto& r : rings)
    for (const auto& hop : r.flows)
      for (const auto& flow : hop) {
        for (const auto& c : flow.links) routes_on[static_cast<std::size_t>(c.link)].push_back(route);
        ++route;
      }
  for (auto& on : routes_on) {
    std::sort(on.begin(), on.end());
    on.erase(std::unique(on.begin(), on.end()), on.end());
  }
  std::vector<char> implied(cluster.links.size(), 0), checked(cluster.links.size(), 0);
  for (const auto& r : rings)
    for (const auto& hop : r.flows)
      for (const auto& flow : hop)
        for (const auto& a : flow.links) {
          const auto ua = static_cast<std::size_t>(a.link);
          if (checked[ua]) continue;
          checked[ua] = 1;
          for (const auto& b : flow.links) {
            const auto ub = static_cast<std::size_t>(b.link);
            if (b.link == a.link || b.work < a.work * (1 - 1e-9)) continue;
            const bool same = routes_on[ua].size() == routes_on[ub].size() && b.work <= a.work * (1 + 1e-9);
            if (same && b.link > a.link) continue;  // of two that imply each other, the first stays
            if (std::includes(routes_on[ub].begin(), routes_on[ub].end(), routes_on[ua].begin(), routes_on[ua].end())) {
              implied[ua] = 1;
              break;
            }
          }
        }
  for (auto& r : rings)
    for (auto& hop : r.flows)
      for (auto& flow : hop) std::erase_if(flow.links, [&](const Crossing& c) { return implied[static_cast<std::size_t>(c.link)] != 0; });
}

// A bottleneck link that only one hop of the level crosses serves that hop's steps one after
// another, so all such links of a hop finish its step at the same time (ties have equal work):
// one of them stands for the rest in the round-by-round walk.
void keep_one_private_crossing(std::vector<LatticeRing>& rings, std::size_t link_count) {
  std::vector<int> hops_on(link_count, 0);
  for (const auto& r : rings)
    for (const auto& crossings : r.crossings)
      for (const auto& c : crossings) ++hops_on[static_cast<std::size_t>(c.link)];
  for (auto& r : rings)
    for (auto& crossings : r.crossings) {
      bool kept_private = false;
      std::erase_if(crossings, [&](const Crossing& c) {
        if (hops_on[static_cast<std::size_t>(c.link)] != 1) return false;
        if (kept_private) return true;
        kept_private = true;
        return false;
      });
    }
}

// Every step of every hop of every ring at a level is a job: ready d_p after step s−1 arrived from
// hop p−1, then one fluid flow per route of the hop, the job done when all have arrived. Rates
// are max-min fair on bytes over every link of the routes (Bertsekas & Gallager, Data Networks
// §6.5.2, progressive filling), as step mode's flows are in the engine: a hop staged through the
// CPU that one link holds back leaves the rest of its share of the others to the hops there.
// Rates change only at a join or a leave, and only for the flows that reach it through shared
// links, which are refilled. Per ring: when its last step has arrived everywhere.
std::vector<double> lattice_times_by_max_min(const std::vector<LatticeRing>& rings, std::size_t link_count) {
  struct Flow {
    double left = 1, rate = 0, t = 0;  // fraction of its bytes still to move; per ps; as of t
    double scheduled_rate = -1;        // the rate its pending finish event was computed with
    std::uint64_t version = 0;
    std::uint32_t seen = 0;
    bool fixed = false;
  };
  struct Event {
    double t = 0;
    bool is_finish = false;  // else: a job becomes ready
    std::int64_t id = 0;     // the flow that finishes, or the job that becomes ready
    std::uint64_t version = 0;
    bool operator>(const Event& o) const { return t > o.t; }
  };
  std::int64_t routes_max = 1;  // flow = job · routes_max + route
  for (const auto& r : rings)
    for (const auto& hop : r.flows) routes_max = std::max(routes_max, static_cast<std::int64_t>(hop.size()));
  std::vector<std::int64_t> first_job(rings.size() + 1, 0);
  for (std::size_t i = 0; i < rings.size(); ++i)
    first_job[i + 1] = first_job[i] + static_cast<std::int64_t>(rings[i].steps) * static_cast<std::int64_t>(rings[i].d.size());
  std::vector<Flow> flows(static_cast<std::size_t>(first_job.back() * routes_max));
  std::vector<int> routes_left(static_cast<std::size_t>(first_job.back()), 0);  // per job
  std::vector<std::vector<std::int64_t>> on(link_count);                         // link -> its flows
  std::vector<std::uint32_t> link_seen(link_count, 0);
  std::vector<double> capacity(link_count), weight(link_count);
  std::uint32_t stamp = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::vector<double> out(rings.size(), 0.0);
  auto hop_of = [&](std::int64_t job) {
    const auto i = static_cast<std::size_t>(std::upper_bound(first_job.begin(), first_job.end(), job) - first_job.begin() - 1);
    return std::pair{i, static_cast<std::size_t>((job - first_job[i]) % static_cast<std::int64_t>(rings[i].d.size()))};
  };
  auto flow_of = [&](std::int64_t flow) -> const RouteFlow& {
    const auto [i, p] = hop_of(flow / routes_max);
    return rings[i].flows[p][static_cast<std::size_t>(flow % routes_max)];
  };
  auto arrived = [&](std::int64_t job, double t) {
    const auto [i, p] = hop_of(job);
    const auto n = static_cast<std::int64_t>(rings[i].d.size());
    const std::int64_t s = (job - first_job[i]) / n, q = (static_cast<std::int64_t>(p) + 1) % n;
    out[i] = std::max(out[i], t);
    if (s + 1 < rings[i].steps) events.push({t + rings[i].d[static_cast<std::size_t>(q)], false, first_job[i] + (s + 1) * n + q});
  };
  std::vector<std::int64_t> group;
  std::vector<int> group_links, open_links, filled;
  auto see_link = [&](int l) {
    if (link_seen[static_cast<std::size_t>(l)] == stamp) return;
    link_seen[static_cast<std::size_t>(l)] = stamp;
    group_links.push_back(l);
  };
  // Brings every flow connected to `seeds` through shared links up to `now`, retires those that
  // are done, and refills the rest.
  auto refill = [&](const std::vector<int>& seeds, double now) {
    ++stamp;
    group.clear(), group_links.clear();
    for (int l : seeds) see_link(l);
    for (std::size_t k = 0; k < group_links.size(); ++k)
      for (std::int64_t f : on[static_cast<std::size_t>(group_links[k])]) {
        auto& flow = flows[static_cast<std::size_t>(f)];
        if (flow.seen == stamp) continue;
        flow.seen = stamp, group.push_back(f);
        for (const auto& c : flow_of(f).links) see_link(c.link);
      }
    std::erase_if(group, [&](std::int64_t f) {
      auto& flow = flows[static_cast<std::size_t>(f)];
      flow.left -= flow.rate * (now - flow.t), flow.t = now, flow.fixed = false;
      if (flow.left > 1e-9) return false;
      for (const auto& c : flow_of(f).links) std::erase(on[static_cast<std::size_t>(c.link)], f);
      ++flow.version;
      if (--routes_left[static_cast<std::size_t>(f / routes_max)] == 0) arrived(f / routes_max, now);
      return true;
    });
    // Progressive filling in bytes per ps: every flow's rate rises alike until a link is full; the
    // flows on it keep that rate; repeat with the rest. Work per byte on a link is work/bytes.
    for (int l : group_links) capacity[static_cast<std::size_t>(l)] = 1, weight[static_cast<std::size_t>(l)] = 0;
    for (std::int64_t f : group) {
      const auto& route = flow_of(f);
      for (const auto& c : route.links) weight[static_cast<std::size_t>(c.link)] += c.work / route.bytes;
    }
    open_links = group_links;
    std::size_t unfixed = group.size();
    while (unfixed > 0) {
      std::erase_if(open_links, [&](int l) { return weight[static_cast<std::size_t>(l)] <= 0; });
      if (open_links.empty()) break;
      double level = std::numeric_limits<double>::infinity();
      for (int l : open_links) level = std::min(level, capacity[static_cast<std::size_t>(l)] / weight[static_cast<std::size_t>(l)]);
      // Links that fill at the same level (a symmetric ring has many) are fixed together.
      filled.clear();
      for (int l : open_links)
        if (capacity[static_cast<std::size_t>(l)] <= level * weight[static_cast<std::size_t>(l)] * (1 + 1e-12)) filled.push_back(l);
      level = std::max(0.0, level);
      for (int l : filled) {
        for (std::int64_t f : on[static_cast<std::size_t>(l)]) {
          auto& flow = flows[static_cast<std::size_t>(f)];
          if (flow.fixed) continue;
          const auto& route = flow_of(f);
          flow.fixed = true, flow.rate = level / route.bytes, --unfixed;
          for (const auto& c : route.links) {
            capacity[static_cast<std::size_t>(c.link)] -= c.work / route.bytes * level;
            weight[static_cast<std::size_t>(c.link)] -= c.work / route.bytes;
          }
        }
        weight[static_cast<std::size_t>(l)] = 0;
      }
    }
    // A flow whose rate did not change keeps its finish event: only changed ones are pushed,
    // which keeps the heap to about one live event per flow.
    for (std::int64_t f : group) {
      auto& flow = flows[static_cast<std::size_t>(f)];
      if (flow.rate == flow.scheduled_rate) continue;
      flow.scheduled_rate = flow.rate;
      // Whole picoseconds, rounded up, as the engine times a flow (sim/core/rounding.hpp): symmetric
      // rings then tie exactly where step mode's flows do, and which of two near-equal crossings
      // ends first (what sets the sharing from there on) is decided the same way.
      const double when = flow.rate > 0 ? now + static_cast<double>(core::ceil_ps(flow.left / flow.rate)) : now;
      events.push({when, true, f, ++flow.version});
    }
  };
  for (std::size_t i = 0; i < rings.size(); ++i)
    for (std::size_t p = 0; p < rings[i].d.size() && rings[i].steps > 0; ++p)
      events.push({rings[i].d[p], false, first_job[i] + static_cast<std::int64_t>(p)});
  // Events of one instant (a symmetric ring's steps start and end together) share one refill.
  std::vector<int> seeds;
  while (!events.empty()) {
    const double now = events.top().t;
    seeds.clear();
    while (!events.empty() && events.top().t <= now) {
      const Event e = events.top();
      events.pop();
      if (e.is_finish) {
        auto& flow = flows[static_cast<std::size_t>(e.id)];
        if (e.version != flow.version) continue;
        flow.left = 0;  // this flow's end, whatever rounding says
        for (const auto& c : flow_of(e.id).links) seeds.push_back(c.link);
        continue;
      }
      const auto [i, p] = hop_of(e.id);
      const auto& routes = rings[i].flows[p];
      for (std::size_t r = 0; r < routes.size(); ++r) {
        const std::int64_t f = e.id * routes_max + static_cast<std::int64_t>(r);
        flows[static_cast<std::size_t>(f)].t = now;
        routes_left[static_cast<std::size_t>(e.id)] += routes[r].links.empty() ? 0 : 1;
        for (const auto& c : routes[r].links) on[static_cast<std::size_t>(c.link)].push_back(f), seeds.push_back(c.link);
      }
      if (routes_left[static_cast<std::size_t>(e.id)] == 0) arrived(e.id, now);  // a hop that crosses no link arrives when ready
    }
    if (!seeds.empty()) refill(seeds, now);
  }
  return out;
}

// The same lattice walked round by round, for levels with more than kEventLatticeJobs jobs, where
// the max-min walk would cost seconds, on each hop's bottleneck links only. Within a step, the crossings of each link share it by processor sharing from
// when they are ready; what the link still owes earlier steps joins them as one more crossing,
// and a hop's step follows its previous one by at least `busy`. Steps of different rounds never
// share a link here, so rings whose steps drift apart in time come out a little fast (a few % in
// the band where latency and bytes weigh alike; tests/sim/comm/folded_ring_test.cpp). O(J·k).
std::vector<double> lattice_times_by_step(const std::vector<LatticeRing>& rings, std::size_t link_count) {
  struct Timed {
    double arrival = 0, work = 0, finish = 0;
    std::size_t job = 0;
  };
  // Processor sharing of one link among crossings that arrive at known times.
  std::vector<std::pair<double, std::size_t>> active;  // share's scratch: remaining work, crossing
  auto share = [&active](std::vector<Timed>& c) {
    std::sort(c.begin(), c.end(), [](const Timed& a, const Timed& b) { return a.arrival < b.arrival; });
    active.clear();
    double t = 0;
    std::size_t next = 0;
    while (next < c.size() || !active.empty()) {
      if (active.empty()) t = std::max(t, c[next].arrival);
      while (next < c.size() && c[next].arrival <= t) active.emplace_back(c[next].work, next), ++next;
      const double k = static_cast<double>(active.size());
      double least = active.front().first;
      for (const auto& a : active) least = std::min(least, a.first);
      const double dt = next < c.size() ? std::min(least * k, c[next].arrival - t) : least * k;
      for (auto& a : active) a.first -= dt / k;
      t += dt;
      const double done = least * 1e-9;
      for (const auto& a : active)
        if (a.first <= done) c[a.second].finish = t;
      std::erase_if(active, [&](const auto& a) { return a.first <= done; });
    }
  };
  // Slots: every (ring, hop), flattened; per link, the slots that cross it (the same every step).
  std::vector<std::size_t> first_slot(rings.size() + 1, 0);
  for (std::size_t i = 0; i < rings.size(); ++i) first_slot[i + 1] = first_slot[i] + rings[i].d.size();
  const std::size_t slots = first_slot.back();
  std::vector<int> steps_of(slots);
  std::vector<std::vector<std::pair<std::size_t, double>>> users(link_count);  // (slot, work)
  std::vector<int> used;
  for (std::size_t i = 0; i < rings.size(); ++i)
    for (std::size_t p = 0; p < rings[i].d.size(); ++p) {
      steps_of[first_slot[i] + p] = rings[i].steps;
      for (const auto& x : rings[i].crossings[p]) {
        auto& u = users[static_cast<std::size_t>(x.link)];
        if (u.empty()) used.push_back(x.link);
        u.emplace_back(first_slot[i] + p, x.work);
      }
    }
  std::vector<double> arrived(slots, 0.0), ready(slots, 0.0), done(slots, 0.0), link_free(link_count, 0.0);
  std::vector<Timed> c;
  int steps = 0;
  for (const auto& r : rings) steps = std::max(steps, r.steps);
  for (int s = 0; s < steps; ++s) {
    for (std::size_t i = 0; i < rings.size(); ++i) {
      if (s >= rings[i].steps) continue;
      const std::size_t n = rings[i].d.size(), base = first_slot[i];
      for (std::size_t p = 0; p < n; ++p) {
        ready[base + p] = (s == 0 ? 0.0 : arrived[base + (p + n - 1) % n]) + rings[i].d[p];
        done[base + p] = ready[base + p];  // a hop that crosses no link arrives when ready
      }
    }
    for (int l : used) {
      c.clear();
      for (const auto& [slot, work] : users[static_cast<std::size_t>(l)])
        if (s < steps_of[slot]) c.push_back({.arrival = ready[slot], .work = work, .job = slot});
      if (c.empty()) continue;
      auto& free = link_free[static_cast<std::size_t>(l)];
      if (c.size() == 1 && free <= c.front().arrival) {  // a lone crossing on an idle link
        free = c.front().arrival + c.front().work;
        done[c.front().job] = std::max(done[c.front().job], free);
        continue;
      }
      double first = c.front().arrival;
      for (const auto& x : c) first = std::min(first, x.arrival);
      if (free > first) c.push_back({.arrival = first, .work = free - first, .job = slots});
      share(c);
      for (const auto& x : c) {
        free = std::max(free, x.finish);
        if (x.job < slots) done[x.job] = std::max(done[x.job], x.finish);
      }
    }
    for (std::size_t i = 0; i < rings.size(); ++i) {
      if (s >= rings[i].steps) continue;
      for (std::size_t slot = first_slot[i]; slot < first_slot[i + 1]; ++slot)
        arrived[slot] = std::max(done[slot], (s == 0 ? 0.0 : arrived[slot]) + rings[i].busy[slot - first_slot[i]]);
    }
  }
  std::vector<double> out;
  for (std::size_t i = 0; i < rings.size(); ++i)
    out.push_back(first_slot[i] == first_slot[i + 1] ? 0.0
                                                     : *std::max_element(arrived.begin() + static_cast<std::ptrdiff_t>(first_slot[i]),
                                                                         arrived.begin() + static_cast<std::ptrdiff_t>(first_slot[i + 1])));
  return out;
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
                                                               const StepPlan& plan, std::int64_t event_jobs) {
  std::vector<std::optional<std::int64_t>> out(plan.transfers.size());
  // Step-mode plans (every collective outside coarse mode) have no folded ring: nothing to do.
  if (std::none_of(plan.transfers.begin(), plan.transfers.end(), [](const auto& t) { return !t.ring.empty(); }))
    return out;
  const hw::Cluster& cluster = router.cluster();
  const auto level = levels_of(plan);
  std::map<int, std::vector<std::size_t>> rings_at;  // level -> its folded rings, which run at once
  std::vector<HopRoutes> hops(plan.transfers.size());
  for (std::size_t i = 0; i < plan.transfers.size(); ++i)
    if (!plan.transfers[i].ring.empty()) {
      hops[i] = hop_routes_of(router, gpus, plan.transfers[i]);
      rings_at[level[i]].push_back(i);
    }
  for (const auto& [lvl, members] : rings_at) {
    std::vector<double> link_step_bytes(cluster.links.size(), 0.0);
    for (std::size_t i : members)
      for (const auto& routes : hops[i])
        for (const auto& r : routes)
          for (int l : r) link_step_bytes[static_cast<std::size_t>(l)] += step_bytes(plan.transfers[i]) / static_cast<double>(routes.size());
    std::vector<LatticeRing> rings;
    std::int64_t jobs = 0;
    for (std::size_t i : members) {
      rings.push_back(lattice_ring(cluster, plan.transfers[i], hops[i], link_step_bytes));
      jobs += static_cast<std::int64_t>(rings.back().steps) * static_cast<std::int64_t>(rings.back().d.size());
    }
    std::vector<double> lattice;
    if (jobs <= event_jobs) {
      drop_implied_links(rings, cluster);
      lattice = lattice_times_by_max_min(rings, cluster.links.size());
    } else {
      keep_one_private_crossing(rings, cluster.links.size());
      lattice = lattice_times_by_step(rings, cluster.links.size());
    }
    // Every folded flow of the level ends at the slowest ring's T when idle. Were each to end at
    // its own T, the rings whose lattice finished early would leave their links to the others in
    // the engine and pull the collective's end forward to about the earliest T (a100-pcie 2x8,
    // 2 MiB: 303 µs against the slowest ring's 320).
    const double slowest = *std::max_element(lattice.begin(), lattice.end());
    for (std::size_t k = 0; k < members.size(); ++k) {
      // The folded flow moves S steps at the ring's rate after this latency.
      const double bytes_time = rings[k].steps * *std::max_element(rings[k].busy.begin(), rings[k].busy.end());
      out[members[k]] = std::llround(std::max(0.0, slowest - bytes_time));
    }
  }
  return out;
}

}  // namespace stepsim::comm
