// Data-parallel gradient synchronisation and the optimizer step of each rank:
// - DP buckets (PyTorch DDP / Megatron-LM): gradients are packed into buckets of dp_bucket_size
//   in backward order (last layer first); with dp_overlap a bucket's reduce starts when the last
//   layer filling it has finished its last microbatch's weight gradient, else all start after
//   backward. ZeRO-0 all-reduces; ZeRO-1/2 (and Megatron's distributed optimizer) reduce-scatter
//   and all-gather the updated 16-bit parameters after the step, bucket by bucket; DeepSpeed's
//   BF16_Optimizer (PlanInputs::bf16_optimizer) all-reduces, then all-gathers. ZeRO-2 also
//   reduce-scatters after every earlier microbatch (task_builder_layers.cpp, end_backward).
//   Gradients move in PlanInputs::grad_bytes per element (fp32 for a bf16 model under Megatron-LM
//   below ZeRO-3 and Megatron-Core, and for FSDP with fsdp_reduce_fp32).
// - Megatron-Core --overlap-param-gather: those all-gathers run instead during the step's first
//   forward, bucket by bucket in forward order, each layer's first forward waiting for the bucket
//   that holds its parameters (megatron/core/distributed/param_and_grad_buffer.py dispatches the
//   next bucket's all-gather from the forward pre-hook). In the steady state the previous step's
//   optimizer has finished when this step starts, so they start with it.
// - Tied embeddings under PP, or the last stage's copy of the embedding that multi-token
//   prediction reads: the first and last stage all-reduce the embedding gradient (Megatron-LM
//   finalize_model_grads, _allreduce_word_embedding_grads) before the step.
// - The optimizer step: fused Adam reads gradient (2 B, or 4 from an fp32 main_grad) and fp32
//   master, m, v (12 B) and writes master, m, v and the 16-bit parameter (14 B): 28 (30) bytes per
//   local parameter, memory-bound
//   (models::OptimizerStates::step_bytes, narrower states fewer). Under ZeRO-Offload the
//   gradients go to host memory as their buckets are reduced and the CPU steps
//   (optimizer_offload.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "sim/plan/optimizer_offload.hpp"
#include "sim/plan/task_graph.hpp"

namespace stepsim::plan {
namespace {

struct Bucket {
  std::int64_t params = 0;
  int trigger_layer = 0;  // stage-local layer index whose gradient completes it
  int count = 1;          // DDP buckets merged into this one (see merge_same_trigger)
};

// What one collective over a bucket carries: gradients at grad_bytes per element, the updated
// parameters at 2 B — those of FP8 GEMMs at 1 B with FP8 parameters, taken at the stage's share
// (the FP8 GEMMs' share of the stage's parameters: a bucket's own share differs only by the
// norms and embedding it happens to hold).
std::int64_t bucket_bytes(const Build& b, const Bucket& bucket, comm::Op op, int stage) {
  if (op != comm::Op::all_gather) return bucket.params * b.in.grad_bytes;
  const auto s = static_cast<std::size_t>(stage);
  const double fp8_share = b.in.st.fp8_param_gather && b.in.stage_params[s] > 0
                               ? static_cast<double>(b.in.stage_fp8_params[s]) / static_cast<double>(b.in.stage_params[s])
                               : 0.0;
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(bucket.params) * (2 - fp8_share)));
}

// Buckets completed by the same layer start together and run back to back on the DP stream, so
// they are issued as one collective of their summed size, preceded on the stream by the launch
// latencies of the calls it stands for (count − 1 of them). A 175B model's 14,000 buckets of
// 25 MB become ~100 collectives; the bandwidth term is the same, only NCCL's per-call pipeline
// start is approximated.
std::vector<Bucket> merge_same_trigger(const std::vector<Bucket>& in) {
  std::vector<Bucket> out;
  for (const Bucket& b : in) {
    if (!out.empty() && out.back().trigger_layer == b.trigger_layer) {
      out.back().params += b.params;
      ++out.back().count;
    } else {
      out.push_back(b);
    }
  }
  return out;
}

// Which gradients a set of buckets holds: everything but the routed experts under EP (reduced
// over DP), or those experts (over the expert-data-parallel group, a separate buffer in
// Megatron-Core: distributed_data_parallel.py's expert_parallel_buffers).
enum class GradientSet { dense, experts };

