// Pins sim/comm/folded_ring.cpp: coarse mode (one flow per ring, the step lattice's latency)
// against step mode, the reference it replaces for large groups (DESIGN.md, sim/comm).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "comm_fixture.hpp"
#include "sim/comm/algorithm.hpp"
#include "sim/comm/folded_ring.hpp"
#include "sim/comm/perf_table.hpp"
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

TEST_CASE("coarse mode agrees with step mode within 2 % on rings that mix NVLink and NIC hops") {
  // Every channel's ring crosses each GPU's NVLink port, so seven rings' steps share it, and they
  // reach it at times that the slow NIC hops skew: the lattices of all rings are walked together
  // (folded_ring.hpp). Worst when a step's crossing was taken to meet the others at random:
  // −5.5 % (dgx-a100 2x8 all-gather, 8 MiB), −9.1 % (dgx-h100 2x8 all-gather, 32 MiB).
  const std::vector<Machine> machines{{"dgx-a100", 2, 8}, {"dgx-a100", 4, 8}, {"dgx-h100", 2, 8}};
  check_ring_ops_within(machines, 0.02);
}

TEST_CASE("coarse mode agrees with step mode within 2 % on rings staged through PCIe and host memory" * doctest::test_suite("slow")) {
  // A hop staged through the CPU crosses several loaded links at once, and a hop between sockets
  // splits over two routes. Step mode's flows share those links max-min, and the lattice's flows
  // do too (every link a route crosses, less those another link of the route implies). Worst
  // when each bottleneck link served its crossings on its own by processor sharing: −7.8 %
  // (a100-pcie 2x8), −4.3 % (rtx4090 2x8), −8.3 % (rtx5090 2x8), −10 % (h100-pcie-nvlink 2x8,
  // 8 GiB), −22.5 % (one rtx5090 box, 2 MiB, whose hops all go through host memory).
  const std::vector<Machine> machines{
      {"a100-pcie", 2, 8}, {"rtx4090", 2, 8}, {"rtx5090", 2, 8}, {"h100-pcie-nvlink", 2, 8}, {"rtx5090", 1, 8}};
  check_ring_ops_within(machines, 0.02);
}

TEST_CASE("above kEventLatticeJobs the round-by-round lattice stays within 5 % of the max-min walk") {
  // Levels too large for the max-min walk (512 ranks × 8 channels) are walked round by round, by
  // processor sharing on each hop's bottleneck links; that walk never lets two rounds share a
  // link, so it is fast where rings drift apart.
  for (const Machine& m : {Machine{"dgx-a100", 2, 8}, Machine{"dgx-a100", 4, 8}, Machine{"dgx-h100", 2, 8}}) {
    const auto cluster = hw::load_cluster(m.preset, shape(m.nodes, m.gpus_per_node));
    const hw::Router router(cluster);
    for (std::int64_t bytes : kSizes) {
      CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(cluster.gpu_count()), .bytes = bytes,
                            .algorithm = Algorithm::ring};
      const double step = run_together(router, {req}).front() * 1e6;  // ps
      req.coarse = true;
      const StepPlan plan = make_algorithm(Algorithm::ring)->plan(plan_input(cluster, req));
      const auto by_max_min = folded_ring_latencies(router, req.gpus, plan);
      const auto by_step = folded_ring_latencies(router, req.gpus, plan, 0);
      for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
        REQUIRE(by_max_min[i].has_value() == by_step[i].has_value());
        if (by_max_min[i]) CHECK(std::abs(static_cast<double>(*by_step[i] - *by_max_min[i])) <= 0.05 * step);
      }
    }
  }
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

}  // namespace
}  // namespace stepsim::comm
