// Symmetric fidelity (one DP replica simulated, DP collectives timed with every concurrent DP
// group of the stage on a scratch engine, overlapping ones of one group sharing bandwidth) must
// give the full simulation's step time within 0.5 % on configurations both can run.
#include <doctest/doctest.h>

#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim::plan;

namespace {

const char* const kSmallGpt = "{name: small-gpt, layers: 12, hidden: 1024, heads: 16, vocab: 32000, max_seq: 1024}";

void check_same(const std::string& strategy, double tolerance = 0.005, int nodes = 2, int global_batch = 32,
                const std::string& model = kSmallGpt) {
  auto sc = plan_test::scenario(R"(name: sym
hardware: {preset: dgx-a100, nodes: )" + std::to_string(nodes) + R"(}
model: )" + model + R"(
training: {seq_len: 1024, global_batch: )" + std::to_string(global_batch) + R"(}
strategies:
  - )" + strategy + "\n");
  SimOptions full, sym;
  full.fidelity = Fidelity::full;
  sym.fidelity = Fidelity::symmetric;
  auto a = simulate(sc, sc.strategies[0], full);
  auto b = simulate(sc, sc.strategies[0], sym);
  CHECK_FALSE(a.symmetric);
  CHECK(b.symmetric);
  CHECK(b.events < a.events);
  CHECK(b.step_time_s == doctest::Approx(a.step_time_s).epsilon(tolerance).scale(0));
  CHECK(b.peak_memory_bytes == a.peak_memory_bytes);
  MESSAGE(strategy << ": full " << a.step_time_s << " s, symmetric " << b.step_time_s << " s");
}

}  // namespace

TEST_CASE("symmetric equals full: TP in a server, PP and DP across servers") {
  check_same("{name: a, tp: 2, pp: 2, dp: 4, micro_batch: 2}");
}

TEST_CASE("symmetric equals full: DP across both servers with ZeRO-1 and interleaving") {
  check_same("{name: b, tp: 4, pp: 2, dp: 2, zero_stage: 1, schedule: interleaved, v: 2, dp_bucket_size: 10MB}");
}

TEST_CASE("symmetric equals full: two concurrent DP groups across both servers share the NICs") {
  check_same("{name: d, tp: 2, dp: 8, micro_batch: 1, dp_bucket_size: 10MB}");
}

TEST_CASE("symmetric equals full above 64 GPUs, where passes are fused and one TP rank per stage stands for all") {
  // 9 servers, 72 GPUs: tp 8 (one server), pp 3, dp 3 across servers; global batch 36 -> m = 12
  // (a multiple of pp for interleaving).
  check_same("{name: e, tp: 8, pp: 3, dp: 3, schedule: interleaved, v: 2, sequence_parallel: true}", 0.005, 9, 36);
}

TEST_CASE("symmetric equals full where DP collectives overlap each other: ZeRO-3 and FSDP") {
  // ZeRO-3 runs a layer's parameter all-gather beside the previous layer's gradient
  // reduce-scatter over the same ring. Full fidelity makes them share its links; symmetric shares
  // their bandwidth parts on one link per DP group (collectives.cpp). Timed each alone, the
  // first case came out 2.5 % fast.
  check_same("{name: c, dp: 16, zero_stage: 3, micro_batch: 1}");
  check_same("{name: f, tp: 2, dp: 8, zero_stage: 3, micro_batch: 1}");
  check_same("{name: g, framework: fsdp, dp: 16, micro_batch: 1}");
  // HSDP: a rank's shard group (in its server) and its replica group (across) are timed each with
  // the same-shaped groups of the other TP indices, and share no link. Timed as the whole DP
  // group, the shard group's collectives came out 0.4 % slow.
  check_same("{name: h, framework: fsdp, fsdp_sharding: hybrid_shard, dp: 16, micro_batch: 1}", 0.001);
}

TEST_CASE("symmetric equals full where FSDP defers its reductions: under PP and under no_sync") {
  // A pipeline stage reduce-scatters all its layers back to back after its last backward, on the
  // one stream FSDP uses; no_sync reduces once, in the last microbatch's backward.
  check_same("{name: p, framework: fsdp, tp: 2, pp: 2, micro_batch: 1}");
  check_same("{name: n, framework: fsdp, tp: 2, micro_batch: 1, fsdp_no_sync: true}");
}