// Buckets of one stage, backward order: chunks last to first, layers last to first.
std::vector<Bucket> stage_buckets(const Build& b, int stage, GradientSet set) {
  std::vector<Bucket> out;
  const std::int64_t cap = b.in.st.dp_bucket_params > 0 ? b.in.st.dp_bucket_params
                                                       : std::max<std::int64_t>(1, b.in.st.dp_bucket_bytes / b.in.grad_bytes);
  const int p = b.in.grid.pp();
  std::vector<int> base(b.in.schedule.chunks, 0);
  for (int c = 1; c < b.in.schedule.chunks; ++c) base[c] = base[c - 1] + b.in.layers_of_vstage[(c - 1) * p + stage];
  for (int c = b.in.schedule.chunks - 1; c >= 0; --c) {
    const int u = c * p + stage, n = b.in.layers_of_vstage[u];
    // Megatron-Core buckets only the first stage's first chunk; elsewhere a chunk is one bucket
    // ("data-parallel communication on these stages is not on the critical path":
    // distributed_data_parallel.py, training.py's disable_bucketing).
    const bool one_bucket = b.in.st.framework == Framework::megatron_core && (stage > 0 || c > 0);
    const std::int64_t chunk_cap = one_bucket ? std::numeric_limits<std::int64_t>::max() : cap;
    std::int64_t acc = 0;
    for (int i = n - 1; i >= 0; --i) {
      const LayerCost& layer = b.in.layer(b.in.first_layer_of_vstage[u] + i);
      const std::int64_t expert = b.in.st.ep > 1 ? layer.expert_params : 0;
      std::int64_t params = set == GradientSet::experts ? expert : layer.params - expert;
      if (!b.in.opt.hooks.skip_embedding_and_head && u == p * b.in.schedule.chunks - 1 && i == n - 1) {
        // The head's, a multi-token-prediction layer's experts among them.
        const std::int64_t head_experts = b.in.st.ep > 1 ? b.in.logits.expert_params : 0;
        params += set == GradientSet::experts ? head_experts : b.in.logits_own_params - head_experts;
      }
      if (set == GradientSet::dense && !b.in.opt.hooks.skip_embedding_and_head && u == 0 && i == 0)
        params += b.in.embedding.params;
      acc += params;
      while (acc >= chunk_cap) {
        out.push_back({chunk_cap, base[c] + i, 1});
        acc -= chunk_cap;
      }
      if (i == 0 && acc > 0) out.push_back({acc, base[c] + i, 1});
    }
  }
  return merge_same_trigger(out);
}

std::optional<core::TaskId> launch_latencies(Build& b, int local, int calls) {
  const core::Duration d{calls * b.in.sc.cluster.comm.launch_latency_ps};
  if (b.in.opt.hooks.comm_bytes_per_s || d.ps <= 0) return std::nullopt;  // the test hook has no latency
  return b.rec.engine().add_delay(d, b.rec.stream(local, Slot::dp));
}

std::vector<std::vector<int>> dp_groups_of_stage(const Build& b, int stage) {
  const auto tp_groups = b.stage_tp_groups(stage);
  std::vector<std::vector<int>> out(tp_groups.front().size());
  for (const auto& g : tp_groups)
    for (std::size_t t = 0; t < g.size(); ++t) out[t].push_back(g[t]);
  return out;
}

// The reduction groups of a gradient set: [global ranks] -> simulated members (local ranks).
std::map<std::vector<int>, std::vector<int>> reduction_groups(const Build& b, int stage, GradientSet set) {
  std::map<std::vector<int>, std::vector<int>> out;
  for (const auto& locals : dp_groups_of_stage(b, stage))
    for (int r : locals) {
      const int global = b.global_of[r];
      const RankGrid& grid = b.in.grid;
      const int ep = b.in.st.ep;
      out[set == GradientSet::dense                ? grid.dp_group(global)
          : b.in.st.folds_experts_over_tp() ? grid.folded_expert_dp_group(global, ep)
                                            : grid.expert_dp_group(global, ep)]
          .push_back(r);
    }
  return out;
}

