#include "sim/comm/ring_phase.hpp"

#include <algorithm>
#include <map>

namespace stepsim::comm {
namespace {

std::vector<std::vector<int>> append_coarse(StepPlan& plan, const RingPhase& phase, int slices) {
  PlannedTransfer ring{.src = phase.members[0],
                       .dst = phase.members[1],
                       .bytes = phase.step_bytes * phase.steps,
                       .step_latency_ps = phase.step_latency_ps,
                       .latency_steps = phase.steps,
                       .slices = slices,
                       .ring = phase.members};
  for (const auto& entry : phase.entry) ring.after.insert(ring.after.end(), entry.begin(), entry.end());
  std::sort(ring.after.begin(), ring.after.end());
  ring.after.erase(std::unique(ring.after.begin(), ring.after.end()), ring.after.end());
  ring.ring_entry = phase.entry;
  const int folded = plan.add(std::move(ring));
  // One join per member, so that what follows a member's part waits for that member in the
  // lattice (folded_ring.hpp), as step mode's next phase does; in the engine, for the ring.
  std::vector<std::vector<int>> done;
  for (std::size_t p = 0; p < phase.members.size(); ++p)
    done.push_back({plan.add(PlannedTransfer{.ring_member = static_cast<int>(p), .after = {folded}, .is_join = true})});
  return done;
}

}  // namespace

std::vector<std::vector<int>> append_ring_phase(StepPlan& plan, const RingPhase& phase, const hw::CommParams& params) {
  const int n = static_cast<int>(phase.members.size());
  if (n < 2 || phase.steps == 0) return phase.entry;
  const int slices = slice_count(phase.step_bytes, params, phase.max_slices);
  if (phase.coarse) return append_coarse(plan, phase, slices);
  const auto slice_bytes = split_bytes(phase.step_bytes, slices);
  // A member's own data is ready at its entry; one join per member keeps that to one dependency.
  std::vector<int> ready(static_cast<std::size_t>(n), -1);
  for (int p = 0; p < n; ++p) {
    const auto& entry = phase.entry[static_cast<std::size_t>(p)];
    if (entry.size() == 1) ready[static_cast<std::size_t>(p)] = entry.front();
    if (entry.size() > 1) ready[static_cast<std::size_t>(p)] = plan.add(PlannedTransfer{.after = entry, .is_join = true});
  }
  // sent[p][j]: position p's transfer of slice j in the previous step. A send waits for the data it
  // forwards (slice j of the previous step, arrived from p−1) and for p's own data; not for p's
  // previous send to finish: a connection has several steps in flight (NCCL_STEPS), so per-step
  // latencies overlap along a position and add up only along the ring.
  std::vector<std::vector<int>> sent(static_cast<std::size_t>(n), std::vector<int>(static_cast<std::size_t>(slices), -1));
  for (int s = 0; s < phase.steps; ++s) {
    std::vector<std::vector<int>> now = sent;
    for (int p = 0; p < n; ++p) {
      const auto up = static_cast<std::size_t>(p), prev = static_cast<std::size_t>((p + n - 1) % n);
      for (int j = 0; j < slices; ++j) {
        const auto js = static_cast<std::size_t>(j);
        PlannedTransfer t{.src = phase.members[up], .dst = phase.members[static_cast<std::size_t>((p + 1) % n)],
                          .bytes = slice_bytes[js], .step_latency_ps = phase.step_latency_ps};
        if (ready[up] >= 0) t.after.push_back(ready[up]);
        if (sent[prev][js] >= 0) t.after.push_back(sent[prev][js]);
        now[up][js] = plan.add(std::move(t));
      }
    }
    sent = std::move(now);
  }
  // A member is done when the last step's slices have arrived from its predecessor.
  std::vector<std::vector<int>> done(static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) done[static_cast<std::size_t>(p)] = sent[static_cast<std::size_t>((p + n - 1) % n)];
  return done;
}

std::vector<std::vector<int>> ranks_by_server(const std::vector<int>& server_of) {
  std::vector<std::vector<int>> groups;
  std::map<int, std::size_t> index;
  for (int r = 0; r < static_cast<int>(server_of.size()); ++r) {
    const auto [it, fresh] = index.emplace(server_of[static_cast<std::size_t>(r)], groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(r);
  }
  return groups;
}

}  // namespace stepsim::comm
