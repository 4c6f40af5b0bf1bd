#include "sim/comm/algorithm.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace stepsim::comm {
namespace {

void check_input(const PlanInput& in) {
  if (in.ranks < 1) throw std::invalid_argument("collective over " + std::to_string(in.ranks) + " ranks");
  if (in.bytes < 0) throw std::invalid_argument("collective of negative size " + std::to_string(in.bytes));
  if (static_cast<int>(in.server_of.size()) != in.ranks)
    throw std::invalid_argument("server_of has " + std::to_string(in.server_of.size()) + " entries for " +
                                std::to_string(in.ranks) + " ranks");
  if (in.root < 0 || in.root >= in.ranks)
    throw std::invalid_argument("root " + std::to_string(in.root) + " is not a rank of " + std::to_string(in.ranks));
}

// A plan written in dependency order is a DAG; anything else is our bug.
void check_plan(const StepPlan& plan, const PlanInput& in) {
  const int n = static_cast<int>(plan.transfers.size());
  for (int i = 0; i < n; ++i) {
    const auto& t = plan.transfers[static_cast<std::size_t>(i)];
    if (t.src < 0 || t.src >= in.ranks || t.dst < 0 || t.dst >= in.ranks || t.bytes < 0)
      throw std::logic_error("plan transfer " + std::to_string(i) + " has a bad rank or size");
    if (std::any_of(t.after.begin(), t.after.end(), [&](int a) { return a < 0 || a >= i; }))
      throw std::logic_error("plan transfer " + std::to_string(i) + " depends on a later transfer");
  }
  if (static_cast<int>(plan.rank_done.size()) != in.ranks) throw std::logic_error("plan rank_done size");
  if (plan.copies > 1) {
    std::vector<bool> seen(static_cast<std::size_t>(in.ranks), false);
    for (int r : plan.copy_rank)
      if (r < 0 || r >= in.ranks || seen[static_cast<std::size_t>(r)]) throw std::logic_error("plan copy_rank is not a permutation");
      else seen[static_cast<std::size_t>(r)] = true;
    if (!in.copies || static_cast<int>(plan.copy_rank.size()) != in.ranks) throw std::logic_error("plan copies not asked for");
    if (std::any_of(plan.transfers.begin(), plan.transfers.end(), [](const auto& t) { return !t.ring.empty(); }))
      throw std::logic_error("plan copies of folded rings");  // a ring's lattice is timed whole (folded_ring.hpp)
  }
  for (const auto& done : plan.rank_done)
    if (std::any_of(done.begin(), done.end(), [&](int a) { return a < 0 || a >= n; }))
      throw std::logic_error("plan rank_done names an unknown transfer");
}

}  // namespace

bool CollectiveAlgorithm::supports(const PlanInput& input) const {
  check_input(input);
  return do_supports(input);
}

bool CollectiveAlgorithm::supports(const PlanInput& input, hw::Protocol protocol) const {
  return supports(input) && do_supports_protocol(protocol);
}

void CollectiveAlgorithm::require(const PlanInput& input, std::optional<hw::Protocol> protocol) const {
  if (!supports(input))
    throw std::invalid_argument("cannot run " + to_string(input.op) + " on this group: it needs " + requirement());
  if (protocol && !do_supports_protocol(*protocol))
    throw std::invalid_argument("cannot run " + to_string(input.op) + " with the " + to_string(*protocol) + " protocol");
}

StepPlan CollectiveAlgorithm::plan(const PlanInput& input) const {
  require(input, input.protocol);
  StepPlan plan = do_plan(input);
  check_plan(plan, input);
  // The protocol's costs that every algorithm shares: its launch, its network step and its
  // bandwidth (a transfer puts 1/share wire bytes per payload byte through Simple's link rates).
  plan.protocol = input.protocol;
  plan.launch_latency_ps = input.params.launch_latency_ps;
  for (auto& t : plan.transfers) {
    t.network_step_latency_ps = input.params.network_step_latency_ps;
    t.wire_factor /= input.bandwidth_share;
  }
  return plan;
}

std::unique_ptr<CollectiveAlgorithm> make_algorithm(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::ring: return make_ring();
    case Algorithm::tree: return make_tree();
    case Algorithm::nvls: return make_nvls();
    case Algorithm::hierarchical: return make_hierarchical();
    case Algorithm::direct: return make_direct();
    case Algorithm::automatic: break;
  }
  throw std::invalid_argument("make_algorithm: 'auto' is chosen by the tuner, not planned");
}

int slice_count(std::int64_t bytes, const hw::CommParams& params, int max_slices) {
  if (bytes <= 0 || params.pipeline_chunk_bytes <= 0) return 1;
  const std::int64_t slices = (bytes + params.pipeline_chunk_bytes - 1) / params.pipeline_chunk_bytes;
  return static_cast<int>(std::clamp<std::int64_t>(slices, 1, max_slices));
}

std::vector<std::int64_t> split_bytes(std::int64_t bytes, int parts) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(parts), bytes / parts);
  for (std::int64_t i = 0; i < bytes % parts; ++i) ++out[static_cast<std::size_t>(i)];
  return out;
}

}  // namespace stepsim::comm