void bucket_collectives(Build& b, int stage, const std::vector<Bucket>& buckets, comm::Op op,
                        const std::vector<core::TaskId>* after, GradientSet set) {
  auto trigger = [&](int r, const Bucket& bucket) {
    if (after) return (*after)[r];
    return b.in.st.dp_overlap ? b.grad_ready[r][bucket.trigger_layer] : b.backward_end[r];
  };
  // ZeRO-Offload: the reduced slice of each bucket goes to host memory (the boundary micro-step).
  const bool offload = b.in.st.offload_optimizer && op != comm::Op::all_gather;
  const MicroStep boundary = micro_step(b.in.schedule.microbatches == 1, true);
  const std::int64_t shards = set == GradientSet::dense ? b.in.shard_degree : std::max(1, b.in.st.expert_dp_degree());
  for (const auto& [group, locals] : reduction_groups(b, stage, set)) {
    if (group.size() < 2) {  // ep == dp, or no DP: each rank alone holds its gradients
      if (offload)
        for (const Bucket& bucket : buckets)
          for (int r : locals)
            b.offload().gradients_out(r, trigger(r, bucket), bucket.params, boundary, -1, -1);
      continue;
    }
    for (const Bucket& bucket : buckets) {
      std::vector<core::StreamId> streams;
      for (int r : locals) {
        streams.push_back(b.rec.stream(r, Slot::dp));
        if (auto delay = launch_latencies(b, r, bucket.count - 1)) b.rec.depend(trigger(r, bucket), *delay);
      }
      const std::int64_t bytes = bucket_bytes(b, bucket, op, stage);
      auto members = b.collectives.add(CommClass::dp, op, group, bytes, streams, stage);
      b.rec.record_members(members, locals, CommClass::dp, op, bytes, -1, -1, 0, Slot::dp);
      for (std::size_t k = 0; k < locals.size(); ++k) b.rec.depend(trigger(locals[k], bucket), members[k]);
      if (offload)
        for (std::size_t k = 0; k < locals.size(); ++k)
          b.offload().gradients_out(locals[k], members[k], (bucket.params + shards - 1) / shards, boundary, -1, -1);
    }
  }
}

// Megatron-Core's overlapped parameter all-gathers (see the top of this file), on the stream ZeRO-3
// gathers use: nothing else runs there under the distributed optimizer.
void overlapped_param_gathers(Build& b, int stage, const std::vector<Bucket>& buckets) {
  // A layer's parameters end in the bucket with the largest trigger layer ≤ it (stage_buckets
  // fills buckets last layer first); the stream runs every earlier bucket before that one. The
  // same for every rank of the stage: gate[layer] = that bucket's place in forward order.
  int layers = 0;
  for (int c = 0; c < b.in.schedule.chunks; ++c) layers += b.in.layers_of_vstage[c * b.in.grid.pp() + stage];
  std::vector<std::size_t> gate(static_cast<std::size_t>(layers), 0);
  for (std::size_t j = 0; j < buckets.size(); ++j)
    for (int layer = buckets[buckets.size() - 1 - j].trigger_layer; layer < layers; ++layer) gate[layer] = j;
  for (const auto& locals : dp_groups_of_stage(b, stage)) {
    const auto group = b.in.grid.dp_group(b.global_of[locals.front()]);
    std::vector<std::vector<core::TaskId>> members_of;  // [bucket in forward order][member]
    for (auto it = buckets.rbegin(); it != buckets.rend(); ++it) {
      std::vector<core::StreamId> streams;
      for (int r : locals) streams.push_back(b.rec.stream(r, Slot::zero));
      const std::int64_t bytes = bucket_bytes(b, *it, comm::Op::all_gather, stage);
      members_of.push_back(b.collectives.add(CommClass::dp, comm::Op::all_gather, group, bytes, streams, stage));
      b.rec.record_members(members_of.back(), locals, CommClass::dp, comm::Op::all_gather, bytes, -1, -1, 0, Slot::zero);
    }
    for (std::size_t k = 0; k < locals.size(); ++k) {
      const int r = locals[k];
      for (std::size_t layer = 0; layer < b.first_forward[r].size(); ++layer)
        if (b.first_forward[r][layer]) b.rec.depend(members_of[gate[layer]][k], *b.first_forward[r][layer]);
    }
  }
}

}  // namespace

void build_embedding_sync(Build& b) {
  const int p = b.in.grid.pp();
  const bool shared = b.in.sc.model.tied_embeddings || b.in.mtp_layers > 0;
  if (p == 1 || !shared || b.in.opt.hooks.skip_embedding_and_head) return;
  // DeepSpeed's pipeline engine all-reduces BF16_Optimizer's fp32 copy of a tied weight's gradient
  // (pipe/engine.py _exec_reduce_tied_grads: weight._hp_grad), not cast to the bf16 it reduces
  // the rest in.
  const int grad_bytes = b.in.bf16_optimizer ? 4 : b.in.grad_bytes;
  const std::int64_t bytes = grad_bytes * (b.in.sc.model.vocab / b.in.grid.tp()) * b.in.sc.model.hidden;
  for (std::size_t local = 0; local < b.global_of.size(); ++local) {
    const Coord c = b.in.grid.coord(b.global_of[local]);
    if (c.pp != 0) continue;
    const int last = b.local_of[b.in.grid.rank({c.tp, c.dp, p - 1})];
    const std::vector<int> locals{static_cast<int>(local), last};
    const std::vector<int> group{b.global_of[local], b.global_of[last]};
    auto members = b.collectives.add(CommClass::dp, comm::Op::all_reduce, group, bytes,
                                     {b.rec.stream(locals[0], Slot::dp), b.rec.stream(last, Slot::dp)}, -1);
    b.rec.record_members(members, locals, CommClass::dp, comm::Op::all_reduce, bytes, -1, -1, 0, Slot::dp);
    for (int k = 0; k < 2; ++k) b.rec.depend(b.backward_end[locals[k]], members[k]);
  }
}

