// The ring lattice solved on one period of its rotation symmetry (lattice_symmetry.hpp) gives the
// full lattice's ends: compared with the same cluster made asymmetric by a link slower by one part
// in 10^12, which the full lattice solves and which moves no end by a picosecond's worth.
#include <doctest/doctest.h>

#include "comm_fixture.hpp"
#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"
#include "sim/comm/algorithm.hpp"
#include "sim/comm/folded_ring.hpp"
#include "sim/comm/lattice_symmetry.hpp"
#include "sim/comm/plan_input.hpp"

namespace stepsim::comm {
namespace {

using testing::first_gpus;
using testing::shape;

struct Lattice {
  std::size_t hops_solved = 0;  // of the first folded ring
  double end_ps = 0;
};

Lattice solve(const hw::Cluster& cluster, Op op, std::int64_t bytes) {
  const hw::Router router(cluster);
  const CollectiveRequest req{.op = op, .gpus = first_gpus(cluster.gpu_count()), .bytes = bytes, .algorithm = Algorithm::ring,
                              .protocol = hw::Protocol::simple, .coarse = true};
  const StepPlan plan = make_algorithm(Algorithm::ring)->plan(plan_input(cluster, req));
  std::vector<HopRoutes> hops(plan.transfers.size());
  std::size_t first_ring = plan.transfers.size();
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& ring = plan.transfers[i].ring;
    if (ring.empty()) continue;
    first_ring = std::min(first_ring, i);
    for (std::size_t p = 0; p < ring.size(); ++p)
      hops[i].push_back(&router.routes(req.gpus[static_cast<std::size_t>(ring[p])], req.gpus[static_cast<std::size_t>(ring[(p + 1) % ring.size()])]));
  }
  REQUIRE(first_ring < plan.transfers.size());
  const auto timing = fold_rings(router, req.gpus, plan, IdleTiming::dag);
  REQUIRE(timing.lattice_end_ps);
  return {lattice_hops(cluster, plan, hops).routes[first_ring].size(), static_cast<double>(*timing.lattice_end_ps)};
}

// `cluster` with the first network link of its second server slower by one part in 10^12.
hw::Cluster nudged(hw::Cluster cluster) {
  for (auto& link : cluster.links)
    if (link.kind == hw::LinkKind::infiniband && cluster.nodes[static_cast<std::size_t>(link.from)].server == 1) {
      link.bytes_per_s *= 1 - 1e-12;
      break;
    }
  return cluster;
}

TEST_CASE("a ring over alike servers is solved on one server's hops, and ends where the full lattice does") {
  // 4 DGX H100 (8 GPUs each on an NVSwitch, a NIC per GPU): each ring turns onto itself every 8
  // hops, one server's.
  const auto cluster = hw::load_cluster("dgx-h100", shape(4, 8));
  for (Op op : {Op::reduce_scatter, Op::all_reduce})
    for (std::int64_t bytes : {std::int64_t{1} << 20, std::int64_t{256} << 20}) {
      CAPTURE(to_string(op));
      CAPTURE(bytes);
      const Lattice reduced = solve(cluster, op, bytes);
      const Lattice full = solve(nudged(cluster), op, bytes);
      CHECK(reduced.hops_solved == 8);
      CHECK(full.hops_solved == 32);
      CHECK(reduced.end_ps == doctest::Approx(full.end_ps).epsilon(1e-9));
    }
}

TEST_CASE("a ring inside one NVSwitch server turns onto itself every hop") {
  const auto cluster = hw::load_cluster("dgx-h100", shape(1, 8));
  CHECK(solve(cluster, Op::all_gather, 64 << 20).hops_solved == 1);
}

}  // namespace
}  // namespace stepsim::comm
