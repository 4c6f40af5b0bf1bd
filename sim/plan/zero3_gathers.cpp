#include "sim/plan/zero3_gathers.hpp"

#include <numeric>

namespace stepsim::plan {

std::vector<std::int64_t> zero3_gathers(const Strategy& st, const std::vector<std::int64_t>& op_params, std::int64_t extra) {
  if (st.framework != Framework::deepspeed) return {std::accumulate(op_params.begin(), op_params.end(), extra)};
  std::vector<std::int64_t> out;
  for (std::int64_t p : op_params)
    if (p > st.zero3_persistence_threshold) out.push_back(p);
  if (extra > st.zero3_persistence_threshold) out.push_back(extra);
  return out;
}

std::vector<std::int64_t> zero3_backward_regathers(const Strategy& st, const std::vector<std::int64_t>& gathers) {
  if (st.framework != Framework::deepspeed || st.recompute != Recompute::full || st.effective_zero_stage() != 3) return {};
  std::vector<std::int64_t> out;
  std::int64_t later = 0;  // Σ gathers[j] for j > k
  std::vector<bool> released(gathers.size(), false);
  for (std::size_t k = gathers.size(); k-- > 0;) {
    released[k] = 2 * later >= st.zero3_max_reuse_distance;
    later += gathers[k];
  }
  // The backward runs the submodules in reverse, so it fetches the released ones last first.
  for (std::size_t k = gathers.size(); k-- > 0;)
    if (released[k]) out.push_back(gathers[k]);
  return out;
}

int zero3_prefetch_layers(const Strategy& st, bool backward) {
  if (backward && st.framework == Framework::fsdp) return st.fsdp_backward_prefetch == FsdpPrefetch::none ? 0 : 1;
  return st.zero3_blocking_gathers ? 0 : st.zero_prefetch;
}

bool zero3_prefetch_after_gradients(const Strategy& st) {
  return st.framework == Framework::fsdp && st.fsdp_backward_prefetch == FsdpPrefetch::backward_post;
}

}  // namespace stepsim::plan
