// Every way a collective is timed (timing_method.hpp) against the engine's step mode, the
// reference: coarse mode in the engine (one flow per ring, the step lattice's latency:
// folded_ring.cpp), the lattice and step plans solved as transfer DAGs (plan_dag.cpp), the
// round-by-round lattice, and the paper estimate that the tuner uses. The DAG solver's exact
// cases are in tests/sim/core/transfer_dag_test.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "comm_fixture.hpp"
#include "sim/comm/algorithm.hpp"
#include "sim/comm/folded_ring.hpp"
#include "sim/comm/perf_table.hpp"
#include "sim/comm/plan_dag.hpp"
#include "sim/comm/plan_input.hpp"
#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"

namespace stepsim::comm {
namespace {

using testing::first_gpus;
using testing::run_together;
using testing::shape;

struct Machine {
  std::string preset;
  int nodes = 1;
  int gpus_per_node = 1;
};

// 1 MiB to 8 GiB by factors of 8 (and 8 GiB itself): latency-bound, the crossover, bandwidth-bound.
const std::vector<std::int64_t> kSizes{1LL << 20, 8LL << 20, 64LL << 20, 512LL << 20, 4LL << 30, 8LL << 30};

// Largest |coarse / step − 1| over kSizes for one op and algorithm on one machine.
double worst_disagreement(const Machine& m, Op op, Algorithm algorithm) {
  const auto cluster = hw::load_cluster(m.preset, shape(m.nodes, m.gpus_per_node));
  const hw::Router router(cluster);
  double worst = 0;
  for (std::int64_t bytes : kSizes) {
    CollectiveRequest req{.op = op, .gpus = first_gpus(cluster.gpu_count()), .bytes = bytes, .algorithm = algorithm};
    const double step = run_together(router, {req}).front();
    req.coarse = true;
    const double coarse = run_together(router, {req}).front();
    worst = std::max(worst, std::abs(coarse / step - 1));
  }
  return worst;
}

// Ring all-reduce, all-gather and reduce-scatter on each machine, coarse within `tolerance` of step.
void check_ring_ops_within(const std::vector<Machine>& machines, double tolerance) {
  for (const auto& m : machines)
    for (Op op : {Op::all_reduce, Op::all_gather, Op::reduce_scatter}) {
      const std::string what = m.preset + " " + std::to_string(m.nodes) + "x" + std::to_string(m.gpus_per_node) + " " + to_string(op);
      CAPTURE(what);
      CHECK(worst_disagreement(m, op, Algorithm::ring) <= tolerance);
    }
}

TEST_CASE("coarse mode agrees with step mode within 2 % from 1 MiB to 8 GiB") {
  // Rings whose hops are alike: every hop over the NICs (4 and 16 servers of 1 GPU), every hop
  // over PCIe (16 GPUs in one PCIe server), and the hierarchical all-reduce, whose phases are
  // such rings. The lattice is exact there: T = S·(α + b/B).
  const std::vector<Machine> machines{{"dgx-a100", 4, 1}, {"dgx-a100", 16, 1}, {"a100-pcie", 1, 16}};
  check_ring_ops_within(machines, 0.02);
  // Hierarchical needs several ranks per server (with one it is the ring, tested above). Its
  // phases overlap member by member in step mode, and the lattice of the whole plan is walked
  // at once, so that they do there too (worst when each phase was walked as if all its rings
  // started together: −25 % on rtx5090 2x8).
  for (const char* preset : {"dgx-a100", "a100-pcie", "rtx4090", "rtx5090"}) {
    CAPTURE(preset);
    CHECK(worst_disagreement({preset, 2, 8}, Op::all_reduce, Algorithm::hierarchical) <= 0.02);
  }
}

TEST_CASE("hierarchical all-reduce where a member's phases overlap a lot: the known gap in the engine, none in the table") {
  // h100-pcie-nvlink's server ring alternates bridged pairs (NVLink) and PCIe hops, so members
  // that receive over NVLink finish the reduce-scatter up to a step (~20 ms at 8 GiB) before the
  // others and start the NIC phase early. The lattice of the whole plan has that (it ends
  // within 0.01 % of step mode), but the engine's folded flows of one phase start when all of
  // the phase before has ended, so each phase's bytes serialize: +9.5 % at 8 GiB, +8.5 % on 4
  // servers. Bounded so it does not grow; the goal stays 2 %.
  CHECK(worst_disagreement({"h100-pcie-nvlink", 2, 8}, Op::all_reduce, Algorithm::hierarchical) <= 0.10);
  // Alone on the machine, as in the nccl-tests table, the collective takes the whole plan's
  // lattice time (FoldedTiming::lattice_end_ps), so the table has no gap there.
  const auto cluster = hw::load_cluster("h100-pcie-nvlink", shape(2, std::nullopt));
  const hw::Router router(cluster);
  for (std::int64_t bytes : kSizes) {
    CAPTURE(bytes);
    const auto full = simulate_size(router, Op::all_reduce, first_gpus(16), bytes, Algorithm::hierarchical, true, RingMode::step);
    const auto coarse = simulate_size(router, Op::all_reduce, first_gpus(16), bytes, Algorithm::hierarchical, true, RingMode::folded);
    CHECK(coarse.time_us == doctest::Approx(full.time_us).epsilon(0.02));
  }
}

TEST_CASE("coarse mode agrees with step mode within 2 % on rings that mix NVLink and NIC hops" * doctest::test_suite("slow")) {
  // Every channel's ring crosses each GPU's NVLink port, so seven rings' steps share it, and they
  // reach it at times that the slow NIC hops skew: the lattices of all rings are walked together
  // (folded_ring.hpp). Worst when a step's crossing was taken to meet the others at random:
  // −5.5 % (dgx-a100 2x8 all-gather, 8 MiB), −9.1 % (dgx-h100 2x8 all-gather, 32 MiB).
  const std::vector<Machine> machines{{"dgx-a100", 2, 8}, {"dgx-a100", 4, 8}, {"dgx-h100", 2, 8}};
  check_ring_ops_within(machines, 0.02);
}

TEST_CASE("coarse mode agrees with step mode within 2.5 % on rings staged through PCIe and host memory" * doctest::test_suite("slow")) {
  // A hop staged through the CPU crosses several loaded links at once, and a hop between sockets
  // splits over two routes. Step mode's flows share those links max-min, and the lattice's flows
  // do too (every link a route crosses, less those another link of the route implies). Worst
  // when each bottleneck link served its crossings on its own by processor sharing: −7.8 %
  // (a100-pcie 2x8), −4.3 % (rtx4090 2x8), −8.3 % (rtx5090 2x8), −10 % (h100-pcie-nvlink 2x8,
  // 8 GiB), −22.5 % (one rtx5090 box, 2 MiB, whose hops all go through host memory). Which of a
  // hop's equal-cost staged routes each folded sub-ring takes is the routes' order (the router's,
  // by link): rtx5090 2x8 all-reduce is 2.05 % off in link order, 1.6 % in the order an earlier
  // search happened to give; every other case here is within 1 %.
  const std::vector<Machine> machines{
      {"a100-pcie", 2, 8}, {"rtx4090", 2, 8}, {"rtx5090", 2, 8}, {"h100-pcie-nvlink", 2, 8}, {"rtx5090", 1, 8}};
  check_ring_ops_within(machines, 0.025);
}

TEST_CASE("the round-by-round lattice stays within 5 % of the lattice's DAG" * doctest::test_suite("slow")) {
  // Lattices too large for a DAG (above kDagFlowRanks: 512 ranks × 8 channels) are walked round by
  // round, by processor sharing on each hop's bottleneck links; that walk never lets two rounds
  // share a link, so it is fast where rings drift apart.
  for (const Machine& m : {Machine{"dgx-a100", 2, 8}, Machine{"dgx-a100", 4, 8}, Machine{"dgx-h100", 2, 8}}) {
    const auto cluster = hw::load_cluster(m.preset, shape(m.nodes, m.gpus_per_node));
    const hw::Router router(cluster);
    for (std::int64_t bytes : kSizes) {
      CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(cluster.gpu_count()), .bytes = bytes,
                            .algorithm = Algorithm::ring};
      const double step = run_together(router, {req}).front() * 1e6;  // ps
      req.coarse = true;
      const StepPlan plan = make_algorithm(Algorithm::ring)->plan(plan_input(cluster, req));
      const auto by_dag = folded_ring_latencies(router, req.gpus, plan, IdleTiming::dag);
      const auto by_rounds = folded_ring_latencies(router, req.gpus, plan, IdleTiming::rounds);
      for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
        REQUIRE(by_dag[i].has_value() == by_rounds[i].has_value());
        if (by_dag[i]) CHECK(std::abs(static_cast<double>(*by_rounds[i] - *by_dag[i])) <= 0.05 * step);
      }
    }
  }
}

