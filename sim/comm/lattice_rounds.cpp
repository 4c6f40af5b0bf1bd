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
  // same map F every step when every ring has as many steps, and F(x + Δ) = F(x) + Δ. So once the
  // state after step s is the state after step s − k shifted by one Δ, every later step is the one
  // k before it shifted by Δ: the walk ends there and extrapolates. k > 1 is the rule on rings
  // whose hops differ (NVLink within a server, a NIC between them): F is max-plus linear, and such
  // a system settles into a periodic regime whose cyclicity can exceed 1 (Baccelli, Cohen, Olsder
  // and Quadrat, "Synchronization and Linearity", 1992, ch. 3). Two steps in a row must match.
  const bool same_steps = std::all_of(rings.begin(), rings.end(), [&](const LatticeRing& r) { return r.steps == steps; });
  const std::size_t state_size = slots + used.size();
  constexpr int kMaxPeriod = 64;
  const int kept = same_steps ? std::min(steps, kMaxPeriod + 2) : 0;
  std::vector<double> history(static_cast<std::size_t>(kept) * state_size);  // the last `kept` states, by step % kept
  auto state_of = [&](int step) { return history.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(step % kept) * state_size); };
  // Δ with state(a) = state(b) + Δ everywhere, if there is one.
  auto uniform_shift = [&](int a, int b) -> std::optional<double> {
    const auto x = state_of(a), y = state_of(b);
    const double shift = x[0] - y[0];
    for (std::size_t k = 1; k < state_size; ++k)
      if (std::abs(x[static_cast<std::ptrdiff_t>(k)] - y[static_cast<std::ptrdiff_t>(k)] - shift) > 1e-9 * std::abs(shift) + 1e-6)
        return std::nullopt;
    return shift;
  };
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
    if (!same_steps || state_size == 0) continue;
    const auto now = state_of(s);
    std::copy(arrived.begin(), arrived.end(), now);
    for (std::size_t k = 0; k < used.size(); ++k) now[static_cast<std::ptrdiff_t>(slots + k)] = link_free[static_cast<std::size_t>(used[k])];
    std::optional<std::pair<int, double>> period;  // k, Δ
    for (int k = 1; k <= kMaxPeriod && s - k - 1 >= 0 && !period; ++k) {
      const auto shift = uniform_shift(s, s - k);
      if (!shift) continue;
      const auto earlier = uniform_shift(s - 1, s - 1 - k);
      if (earlier && std::abs(*earlier - *shift) <= 1e-9 * std::abs(*shift) + 1e-6) period = {{k, *shift}};
    }
    if (!period) continue;
    // The last step, steps − 1 = s + j, is step s − k + r shifted by Δ (j − r)/k + 1 times
    // (r = j mod k; r = 0: step s itself, shifted j/k times).
    const auto [k, shift] = *period;
    const int j = steps - 1 - s, r = j % k;
    const auto base = state_of(r == 0 ? s : s - k + r);
    const double times = r == 0 ? j / k : (j - r) / k + 1;
    for (std::size_t slot = 0; slot < slots; ++slot) arrived[slot] = base[static_cast<std::ptrdiff_t>(slot)] + times * shift;
    break;
  }
  std::vector<double> out;
  for (std::size_t i = 0; i < rings.size(); ++i)
    out.push_back(first_slot[i] == first_slot[i + 1] ? 0.0
                                                     : *std::max_element(arrived.begin() + static_cast<std::ptrdiff_t>(first_slot[i]),
                                                                         arrived.begin() + static_cast<std::ptrdiff_t>(first_slot[i + 1])));
  return out;
}

}  // namespace stepsim::comm
