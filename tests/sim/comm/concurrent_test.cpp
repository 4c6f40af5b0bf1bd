// Collectives started together on an idle machine (concurrent.hpp) against the engine running
// them all at once, the reference: trees merged into one plan and solved as a DAG take the
// engine's time; rings stay in the engine; the merged plan on paper is estimate()'s paper, and
// alike plans merged in copies are that merged plan.
#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "comm_fixture.hpp"
#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"
#include "sim/comm/algorithm.hpp"
#include "sim/comm/concurrent.hpp"
#include "sim/comm/plan_input.hpp"
#include "sim/comm/step_plan.hpp"

namespace stepsim::comm {
namespace {

using testing::run_together;
using testing::shape;

// GPU `local` of every server: one DP group of a TP-sharded plan (rank order tp-dp-pp).
std::vector<int> rail(const hw::Cluster& cluster, int local) {
  std::vector<int> g;
  for (int s = 0; s < cluster.gpu_count() / cluster.gpus_per_server; ++s) g.push_back(s * cluster.gpus_per_server + local);
  return g;
}

double us(core::Duration d) { return static_cast<double>(d.ps) * 1e-6; }

double engine_end(const hw::Router& router, const std::vector<CollectiveRequest>& requests) {
  const auto ends = run_together(router, requests);
  return *std::max_element(ends.begin(), ends.end());
}

TEST_CASE("trees of several DP groups together take the engine's time, and sharing a NIC costs what max-min says") {
  // a100-pcie servers: two GPUs behind each NIC, so the rails 0 and 1 share every NIC link; 4
  // servers of 8 GPUs, trees over 4 ranks per group, 4 MiB and 64 MiB (many slices).
  const auto cluster = hw::load_cluster("a100-pcie", shape(4, std::nullopt));
  const hw::Router router(cluster);
  for (const std::int64_t bytes : {4LL << 20, 64LL << 20}) {
    CAPTURE(bytes);
    std::vector<CollectiveRequest> requests;
    for (int local : {0, 1})
      requests.push_back({.op = Op::all_reduce, .gpus = rail(cluster, local), .bytes = bytes, .algorithm = Algorithm::tree,
                          .protocol = hw::Protocol::simple, .coarse = true});
    const double together = us(concurrent_idle_time(router, requests));
    CHECK(together == doctest::Approx(engine_end(router, requests)).epsilon(1e-4));
    const double alone = us(concurrent_idle_time(router, {requests.front()}));
    CHECK(alone == doctest::Approx(engine_end(router, {requests.front()})).epsilon(1e-4));
    CHECK(together > alone);
  }
}

TEST_CASE("rings run in the engine, where their symmetric steps tie as step mode's do") {
  const auto cluster = hw::load_cluster("dgx-a100", shape(4, std::nullopt));
  const hw::Router router(cluster);
  std::vector<CollectiveRequest> requests;
  for (int local = 0; local < 8; ++local)
    requests.push_back({.op = Op::all_reduce, .gpus = rail(cluster, local), .bytes = 32LL << 20, .algorithm = Algorithm::ring,
                        .protocol = hw::Protocol::simple, .coarse = true});
  CHECK(us(concurrent_idle_time(router, requests)) == doctest::Approx(engine_end(router, requests)).epsilon(1e-9));
}

TEST_CASE("merged plans: ranks and transfers shifted, one rank list per rank, on paper as estimate() has it") {
  const auto cluster = hw::load_cluster("dgx-a100", shape(4, 1));
  const hw::Router router(cluster);
  const CollectiveRequest a{.op = Op::all_reduce, .gpus = {0, 1}, .bytes = 1 << 20, .algorithm = Algorithm::tree,
                            .protocol = hw::Protocol::simple};
  CollectiveRequest b = a;
  b.gpus = {2, 3};
  const StepPlan pa = make_algorithm(Algorithm::tree)->plan(plan_input(cluster, a));
  const StepPlan pb = make_algorithm(Algorithm::tree)->plan(plan_input(cluster, b));
  std::vector<int> gpus;
  const StepPlan merged = merge_plans({pa, pb}, {a.gpus, b.gpus}, gpus);
  CHECK(gpus == std::vector<int>{0, 1, 2, 3});
  REQUIRE(merged.transfers.size() == pa.transfers.size() + pb.transfers.size());
  REQUIRE(merged.rank_done.size() == 4);
  const auto& shifted = merged.transfers[pa.transfers.size()];
  CHECK(shifted.src == pb.transfers.front().src + 2);
  CHECK(shifted.dst == pb.transfers.front().dst + 2);
  for (std::size_t i = 0; i < pb.transfers.size(); ++i)
    for (std::size_t k = 0; k < pb.transfers[i].after.size(); ++k)
      CHECK(merged.transfers[pa.transfers.size() + i].after[k] == pb.transfers[i].after[k] + static_cast<int>(pa.transfers.size()));
  // One plan alone on paper is estimate()'s time for its request.
  CHECK(estimate_plan(router, a.gpus, pa).ps == estimate(router, a).ps);

  StepPlan later = pb;
  later.launch_latency_ps += 1;
  CHECK_THROWS_AS(merge_plans({pa, later}, {a.gpus, b.gpus}, gpus), std::invalid_argument);
  CHECK_THROWS_AS(merge_plans({pa}, {a.gpus, b.gpus}, gpus), std::invalid_argument);
  const CollectiveRequest ring{.op = Op::all_reduce, .gpus = {0, 1, 2, 3}, .bytes = 1 << 20, .algorithm = Algorithm::ring,
                               .coarse = true};
  CHECK_THROWS_AS(merge_plans({make_algorithm(Algorithm::ring)->plan(plan_input(cluster, ring))}, {ring.gpus}, gpus),
                  std::invalid_argument);
}

TEST_CASE("alike plans merge as one plan in copies: expanded, the merged plan; on paper, its time") {
  // Trees of 64 MiB (many slices) over one GPU per server, on every rail of 4 servers.
  const auto cluster = hw::load_cluster("dgx-a100", shape(4, std::nullopt));
  const hw::Router router(cluster);
  std::vector<StepPlan> plans;
  std::vector<std::vector<int>> groups;
  for (int local = 0; local < 8; ++local) {
    const CollectiveRequest r{.op = Op::all_reduce, .gpus = rail(cluster, local), .bytes = 64LL << 20,
                              .algorithm = Algorithm::tree, .protocol = hw::Protocol::simple, .coarse = true};
    plans.push_back(make_algorithm(Algorithm::tree)->plan(plan_input(cluster, r)));
    groups.push_back(r.gpus);
  }
  std::vector<const StepPlan*> each;
  for (const StepPlan& p : plans) each.push_back(&p);
  std::vector<int> gpus;
  const StepPlan merged = merge_plans(plans, groups, gpus);
  const auto copies = merged_as_copies(each);
  REQUIRE(copies.has_value());
  CHECK(copies->copies == 8);
  CHECK(copies->transfers.size() == plans.front().transfers.size());
  CHECK(expanded(*copies) == merged);
  // The rails rename onto each other, so the paper reads the first group only, to the same time.
  CHECK(paper_uses_copies(router, gpus, *copies));
  CHECK(estimate_plan(router, gpus, *copies).ps == estimate_plan(router, gpus, merged).ps);

  CHECK_FALSE(merged_as_copies({each.front()}).has_value());  // one plan: nothing to merge
  StepPlan in_copies = *copies;  // already in copies
  CHECK_FALSE(merged_as_copies({&in_copies, &in_copies}).has_value());
  const CollectiveRequest ring{.op = Op::all_reduce, .gpus = rail(cluster, 0), .bytes = 64LL << 20,
                               .algorithm = Algorithm::ring, .protocol = hw::Protocol::simple, .coarse = true};
  const StepPlan folded = make_algorithm(Algorithm::ring)->plan(plan_input(cluster, ring));
  CHECK_FALSE(merged_as_copies({&folded, &folded}).has_value());  // a folded ring: timed by its lattice
  StepPlan later = plans.back();
  later.launch_latency_ps += 1;
  each.back() = &later;
  CHECK_FALSE(merged_as_copies(each).has_value());  // not all the same plan
}

}  // namespace
}  // namespace stepsim::comm