TEST_CASE("a ring's floor latency is never above its latency by either lattice method") {
  // The tuner skips a ring whose paper with these floors is slower than its best so far: sound
  // because each step waits its hop's latency after the step before, so a lattice ends no earlier
  // than S steps of the quickest hop's latency, and the paper only grows with a ring's latency.
  // Rings of NVLink hops and of NVLink then NIC hops, one server and several, every protocol.
  for (const Machine& m : {Machine{"dgx-a100", 1, 8}, Machine{"dgx-a100", 2, 8}, Machine{"dgx-h100", 4, 8},
                           Machine{"a100-pcie", 2, 8}}) {
    const auto cluster = hw::load_cluster(m.preset, shape(m.nodes, m.gpus_per_node));
    const hw::Router router(cluster);
    for (hw::Protocol protocol : {hw::Protocol::simple, hw::Protocol::ll128, hw::Protocol::ll})
      for (std::int64_t bytes : {std::int64_t{1} << 10, std::int64_t{1} << 20, std::int64_t{64} << 20, std::int64_t{4} << 30}) {
        INFO(m.preset << " x " << m.nodes << ", " << to_string(protocol) << ", " << bytes << " B");
        const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(cluster.gpu_count()), .bytes = bytes,
                                    .algorithm = Algorithm::ring, .protocol = protocol, .coarse = true};
        const StepPlan plan = make_algorithm(Algorithm::ring)->plan(plan_input(cluster, req));
        const auto floor = folded_ring_latencies(router, req.gpus, plan, IdleTiming::floor);
        for (IdleTiming method : {IdleTiming::dag, IdleTiming::rounds}) {
          const auto latency = folded_ring_latencies(router, req.gpus, plan, method);
          for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
            REQUIRE(floor[i].has_value() == latency[i].has_value());
            if (floor[i]) CHECK(*floor[i] <= *latency[i]);
          }
        }
      }
  }
}