TEST_CASE("symmetric equals full for expert parallelism: all-to-alls within and across servers") {
  // The EP group of 8 (one server) and of 16 (both), all of it simulated in full fidelity, one
  // member in symmetric, where Collectives times the all-to-all with every concurrent group.
  const std::string moe = "{name: small-moe, layers: 4, hidden: 1024, heads: 16, vocab: 32000, position: rotary, "
                          "moe: {experts: 16, top_k: 2, expert_ffn: 1024}}";
  check_same("{name: ep8, dp: 16, ep: 8, micro_batch: 1}", 0.005, 2, 32, moe);
  check_same("{name: ep16, dp: 16, ep: 16, micro_batch: 1}", 0.005, 2, 32, moe);
  check_same("{name: tp2-ep4, tp: 2, dp: 8, ep: 4, micro_batch: 1, sequence_parallel: true}", 0.005, 2, 32, moe);
  // Folded over TP (etp 1): the EP group of 8 is 4 DP replicas' TP pairs in one server, of 16
  // both servers; symmetric times it alone, without the other EP blocks' traffic on the NICs.
  check_same("{name: f8, tp: 2, dp: 8, ep: 8, etp: 1, micro_batch: 1, sequence_parallel: true}", 0.005, 2, 32, moe);
  check_same("{name: f16, tp: 2, dp: 8, ep: 16, etp: 1, micro_batch: 1, sequence_parallel: true}", 0.005, 2, 32, moe);
  // DeepEP across both servers: the rail part and the server part, each timed with its
  // concurrent groups. Within 1.5 %, not 0.5: in full fidelity the rail exchange shares each NIC
  // with the DP gradient buckets of the same backward, which symmetric times apart (the README's
  // "DP traffic slowing a shared NIC" limit).
  check_same("{name: d16, framework: megatron-core, dp: 16, ep: 16, moe_deepep: true, micro_batch: 1}", 0.015, 2, 32, moe);
}

TEST_CASE("symmetric equals full for context parallelism: the K/V ring within and across servers") {
  // The CP ring of 8 (one server) and of 16 (both); gradients reduce over dp·cp.
  check_same("{name: cp8, dp: 2, cp: 8, micro_batch: 1}");
  check_same("{name: cp16, dp: 1, cp: 16, micro_batch: 1}");
  check_same("{name: tp2-cp4, tp: 2, dp: 2, cp: 4, micro_batch: 1, sequence_parallel: true}");
}

TEST_CASE("symmetric fidelity refuses faults") {
  auto sc = plan_test::scenario(plan_test::small_gpt("{name: s, dp: 8}") + "faults:\n  - {gpu: 3, compute_slowdown: 1.2}\n");
  SimOptions sym;
  sym.fidelity = Fidelity::symmetric;
  CHECK_THROWS_AS(simulate(sc, sc.strategies[0], sym), stepsim::config::ConfigError);
}

TEST_CASE("above 64 GPUs the fused backward still lets DP buckets leave layer by layer") {
  // 9 servers, tp 8 in each, dp 9 across them, one microbatch: DDP's all-reduce of each layer's
  // bucket overlaps the rest of the backward. Fused passes once released every bucket after the
  // whole backward, so overlap on or off gave the same step.
  auto sc = plan_test::scenario(R"(name: fused-dp
hardware: {preset: dgx-a100, nodes: 9}
model: {name: small-gpt, layers: 12, hidden: 2048, heads: 16, vocab: 32000, max_seq: 1024}
training: {seq_len: 1024, global_batch: 72}
strategies:
  - {name: overlap, tp: 8, dp: 9, micro_batch: 8, dp_bucket_size: 10MB}
  - {name: after, tp: 8, dp: 9, micro_batch: 8, dp_bucket_size: 10MB, dp_overlap: false}
)");
  const auto overlap = simulate(sc, sc.strategies[0], {});
  const auto after = simulate(sc, sc.strategies[1], {});
  MESSAGE("overlap " << overlap.step_time_s << " s (DP exposed " << overlap.exposed_comm_s.dp << " s), after "
                     << after.step_time_s << " s (DP exposed " << after.exposed_comm_s.dp << " s)");
  CHECK(after.exposed_comm_s.dp > 0);
  CHECK(overlap.exposed_comm_s.dp < 0.5 * after.exposed_comm_s.dp);
  CHECK(overlap.step_time_s < after.step_time_s - 0.5 * after.exposed_comm_s.dp);
}
