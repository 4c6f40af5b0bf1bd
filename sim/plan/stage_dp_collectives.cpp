#include "sim/plan/stage_dp_collectives.hpp"

#include <map>

#include "models/compute_time.hpp"
#include "sim/plan/optimizer_offload.hpp"
#include "sim/plan/zero3_gathers.hpp"

namespace stepsim::plan {

StageDpCollectives::StageDpCollectives(Build& b, int stage, const std::vector<std::vector<int>>& groups,
                                       const std::vector<core::TaskId>& tail)
    : b_(b), stage_(stage), groups_(groups), tail_(tail), pending_(b.global_of.size()), host_busy_(b.global_of.size()) {}

void StageDpCollectives::gather(int layer) {
  for (std::int64_t params : zero3_gathers(b_.in.st, b_.in.layer(layer).op_params, extra_params(layer))) fetch(layer, 2 * params, true);
}

void StageDpCollectives::fetch(int layer, std::int64_t bytes, bool resident) {
  auto members = dp_collective(CommClass::zero, comm::Op::all_gather, bytes, layer, Build::DpPart::shard, 1);
  for (const auto& [r, id] : members) {
    if (resident) b_.rec.memory({id, true, r, bytes, MemKind::gathered});
    pending_[r].emplace_back(layer, id);
  }
}

// FSDP's _reduce_grad: reduce_scatter_tensor in the shard group, all_reduce in the inter-node
// group.
std::vector<std::pair<int, core::TaskId>> StageDpCollectives::reduce_gradients(int layer) {
  const bool hybrid = b_.in.shard_degree < b_.in.grid.dp();
  // DeepSpeed reduce-scatters each parameter tensor by itself (_reduce_scatter_gradients).
  const int tensors = b_.in.layer(layer).param_tensors + extra_tensors(layer);
  auto scattered = dp_collective(CommClass::zero, comm::Op::reduce_scatter, gradient_bytes(layer), layer,
                                 hybrid ? Build::DpPart::shard : Build::DpPart::all, tensors);
  if (hybrid)
    dp_collective(CommClass::zero, comm::Op::all_reduce, gradient_bytes(layer) / b_.in.shard_degree, layer,
                  Build::DpPart::replicas);
  return scattered;
}

// FSDP runs its all-gathers and reduce-scatters on one process group, whose NCCL stream runs them
// in issue order, so they share the zero stream there.
//
// A list-based call (torch.distributed all_gather / reduce_scatter with one tensor per rank, as
// DeepSpeed 0.3 made them: partition_parameters.py _allgather_param, _reduce_scatter_gradient)
// first builds its n views in Python (an all-gather's: flat.narrow; a reduce-scatter's:
// grad.view(-1).narrow, two). PyTorch's ProcessGroupNCCL (c10d, before 1.9) then copies
// each rank's input into a flat buffer before a reduce-scatter's NCCL call, and each rank's slice
// out of it after an all-gather's, one copy_ per rank issued on the NCCL stream by the host
// thread, which is blocked meanwhile; the GPU runs those copies in that stream's order. An
// all-gather's output is zero-filled first (torch.zeros in _allgather_param).
std::vector<std::pair<int, core::TaskId>> StageDpCollectives::dp_collective(CommClass cls, comm::Op op, std::int64_t bytes,
                                                                            int layer, Build::DpPart part, int list_tensors) {
  std::vector<std::pair<int, core::TaskId>> out;
  const bool one_stream = cls == CommClass::zero && (op == comm::Op::all_gather || b_.in.st.framework == Framework::fsdp);
  const Slot slot = one_stream ? Slot::zero : Slot::dp;
  const bool list = list_tensors > 0 && b_.in.st.zero3_list_collectives;
  const hw::CommParams& host = b_.in.sc.cluster.comm;
  const int mb = pass_.microbatch, chunk = pass_.chunk;
  for (std::size_t t = 0; t < groups_.front().size(); ++t) {
    std::map<std::vector<int>, std::vector<int>> locals_of;  // the part's global ranks -> its simulated members
    for (const auto& g : groups_) locals_of[b_.dp_part(b_.global_of[g[t]], part)].push_back(g[t]);
    for (const auto& [group, locals] : locals_of) {
      const std::int64_t slots = std::int64_t{list_tensors} * static_cast<std::int64_t>(group.size());
      std::vector<core::StreamId> streams;
      std::vector<core::TaskId> before;  // per member, list-based: the host calls its NCCL call waits for
      for (int r : locals) {
        streams.push_back(b_.rec.stream(r, slot));
        // ZeRO-Infinity: the rank's partition comes from host memory first, on the gather's stream.
        if (b_.in.st.offload_param && cls == CommClass::zero && op == comm::Op::all_gather)
          b_.offload().parameters_in(r, slot, bytes / static_cast<std::int64_t>(group.size()), tail_[r], layer, mb);
        if (!list) continue;
        const std::int64_t views_per_rank = op == comm::Op::reduce_scatter ? 2 : 1;
        const core::TaskId views =
            b_.rec.host(r, views_per_rank * slots * host.host_view_call_ps, layer, mb, chunk, TaskCategory::host_copies);
        b_.rec.depend(tail_[r], views);
        before.push_back(views);
        if (op != comm::Op::reduce_scatter) continue;
        const core::TaskId copies = b_.rec.host(r, slots * host.host_copy_call_ps, layer, mb, chunk, TaskCategory::host_copies);
        b_.rec.depend(views, b_.rec.comm_work(r, slot, copy_ps(2 * bytes, slots), cls, layer, mb, chunk));
        before.back() = copies;
        host_busy_[r] = copies;
      }
      auto members = b_.collectives.add(cls, op, group, bytes, streams, stage_);
      b_.rec.record_members(members, locals, cls, op, bytes, layer, mb, chunk, slot);
      for (std::size_t k = 0; k < locals.size(); ++k) {
        const int r = locals[k];
        b_.rec.depend(tail_[r], members[k]);
        out.emplace_back(r, members[k]);
        if (!list) continue;
        b_.rec.depend(before[k], members[k]);
        if (op != comm::Op::all_gather) continue;
        // What uses the gathered tensor waits for the copies out of the flat buffer too.
        const core::TaskId copies = b_.rec.host(r, slots * host.host_copy_call_ps, layer, mb, chunk, TaskCategory::host_copies);
        const core::TaskId gpu = b_.rec.comm_work(r, slot, copy_ps(3 * bytes, slots + list_tensors), cls, layer, mb, chunk);
        host_busy_[r] = copies;
        pending_[r].emplace_back(layer, copies);
        pending_[r].emplace_back(layer, gpu);
      }
    }
  }
  return out;
}

void StageDpCollectives::consume_gathers(int r, int layer, core::TaskId t) {
  if (host_busy_[r]) {
    b_.rec.depend(*host_busy_[r], t);
    host_busy_[r].reset();
  }
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

int StageDpCollectives::extra_tensors(int layer) const {
  if (b_.in.opt.hooks.skip_embedding_and_head) return 0;
  int n = 0;
  if (layer == 0) n += b_.in.embedding.param_tensors;
  if (layer == b_.in.sc.model.layers - 1) n += b_.in.logits.param_tensors;
  return n;
}

std::int64_t StageDpCollectives::copy_ps(std::int64_t bytes, std::int64_t kernels) const {
  models::OpCost copy;
  copy.fwd_bytes = static_cast<double>(bytes);
  copy.fwd_kernels = static_cast<int>(kernels);
  return models::time_op(copy, b_.in.sc.cluster.gpu, b_.in.cost_in.dtype).fwd_ps;
}

// A tied head's gradient is the embedding's, reduced once with the first layer's where both sit
// on this stage (PlanInputs::logits_own_params); gathers fetch it for each use (extra_params).
std::int64_t StageDpCollectives::gradient_bytes(int layer) const {
  std::int64_t own = extra_params(layer);
  if (!b_.in.opt.hooks.skip_embedding_and_head && layer == b_.in.sc.model.layers - 1)
    own -= b_.in.logits.params - b_.in.logits_own_params;
  return b_.in.grad_bytes * (b_.in.layer(layer).params + own);
}

}  // namespace stepsim::plan