TEST_CASE("the round-by-round walk of a uniform ring, extrapolated once it settles, keeps the ring formula") {
  // ring_cluster: n = 16, B = 100 GB/s, alpha = 2 us. All-reduce of 16 MB: S = 30 steps of 1 MB,
  // each 2 + 10 us. Every step after the first moves every arrival by 12 us, so the walk stops
  // after three steps and extrapolates the other 27; the folded flow's latency is what the
  // lattice adds to its bytes: S·alpha = 60 us.
  const auto cluster = testing::ring_cluster(16, 100e9, 2'000'000);
  const hw::Router router(cluster);
  const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(16), .bytes = 16'000'000,
                              .algorithm = Algorithm::ring, .coarse = true};
  const StepPlan plan = make_algorithm(Algorithm::ring)->plan(plan_input(cluster, req));
  const auto by_rounds = folded_ring_latencies(router, req.gpus, plan, IdleTiming::rounds);
  const auto by_dag = folded_ring_latencies(router, req.gpus, plan, IdleTiming::dag);
  int rings = 0;
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    if (!by_rounds[i]) continue;
    ++rings;
    CHECK(std::abs(static_cast<double>(*by_rounds[i]) - 60e6) <= 1.0);
    CHECK(std::abs(static_cast<double>(*by_rounds[i] - *by_dag[i])) <= 1.0);
  }
  CHECK(rings > 0);
}

