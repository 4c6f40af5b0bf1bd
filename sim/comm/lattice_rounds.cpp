#include "sim/comm/lattice_rounds.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

namespace stepsim::comm {

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

// The same lattice walked round by round, for lattices above kDagFlowRanks, whose DAG would cost
// seconds, on each hop's bottleneck links only. Within a step, the crossings of each link share it
// by processor sharing from when they are ready; what the link still owes earlier steps joins them as one more crossing,
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
  // A step maps the arrivals and the links' free times of the step before to the next ones, the
  // same map every step when every ring has as many steps, and it commutes with a shift of time.
  // So once a step moves every arrival and every free time by one Δ, and the next by the same Δ,
  // each later step is its predecessor shifted by Δ: the walk ends there and extrapolates.
  const bool same_steps = std::all_of(rings.begin(), rings.end(), [&](const LatticeRing& r) { return r.steps == steps; });
  std::vector<double> before(slots + used.size());
  std::optional<double> last_shift;
  auto state_shift = [&]() -> std::optional<double> {
    std::optional<double> shift;
    auto same = [&](double now, double then) {
      const double d = now - then;
      if (!shift) shift = d;
      return std::abs(d - *shift) <= 1e-9 * std::abs(*shift) + 1e-6;
    };
    for (std::size_t k = 0; k < slots; ++k)
      if (!same(arrived[k], before[k])) return std::nullopt;
    for (std::size_t k = 0; k < used.size(); ++k)
      if (!same(link_free[static_cast<std::size_t>(used[k])], before[slots + k])) return std::nullopt;
    return shift;
  };
  for (int s = 0; s < steps; ++s) {
    if (same_steps && s >= 1) {  // the state after step s − 1
      std::copy(arrived.begin(), arrived.end(), before.begin());
      for (std::size_t k = 0; k < used.size(); ++k) before[slots + k] = link_free[static_cast<std::size_t>(used[k])];
    }
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
    if (!same_steps || s < 1) continue;
    const auto shift = state_shift();
    if (shift && last_shift && std::abs(*shift - *last_shift) <= 1e-9 * std::abs(*shift) + 1e-6) {
      const double rest = static_cast<double>(steps - 1 - s);
      for (double& a : arrived) a += rest * *shift;
      break;
    }
    last_shift = shift;
  }
  std::vector<double> out;
  for (std::size_t i = 0; i < rings.size(); ++i)
    out.push_back(first_slot[i] == first_slot[i + 1] ? 0.0
                                                     : *std::max_element(arrived.begin() + static_cast<std::ptrdiff_t>(first_slot[i]),
                                                                         arrived.begin() + static_cast<std::ptrdiff_t>(first_slot[i + 1])));
  return out;
}

}  // namespace stepsim::comm
