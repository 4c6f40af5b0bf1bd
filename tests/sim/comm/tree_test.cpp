// Pins sim/comm/tree.cpp: one tree pair per channel, each channel's chain rotated so that every
// NIC of a server carries the same traffic, which lifts 2-server trees above the ring's ceiling.
#include <doctest/doctest.h>

#include <map>

#include "comm_fixture.hpp"
#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"
#include "sim/comm/algorithm.hpp"
#include "sim/comm/plan_input.hpp"

namespace stepsim::comm {
namespace {

using testing::first_gpus;
using testing::run_together;
using testing::shape;

// Bytes each NIC of server 0 sends into the network under a plan (the NIC→leaf link).
std::map<int, double> bytes_out_per_nic(const hw::Router& router, const CollectiveRequest& req, const StepPlan& plan) {
  const auto& cluster = router.cluster();
  std::map<int, double> out;
  for (const auto& t : plan.transfers) {
    if (t.is_join) continue;
    const auto routes = hop_routes(router, req.gpus[static_cast<std::size_t>(t.src)], req.gpus[static_cast<std::size_t>(t.dst)], t.hop);
    for (const auto& route : routes)
      for (int l : route) {
        const auto& link = cluster.links[static_cast<std::size_t>(l)];
        const auto& from = cluster.nodes[static_cast<std::size_t>(link.from)];
        if (from.kind == hw::NodeKind::nic && from.server == 0 && link.kind == hw::LinkKind::infiniband)
          out[link.from] += static_cast<double>(t.bytes) / static_cast<double>(routes.size());
      }
  }
  return out;
}

TEST_CASE("a 2-server tree spreads its traffic evenly over all 8 NICs of a dgx-a100") {
  // 8 channels x 2 trees, each tree S/16. Channel c's chain starts at local GPU c (its NIC c) and
  // its mirror's at local c-1, so each NIC is the head of 2 trees. In each tree a head sends S/16
  // to the other server (up in one tree, down in the other): S/8 per NIC, S in all per direction.
  const auto cluster = hw::load_cluster("dgx-a100", shape(2, std::nullopt));
  const hw::Router router(cluster);
  const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(16), .bytes = 1LL << 30, .algorithm = Algorithm::tree};
  const auto plan = make_tree()->plan(plan_input(cluster, req));
  const auto per_nic = bytes_out_per_nic(router, req, plan);
  REQUIRE(per_nic.size() == 8);
  for (const auto& [nic, bytes] : per_nic) CHECK(bytes == doctest::Approx(static_cast<double>(1LL << 30) / 8).epsilon(0.001));
}

TEST_CASE("a 2-server tree beats the ring's busbw on an idle dgx-a100 pair") {
  // Per server and direction, the ring sends 2(n-1)/n·S over its NICs (each of the 8 rings
  // crosses each way once and every byte crosses 2(n-1)/n times), so ring busbw is bounded by the
  // NICs' total: 8 x 25 GB/s x 0.94 = 188 GB/s. The double binary tree sends S per server and
  // direction (S/2 up in one tree, S/2 down in the other; Sanders et al. 2009), so its NIC bound
  // is busbw 2(n-1)/n x 188 = 352 GB/s; NVLink binds first: each GPU sends 1.75 S over NVLink
  // (2 x S/16 per tree where it is mid-chain, S/16 where it is head or tail), so algbw <=
  // 240 / 1.75 = 137 GB/s, busbw <= 257 GB/s. Hence tree > ring, and tree <= 257.
  const auto cluster = hw::load_cluster("dgx-a100", shape(2, std::nullopt));
  const hw::Router router(cluster);
  const std::int64_t bytes = 4LL << 30;
  const auto times = run_together(router, {{.op = Op::all_reduce, .gpus = first_gpus(16), .bytes = bytes, .algorithm = Algorithm::ring}});
  const auto tree = run_together(router, {{.op = Op::all_reduce, .gpus = first_gpus(16), .bytes = bytes, .algorithm = Algorithm::tree}});
  auto busbw = [&](double us) { return static_cast<double>(bytes) / (us * 1e-6) * 2.0 * 15.0 / 16.0 / 1e9; };
  CHECK(busbw(times.front()) < 188.0);
  CHECK(busbw(tree.front()) > 1.25 * busbw(times.front()));
  CHECK(busbw(tree.front()) < 257.0);
}

TEST_CASE("the tuner takes the ring for mid sizes and the tree for large ones on two dgx-a100") {
  // The tree's per-slice step latencies cost it at 64 MiB; from 256 MiB its higher ceiling wins.
  const auto cluster = hw::load_cluster("dgx-a100", shape(2, std::nullopt));
  const hw::Router router(cluster);
  auto choice = [&](std::int64_t bytes) {
    return choose_algorithm(router, {.op = Op::all_reduce, .gpus = first_gpus(16), .bytes = bytes});
  };
  CHECK(choice(64LL << 20) == Algorithm::ring);
  CHECK(choice(1LL << 30) == Algorithm::tree);
}

TEST_CASE("estimate() tracks the engine for the 2-server tree") {
  const auto cluster = hw::load_cluster("dgx-a100", shape(2, std::nullopt));
  const hw::Router router(cluster);
  const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(16), .bytes = 1LL << 30, .algorithm = Algorithm::tree};
  CHECK(static_cast<double>(estimate(router, req).ps) * 1e-6 == doctest::Approx(run_together(router, {req}).front()).epsilon(0.05));
}

}  // namespace
}  // namespace stepsim::comm