TEST_CASE("a folded ring on a uniform idle ring takes S(alpha + b/B), the ring formula") {
  // ring_cluster: n = 4, B = 100 GB/s, alpha = 2 us, no launch latency. All-reduce of 4 MB:
  // S = 6 steps of 1 MB: 6 · (2 + 10) = 72 us, as step mode (collective_test.cpp).
  const auto cluster = testing::ring_cluster(4, 100e9, 2'000'000);
  const hw::Router router(cluster);
  const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(4), .bytes = 4'000'000,
                              .algorithm = Algorithm::ring, .coarse = true};
  CHECK(run_together(router, {req}).front() == doctest::Approx(72.0).epsilon(1e-9));
  CHECK(static_cast<double>(estimate(router, req).ps) * 1e-6 == doctest::Approx(72.0).epsilon(1e-9));
}

// 1 MiB to 4 GiB by factors of 16.
const std::vector<std::int64_t> kStepPlanSizes{1LL << 20, 16LL << 20, 256LL << 20, 4LL << 30};

// Largest |DAG / step − 1| over kStepPlanSizes for a step plan (tree, chain, direct sends).
double worst_dag_disagreement(const std::string& preset, int nodes, Op op, Algorithm algorithm) {
  const auto cluster = hw::load_cluster(preset, shape(nodes, std::nullopt));
  const hw::Router router(cluster);
  double worst = 0;
  for (std::int64_t bytes : kStepPlanSizes) {
    const CollectiveRequest req{.op = op, .gpus = first_gpus(cluster.gpu_count()), .bytes = bytes, .algorithm = algorithm,
                                .protocol = hw::Protocol::simple};
    const double engine = run_together(router, {req}).front();
    const auto solved = step_plan_time(router, req.gpus, make_algorithm(algorithm)->plan(plan_input(cluster, req)));
    REQUIRE(solved.has_value());
    worst = std::max(worst, std::abs(static_cast<double>(solved->ps) * 1e-6 / engine - 1));
  }
  return worst;
}

TEST_CASE("a step plan solved as a DAG takes the engine's time: trees, chains and direct sends" * doctest::test_suite("slow")) {
  // The DAG's flows share links max-min and end in whole picoseconds on the engine's own flow
  // network. Trees and direct sends agree to the picosecond; a 256-slice chain is off by up to
  // 1.5 % (rtx5090, 1 GiB): its many flows' near-ties go first in the order their events were
  // numbered, and the engine's joins draw numbers too, so the two orders are alike, not the same.
  for (const std::string preset : {"dgx-a100", "a100-pcie", "rtx5090"}) {
    CAPTURE(preset);
    CHECK(worst_dag_disagreement(preset, 2, Op::all_reduce, Algorithm::tree) <= 1e-4);
    CHECK(worst_dag_disagreement(preset, 2, Op::broadcast, Algorithm::ring) <= 0.015);
    CHECK(worst_dag_disagreement(preset, 2, Op::all_to_all, Algorithm::direct) <= 1e-4);
  }
}

TEST_CASE("the nccl-tests table at coarse fidelity agrees with full fidelity, the tuner's picks included" * doctest::test_suite("slow")) {
  // The tuner times rings by their lattice at either fidelity (estimate.cpp), so both pick
  // alike; the pick is then folded (rings), walked (trees) or run step by step. Before: the picks
  // differed on a100-pcie 2x8 at 4-16 MiB (coarse ring, full tree: −12.8 %) and trees were timed
  // on paper in coarse mode (+13 % on rtx5090 2x8 at 1 MiB).
  for (const std::string preset : {"a100-pcie", "rtx5090", "dgx-h100"}) {
    const auto cluster = hw::load_cluster(preset, shape(2, std::nullopt));
    const hw::Router router(cluster);
    for (std::int64_t bytes = 1 << 20; bytes <= (1LL << 30); bytes *= 4) {
      CAPTURE(preset);
      CAPTURE(bytes);
      const auto full = simulate_size(router, Op::all_reduce, first_gpus(16), bytes, Algorithm::automatic, true, RingMode::step);
      const auto coarse = simulate_size(router, Op::all_reduce, first_gpus(16), bytes, Algorithm::automatic, true, RingMode::folded);
      CHECK(coarse.algorithm == full.algorithm);
      CHECK(coarse.time_us == doctest::Approx(full.time_us).epsilon(0.02));
    }
  }
}

