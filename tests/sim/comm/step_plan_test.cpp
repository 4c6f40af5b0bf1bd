// Pins sim/comm/step_plan.cpp and the paper of a plan in copies (paper.cpp): a tree's channels
// kept as the first channel's trees, written out transfer for transfer as the whole plan, and
// timed on paper from the first copy as the whole plan is.
#include <doctest/doctest.h>

#include <cstdlib>

#include "comm_fixture.hpp"
#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"
#include "sim/comm/algorithm.hpp"
#include "sim/comm/collective.hpp"
#include "sim/comm/paper.hpp"
#include "sim/comm/perf_table.hpp"
#include "sim/comm/plan_input.hpp"

namespace stepsim::comm {
namespace {

using testing::first_gpus;
using testing::shape;

StepPlan tree_plan(const hw::Cluster& cluster, int gpus, std::int64_t bytes, bool copies) {
  PlanInput in = plan_input(cluster, {.op = Op::all_reduce, .gpus = first_gpus(gpus), .bytes = bytes, .algorithm = Algorithm::tree});
  in.copies = copies;
  return make_tree()->plan(in);
}

bool same_transfer(const PlannedTransfer& x, const PlannedTransfer& y) {
  return x.src == y.src && x.dst == y.dst && x.hop == y.hop && x.is_join == y.is_join && x.bytes == y.bytes &&
         x.after == y.after && x.latency_steps == y.latency_steps && x.step_latency_ps == y.step_latency_ps &&
         x.network_step_latency_ps == y.network_step_latency_ps && x.wire_factor == y.wire_factor;
}

void check_same(const StepPlan& a, const StepPlan& b) {
  REQUIRE(a.transfers.size() == b.transfers.size());
  std::size_t first_difference = a.transfers.size();
  for (std::size_t i = a.transfers.size(); i-- > 0;)
    if (!same_transfer(a.transfers[i], b.transfers[i])) first_difference = i;
  CHECK(first_difference == a.transfers.size());  // none differs
  CHECK(a.rank_done == b.rank_done);
  CHECK(a.launch_latency_ps == b.launch_latency_ps);
  CHECK(b.copies == 1);
}

TEST_CASE("a tree's channels kept as copies of the first write out as the whole plan") {
  for (const char* preset : {"dgx-a100", "dgx-h100"})
    for (int servers : {2, 3, 5}) {
      INFO(preset << " x " << servers);
      const auto cluster = hw::load_cluster(preset, shape(servers, std::nullopt));
      const int gpus = cluster.gpu_count();
      const std::int64_t bytes = std::int64_t{1} << 28;  // 16 trees of 16 MiB: 32 slices each
      const StepPlan compact = tree_plan(cluster, gpus, bytes, true);
      // 8 channels: the first's two trees, 32 slices x 2(n − 1) transfers each.
      CHECK(compact.copies == 8);
      CHECK(compact.transfers.size() == std::size_t{2} * 32 * 2 * static_cast<std::size_t>(gpus - 1));
      check_same(tree_plan(cluster, gpus, bytes, false), expanded(compact));
    }
}

TEST_CASE("a tree whose channels are not each other's copies is kept whole") {
  // 16 trees: 2^28 + 1 bytes gives the first tree one byte more than the others.
  const auto cluster = hw::load_cluster("dgx-a100", shape(2, std::nullopt));
  CHECK(tree_plan(cluster, 16, (std::int64_t{1} << 28) + 1, true).copies == 1);
  // One server: a single channel.
  CHECK(tree_plan(hw::load_cluster("dgx-a100", shape(1, std::nullopt)), 8, std::int64_t{1} << 28, true).copies == 1);
  // The servers' GPUs taken in turn (ranks 0, 2, 4, ... on server 0): ranks of one depth in
  // different servers are ordered by number, which turning ranks inside servers does not keep.
  std::vector<int> interleaved;
  for (int i = 0; i < 8; ++i) interleaved.push_back(i), interleaved.push_back(8 + i);
  PlanInput in = plan_input(cluster, {.op = Op::all_reduce, .gpus = interleaved, .bytes = std::int64_t{1} << 28,
                                      .algorithm = Algorithm::tree});
  in.copies = true;
  CHECK(make_tree()->plan(in).copies == 1);
}

TEST_CASE("a tree in copies is timed on paper from its first channel as the whole plan is" * doctest::test_suite("slow")) {
  for (const char* preset : {"dgx-a100", "dgx-h100"})
    for (int servers : {2, 3, 5})
      for (std::int64_t bytes : {std::int64_t{1} << 20, std::int64_t{1} << 28, std::int64_t{16} * 12345})
        for (hw::Protocol protocol : {hw::Protocol::simple, hw::Protocol::ll128, hw::Protocol::ll}) {
          INFO(preset << " x " << servers << ", " << bytes << " B, " << to_string(protocol));
          const auto cluster = hw::load_cluster(preset, shape(servers, std::nullopt));
          const hw::Router router(cluster);
          const auto gpus = first_gpus(cluster.gpu_count());
          const CollectiveRequest req{.op = Op::all_reduce, .gpus = gpus, .bytes = bytes, .algorithm = Algorithm::tree,
                                      .protocol = protocol};
          PlanInput in = plan_input(cluster, req);
          const StepPlan whole = make_tree()->plan(in);
          in.copies = true;
          const StepPlan compact = make_tree()->plan(in);
          REQUIRE(paper_uses_copies(router, gpus, compact));
          // The same bytes summed on each link in another order (LL's 1/share wire bytes are not
          // exact binary fractions): equal to the picosecond.
          CHECK(std::llabs(estimate_plan(router, gpus, compact).ps - estimate_plan(router, gpus, whole).ps) <= 1);
        }
}

TEST_CASE("a tree whose channels are not alike on the machine is timed whole") {
  // Server 0's NIC 3 at half its rate: channel 3 leaves through it, so no renaming of links maps
  // channel 2's routes onto channel 3's, and the paper falls back to the whole plan's, which it
  // then matches exactly.
  auto cluster = hw::load_cluster("dgx-a100", shape(2, std::nullopt));
  int slowed = 0;
  for (auto& link : cluster.links) {
    const auto& from = cluster.nodes[static_cast<std::size_t>(link.from)];
    if (from.kind == hw::NodeKind::nic && from.server == 0 && link.kind == hw::LinkKind::infiniband && slowed++ == 3)
      link.bytes_per_s /= 2;
  }
  REQUIRE(slowed == 8);
  const hw::Router router(cluster);
  const auto gpus = first_gpus(16);
  const StepPlan compact = tree_plan(cluster, 16, std::int64_t{1} << 28, true);
  REQUIRE(compact.copies == 8);
  CHECK_FALSE(paper_uses_copies(router, gpus, compact));
  CHECK(estimate_plan(router, gpus, compact).ps == estimate_plan(router, gpus, tree_plan(cluster, 16, std::int64_t{1} << 28, false)).ps);
}

TEST_CASE("a paper kept for one group starts afresh for another, and is the paper a fresh one gives") {
  // Two groups of two dgx-h100 each, their trees in copies, timed in turn on one memo.
  const auto cluster = hw::load_cluster("dgx-h100", shape(4, std::nullopt));
  const hw::Router router(cluster);
  std::vector<int> second;
  for (int g = 16; g < 32; ++g) second.push_back(g);
  for (const auto& gpus : {first_gpus(16), second}) REQUIRE(cluster.server_of(gpus.front()) != cluster.server_of(gpus.back()));
  PaperMemo kept;
  for (int round = 0; round < 2; ++round)
    for (const auto& gpus : {first_gpus(16), second})
      for (std::int64_t bytes : {std::int64_t{1} << 20, std::int64_t{1} << 28}) {
        PlanInput in = plan_input(cluster, {.op = Op::all_reduce, .gpus = gpus, .bytes = bytes, .algorithm = Algorithm::tree});
        in.copies = true;
        const StepPlan plan = make_tree()->plan(in);
        REQUIRE(plan.copies == 8);
        const std::vector<std::optional<std::int64_t>> none(plan.transfers.size());
        PaperMemo fresh;
        CHECK(on_paper(router, gpus, plan, none, kept) == on_paper(router, gpus, plan, none, fresh));
        CHECK(kept.gpus == gpus);
      }
}

TEST_CASE("the tuner's papers kept from size to size give each size the time a fresh tuner gives it") {
  // An nccl-tests sweep keeps one PaperMemo for all its sizes: routes, and the renaming of links
  // its trees' copies found. Every row must be the row of a tuner that starts afresh, on machines
  // where the copies rename (dgx) and where they do not (the slowed NIC).
  auto slowed = hw::load_cluster("dgx-a100", shape(2, std::nullopt));
  for (auto& link : slowed.links)
    if (slowed.nodes[static_cast<std::size_t>(link.from)].kind == hw::NodeKind::nic && link.kind == hw::LinkKind::infiniband) {
      link.bytes_per_s /= 2;
      break;
    }
  for (const hw::Cluster& cluster : {hw::load_cluster("dgx-h100", shape(3, std::nullopt)), slowed}) {
    const hw::Router router(cluster);
    const auto gpus = first_gpus(cluster.gpu_count());
    const auto sizes = size_sweep(1LL << 10, 1LL << 30, 4);
    const PerfTable table = simulate_sweep(router, Op::all_reduce, gpus, sizes, Algorithm::automatic, false);
    REQUIRE(table.rows.size() == sizes.size());
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const PerfRow fresh = simulate_size(router, Op::all_reduce, gpus, sizes[k], Algorithm::automatic, false);
      INFO(cluster.name << ", " << sizes[k] << " B");
      CHECK(table.rows[k].time_us == fresh.time_us);
      CHECK(table.rows[k].algorithm == fresh.algorithm);
      CHECK(table.rows[k].protocol == fresh.protocol);
    }
  }
}

}  // namespace
}  // namespace stepsim::comm
