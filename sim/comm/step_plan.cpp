#include "sim/comm/step_plan.hpp"

#include <stdexcept>
#include <string>

namespace stepsim::comm {

StepPlan expanded(StepPlan plan) {
  if (plan.copies <= 1) return plan;
  const auto size = static_cast<int>(plan.transfers.size());
  const auto ranks = plan.rank_done.size();
  StepPlan out{.transfers = {}, .protocol = plan.protocol, .launch_latency_ps = plan.launch_latency_ps,
               .rank_done = std::vector<std::vector<int>>(ranks)};
  out.transfers.reserve(plan.transfers.size() * static_cast<std::size_t>(plan.copies));
  // rank_of[r]: the rank that rank r of the first copy is in copy g.
  std::vector<int> rank_of(ranks);
  for (std::size_t r = 0; r < ranks; ++r) rank_of[r] = static_cast<int>(r);
  for (int g = 0; g < plan.copies; ++g) {
    const int base = g * size;
    for (PlannedTransfer t : plan.transfers) {
      t.src = rank_of[static_cast<std::size_t>(t.src)];
      t.dst = rank_of[static_cast<std::size_t>(t.dst)];
      for (int& a : t.after) a += base;  // copies have no folded rings (CollectiveAlgorithm::plan checks)
      out.transfers.push_back(std::move(t));
    }
    for (std::size_t r = 0; r < ranks; ++r)
      for (int a : plan.rank_done[r]) out.rank_done[static_cast<std::size_t>(rank_of[r])].push_back(a + base);
    for (int& r : rank_of) r = plan.copy_rank[static_cast<std::size_t>(r)];
  }
  return out;
}

void require_whole(const StepPlan& plan, const char* who) {
  if (plan.copies > 1) throw std::logic_error(std::string(who) + ": a plan in copies, not expanded()");
}

}  // namespace stepsim::comm