TEST_CASE("a tree whose every edge shares PCIe uplinks is solved as a DAG, to step mode's time" * doctest::test_suite("slow")) {
  // a100-pcie 8x8 at 256 MiB: 64,512 transfers whose re-solves each span ~1000 flows; timed on
  // paper it is +3.4 %.
  const auto cluster = hw::load_cluster("a100-pcie", shape(8, std::nullopt));
  const hw::Router router(cluster);
  const auto full = simulate_size(router, Op::all_reduce, first_gpus(64), 256 << 20, Algorithm::tree, true, RingMode::step);
  const auto coarse = simulate_size(router, Op::all_reduce, first_gpus(64), 256 << 20, Algorithm::tree, true, RingMode::folded);
  CHECK(coarse.time_us == doctest::Approx(full.time_us).epsilon(1e-4));
}

TEST_CASE("estimate() tracks the engine for every algorithm on an idle dgx-h100") {
  const auto cluster = hw::load_cluster("dgx-h100");
  const hw::Router router(cluster);
  for (Algorithm a : {Algorithm::ring, Algorithm::tree, Algorithm::nvls}) {
    for (hw::Protocol p : all_protocols()) {
      if (a == Algorithm::nvls && p != hw::Protocol::simple) continue;
      CAPTURE(to_string(a) + " " + to_string(p));
      const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(8), .bytes = 256LL << 20, .algorithm = a, .protocol = p};
      // The tree's paper estimate charges each level's bytes at equal shares; under LL128, whose
      // per-slice latency is a third of Simple's, the engine overlaps more of it: 5.3 % apart.
      const double tolerance = p == hw::Protocol::simple ? 0.05 : 0.06;
      CHECK(static_cast<double>(estimate(router, req).ps) * 1e-6 == doctest::Approx(run_together(router, {req}).front()).epsilon(tolerance));
    }
  }
}

TEST_CASE("the method follows the DAG's size, never the CPU spent: a DAG within kDagFlowRanks, then rounds or paper") {
  // 2^26 flow-ranks: 2^20 flows over 64 ranks, 2^19 over 128.
  CHECK(idle_timing(std::int64_t{1} << 20, 64, true) == IdleTiming::dag);
  CHECK(idle_timing(std::int64_t{1} << 20, 64, false) == IdleTiming::dag);
  CHECK(idle_timing((std::int64_t{1} << 20) + 1, 64, true) == IdleTiming::rounds);
  CHECK(idle_timing((std::int64_t{1} << 20) + 1, 64, false) == IdleTiming::paper);
  CHECK(idle_timing((std::int64_t{1} << 20), 128, false) == IdleTiming::paper);
  // A tree's flows grow with its slices: a 256 MiB tree over 32 single-GPU dgx-a100 servers is
  // within the bound (solved), over 64 it is not (on paper). Counted, not timed.
  for (const int servers : {32, 64}) {
    const auto cluster = hw::load_cluster("dgx-a100", shape(servers, 1));
    const hw::Router router(cluster);
    const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(servers), .bytes = 256 << 20,
                                .algorithm = Algorithm::tree, .protocol = hw::Protocol::simple};
    const StepPlan plan = make_algorithm(Algorithm::tree)->plan(plan_input(cluster, req));
    const auto flows = core::flow_count(step_plan_dag(router, req.gpus, plan));
    CAPTURE(servers);
    CAPTURE(flows);
    CHECK(idle_timing(flows, req.gpus.size(), false) == (servers == 32 ? IdleTiming::dag : IdleTiming::paper));
    if (servers == 64) CHECK_FALSE(step_plan_time(router, req.gpus, plan).has_value());
  }
}

TEST_CASE("a plan with a folded ring is not a step plan's DAG") {
  const auto cluster = hw::load_cluster("dgx-a100", shape(2, std::nullopt));
  const hw::Router router(cluster);
  const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(16), .bytes = 1 << 20, .algorithm = Algorithm::ring,
                              .coarse = true};
  CHECK_THROWS_AS(step_plan_dag(router, req.gpus, make_algorithm(Algorithm::ring)->plan(plan_input(cluster, req))),
                  std::invalid_argument);
}

}  // namespace
}  // namespace stepsim::comm
