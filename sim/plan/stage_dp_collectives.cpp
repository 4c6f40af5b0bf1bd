#include "sim/plan/stage_dp_collectives.hpp"

#include <map>

#include "sim/plan/zero3_gathers.hpp"

namespace stepsim::plan {

StageDpCollectives::StageDpCollectives(Build& b, int stage, const std::vector<std::vector<int>>& groups,
                                       const std::vector<core::TaskId>& tail)
    : b_(b), stage_(stage), groups_(groups), tail_(tail), pending_(b.global_of.size()) {}

void StageDpCollectives::gather(int layer) {
  for (std::int64_t params : zero3_gathers(b_.in.st, b_.in.layer(layer).op_params, extra_params(layer))) fetch(layer, 2 * params, true);
}

void StageDpCollectives::fetch(int layer, std::int64_t bytes, bool resident) {
  auto members = dp_collective(CommClass::zero, comm::Op::all_gather, bytes, layer, Build::DpPart::shard);
  for (const auto& [r, id] : members) {
    if (resident) b_.rec.memory({id, true, r, bytes, MemKind::gathered});
    pending_[r].emplace_back(layer, id);
  }
}

// FSDP's _reduce_grad: reduce_scatter_tensor in the shard group, all_reduce in the inter-node
// group.
std::vector<std::pair<int, core::TaskId>> StageDpCollectives::reduce_gradients(int layer) {
  const bool hybrid = b_.in.shard_degree < b_.in.grid.dp();
  auto scattered = dp_collective(CommClass::zero, comm::Op::reduce_scatter, gradient_bytes(layer), layer,
                                 hybrid ? Build::DpPart::shard : Build::DpPart::all);
  if (hybrid)
    dp_collective(CommClass::zero, comm::Op::all_reduce, gradient_bytes(layer) / b_.in.shard_degree, layer,
                  Build::DpPart::replicas);
  return scattered;
}

// FSDP runs its all-gathers and reduce-scatters on one process group, whose NCCL stream runs them
// in issue order, so they share the zero stream there.
std::vector<std::pair<int, core::TaskId>> StageDpCollectives::dp_collective(CommClass cls, comm::Op op, std::int64_t bytes,
                                                                            int layer, Build::DpPart part) {
  std::vector<std::pair<int, core::TaskId>> out;
  const bool one_stream = cls == CommClass::zero && (op == comm::Op::all_gather || b_.in.st.framework == Framework::fsdp);
  const Slot slot = one_stream ? Slot::zero : Slot::dp;
  for (std::size_t t = 0; t < groups_.front().size(); ++t) {
    std::map<std::vector<int>, std::vector<int>> locals_of;  // the part's global ranks -> its simulated members
    for (const auto& g : groups_) locals_of[b_.dp_part(b_.global_of[g[t]], part)].push_back(g[t]);
    for (const auto& [group, locals] : locals_of) {
      std::vector<core::StreamId> streams;
      for (int r : locals) streams.push_back(b_.rec.stream(r, slot));
      auto members = b_.collectives.add(cls, op, group, bytes, streams, stage_);
      b_.rec.record_members(members, locals, cls, op, bytes, layer, pass_.microbatch, pass_.chunk, slot);
      for (std::size_t k = 0; k < locals.size(); ++k) {
        b_.rec.depend(tail_[locals[k]], members[k]);
        out.emplace_back(locals[k], members[k]);
      }
    }
  }
  return out;
}

void StageDpCollectives::consume_gathers(int r, int layer, core::TaskId t) {
  auto& list = pending_[r];
  for (auto it = list.begin(); it != list.end();) {
    if (it->first == layer) {
      b_.rec.depend(it->second, t);
      it = list.erase(it);
    } else {
      ++it;
    }
  }
}

std::int64_t StageDpCollectives::gathered_total(int layer) const {
  std::int64_t p = 0;
  for (std::int64_t g : zero3_gathers(b_.in.st, b_.in.layer(layer).op_params, extra_params(layer))) p += g;
  return 2 * p;
}

// The parameters fetched with `layer` beside its own: the embedding before the first, the head
// after the last.
std::int64_t StageDpCollectives::extra_params(int layer) const {
  if (b_.in.opt.hooks.skip_embedding_and_head) return 0;
  std::int64_t p = 0;
  if (layer == 0) p += b_.in.embedding.params;
  if (layer == b_.in.sc.model.layers - 1) p += b_.in.logits.params;
  return p;
}

std::int64_t StageDpCollectives::gradient_bytes(int layer) const {
  return b_.in.grad_bytes * (b_.in.layer(layer).params + extra_params(layer));
}

}  // namespace stepsim::plan