void build_gradient_sync(Build& b, int stage) {
  const int zero = b.in.st.effective_zero_stage();
  const bool reduce = b.in.grid.dp() > 1 && !b.in.st.shards_parameters();
  // Without DP, ZeRO-Offload still sends each bucket's gradients to host memory.
  const bool to_host = b.in.grid.dp() == 1 && b.in.st.offload_optimizer && !b.in.st.shards_parameters();
  const auto buckets = reduce || to_host ? stage_buckets(b, stage, GradientSet::dense) : std::vector<Bucket>{};
  // Routed experts reduce over their own replicas, which exist even without DP when EP folds
  // over TP (tp·dp/ep ranks hold the same experts).
  const bool experts = !b.in.st.shards_parameters() && b.in.st.ep > 1 && b.in.st.expert_dp_degree() > 1 &&
                       b.in.stage_expert_params[stage] > 0;
  // Experts no other rank holds (ep == dp) reduce nothing, but ZeRO-Offload still sends them out.
  const bool experts_to_host = !experts && b.in.st.offload_optimizer && !b.in.st.shards_parameters() && b.in.st.ep > 1 &&
                               b.in.stage_expert_params[stage] > 0;
  const auto expert_buckets =
      experts || experts_to_host ? stage_buckets(b, stage, GradientSet::experts) : std::vector<Bucket>{};
  const bool gather_in_forward = reduce && zero >= 1 && b.in.st.overlap_param_gather;
  if (gather_in_forward) overlapped_param_gathers(b, stage, buckets);
  const comm::Op reduce_op = zero == 0 || b.in.bf16_optimizer ? comm::Op::all_reduce : comm::Op::reduce_scatter;
  if (reduce || to_host) bucket_collectives(b, stage, buckets, reduce_op, nullptr, GradientSet::dense);
  if (experts || experts_to_host) bucket_collectives(b, stage, expert_buckets, reduce_op, nullptr, GradientSet::experts);
  if (b.in.opt.hooks.skip_optimizer) return;
  // The optimizer updates this rank's shard: dense parameters over the shard group, routed
  // experts over their dp/ep replicas.
  const std::int64_t shard = optimizer_shard_params(b, stage);
  const auto& gpu = b.in.sc.cluster.gpu;
  // FP8 training casts the updated weights once per step (plan_inputs.hpp), on the same stream.
  // BF16_Optimizer's Adam reads its fp32 gradient partition, and the updated fp32 master is
  // copied into the bf16 partition by a kernel of its own (bf16_optimizer.py step,
  // update_lp_params): 4 bytes read where the fused step wrote 2.
  const int step_bytes = b.in.bf16_optimizer ? b.in.st.optimizer_states.step_bytes(4) + 4
                                             : b.in.st.optimizer_states.step_bytes(b.in.grad_bytes);
  const std::int64_t ps = static_cast<std::int64_t>(
      std::ceil(static_cast<double>(shard) * step_bytes /
                (gpu.memory_bytes_per_s * gpu.memory_efficiency) * 1e12)) +
      fp8_weight_cast_ps(b.in, stage);
  std::vector<core::TaskId> optimizer(b.global_of.size());
  for (const auto& locals : dp_groups_of_stage(b, stage))
    for (int r : locals) {
      if (b.in.st.offload_optimizer) {
        // After the last gradient copy on the rank's dp stream, whatever reduced it.
        const core::TaskId copied = b.rec.engine().add_marker(b.rec.stream(r, Slot::dp));
        b.rec.depend(b.backward_end[r], copied);
        optimizer[r] = b.offload().step(r, stage, copied);
        continue;
      }
      optimizer[r] = b.rec.compute(r, ps, TaskCategory::optimizer, -1, -1, 0);
      b.rec.depend(b.backward_end[r], optimizer[r]);
      if (b.rec.last_on_dp(r)) b.rec.depend(*b.rec.last_on_dp(r), optimizer[r]);
    }
  if (reduce && zero >= 1 && !gather_in_forward) bucket_collectives(b, stage, buckets, comm::Op::all_gather, &optimizer, GradientSet::dense);
  if (experts && zero >= 1) bucket_collectives(b, stage, expert_buckets, comm::Op::all_gather, &optimizer, GradientSet::experts);
}

}  // namespace stepsim::plan
