// Pins sim/comm/folded_ring.cpp: coarse mode (one flow per ring, the step lattice's latency)
// against step mode, the reference it replaces for large groups (DESIGN.md, sim/comm).
#include <doctest/doctest.h>

#include <string>

#include "comm_fixture.hpp"
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

TEST_CASE("coarse mode agrees with step mode within 2 % from 1 MiB to 8 GiB") {
  // Rings whose hops are alike: every hop over the NICs (4 and 16 servers of 1 GPU), every hop
  // over PCIe (16 GPUs in one PCIe server), and the hierarchical all-reduce, whose phases are
  // such rings. The lattice recurrence of folded_ring.hpp is exact there: T = S·(α + b/B).
  const std::vector<Machine> machines{{"dgx-a100", 4, 1}, {"dgx-a100", 16, 1}, {"a100-pcie", 1, 16}};
  for (const auto& m : machines)
    for (Op op : {Op::all_reduce, Op::all_gather, Op::reduce_scatter}) {
      const std::string what = m.preset + " " + std::to_string(m.nodes) + "x" + std::to_string(m.gpus_per_node) + " " + to_string(op);
      CAPTURE(what);
      CHECK(worst_disagreement(m, op, Algorithm::ring) <= 0.02);
    }
  // Hierarchical needs several ranks per server (with one it is the ring, tested above).
  CHECK(worst_disagreement({"dgx-a100", 2, 8}, Op::all_reduce, Algorithm::hierarchical) <= 0.02);
}

TEST_CASE("coarse mode on rings that mix NVLink or PCIe hops with NIC hops: the known gap") {
  // Not yet within 2 %: how much a step's crossing of a shared link is slowed by the other
  // rings' steps depends on how they line up in time. folded_ring.cpp takes them as random
  // arrivals (processor sharing); step mode lines some up. Worst today, all at 4–32 MiB:
  // dgx-a100 2x8 ring all-reduce −2.9 %, all-gather/reduce-scatter −5.5 %; a100-pcie 2x8 ring up
  // to −17 % (and −9 % at 1 GiB, where step mode's own curve is uneven), hierarchical −6 %.
  // These bounds keep it from getting worse; the goal stays 2 %.
  CHECK(worst_disagreement({"dgx-a100", 2, 8}, Op::all_reduce, Algorithm::ring) <= 0.035);
  CHECK(worst_disagreement({"dgx-a100", 2, 8}, Op::all_gather, Algorithm::ring) <= 0.06);
  CHECK(worst_disagreement({"a100-pcie", 2, 8}, Op::all_reduce, Algorithm::ring) <= 0.18);
  CHECK(worst_disagreement({"a100-pcie", 2, 8}, Op::all_reduce, Algorithm::hierarchical) <= 0.07);
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
