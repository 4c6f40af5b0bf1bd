// Pins sim/comm/collective.cpp and the algorithms against physics: the ring formula, max-min sharing between collectives, the latency floor and the tuner (every timing method against step mode: timing_methods_test.cpp).
#include <doctest/doctest.h>

#include <set>
#include <tuple>

#include "comm_fixture.hpp"
#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"
#include "sim/comm/algorithm.hpp"
#include "sim/comm/perf_table.hpp"
#include "sim/comm/plan_input.hpp"

namespace stepsim::comm {
namespace {

using testing::first_gpus;
using testing::ring_cluster;
using testing::run_together;
using testing::shape;

TEST_CASE("a ring all-reduce on an idle ring takes 2(n-1)/n S/B + 2(n-1) alpha") {
  // DESIGN.md: n = 4, S = 4 MB, B = 100 GB/s, alpha = 2 us. Each of the 2(n-1) = 6 steps moves
  // S/n = 1 MB per hop: 10 us + 2 us. Total 6 * 12 = 72 us. Launch latency is 0 here.
  for (std::int64_t chunk : {1LL << 40, 256'000LL}) {  // one slice, then 4 slices per step
    const auto cluster = ring_cluster(4, 100e9, 2'000'000, chunk);
    const hw::Router router(cluster);
    const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(4), .bytes = 4'000'000, .algorithm = Algorithm::ring};
    CHECK(run_together(router, {req}).front() == doctest::Approx(72.0).epsilon(1e-9));
    CHECK(static_cast<double>(estimate(router, req).ps) * 1e-6 == doctest::Approx(72.0).epsilon(1e-9));
  }
}

TEST_CASE("a plan laid out once and emitted twice on the same streams runs twice, back to back") {
  // The ring all-reduce above: 72 us each. The second waits on the streams for the first, so the
  // last member finishes at 144 us, as with two add_collective calls.
  const auto cluster = ring_cluster(4, 100e9, 2'000'000);
  const hw::Router router(cluster);
  const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(4), .bytes = 4'000'000, .algorithm = Algorithm::ring};
  core::Engine engine;
  Network net(engine, cluster, router);
  std::vector<core::StreamId> streams;
  for (int g = 0; g < 4; ++g) streams.push_back(engine.add_stream(engine.add_device(), core::StreamKind::communication));
  const CollectiveTasks first = add_collective(net, req, streams);
  const PlannedCollective* kept = net.planned(key_of(req));
  REQUIRE(kept != nullptr);
  const LaidOutCollective laid_out = lay_out(net, req, *kept);
  CHECK(laid_out.transfers.size() == kept->plan.transfers.size());
  const CollectiveTasks second = emit_collective(net, laid_out, streams);
  CHECK_THROWS_AS(emit_collective(net, laid_out, {streams[0]}), std::invalid_argument);
  engine.run();
  for (std::size_t r = 0; r < 4; ++r) {
    CHECK(static_cast<double>(engine.finish_of(first.members[r]).ps) * 1e-6 <= doctest::Approx(72.0).epsilon(1e-9));
    CHECK(static_cast<double>(engine.start_of(second.members[r]).ps) * 1e-6 == doctest::Approx(static_cast<double>(engine.finish_of(first.members[r]).ps) * 1e-6));
  }
  double last = 0;
  for (const auto m : second.members) last = std::max(last, static_cast<double>(engine.finish_of(m).ps) * 1e-6);
  CHECK(last == doctest::Approx(144.0).epsilon(1e-9));
}

TEST_CASE("a network puts a cluster link in the engine when something first uses it, once") {
  // 2 x dgx-a100: a collective on GPUs 0 and 8 crosses the two servers' NICs and a leaf, not
  // the NVSwitch links or the other NICs, which stay out of the engine.
  const auto cluster = hw::load_cluster("dgx-a100", shape(2, std::nullopt));
  const hw::Router router(cluster);
  core::Engine engine;
  Network net(engine, cluster, router);
  CHECK(engine.link_count() == 0);
  const int first = router.routes(0, 8).front().front();
  CHECK_FALSE(net.used_link(first));
  const core::LinkId id = net.link(first);
  CHECK(net.link(first) == id);
  CHECK(net.used_link(first) == id);
  CHECK(engine.link_count() == 1);
  std::vector<core::StreamId> streams;
  for (int g = 0; g < 2; ++g) streams.push_back(engine.add_stream(engine.add_device(), core::StreamKind::communication));
  add_collective(net, {.op = Op::all_reduce, .gpus = {0, 8}, .bytes = 1 << 20, .algorithm = Algorithm::ring}, streams);
  std::set<int> crossed;
  for (const auto& pair : {router.routes(0, 8), router.routes(8, 0)})
    for (const auto& route : pair) crossed.insert(route.begin(), route.end());
  CHECK(engine.link_count() == crossed.size());
  CHECK(crossed.size() < cluster.links.size() / 4);
}

TEST_CASE("an estimate kept in a network's store is the estimate, shared by the networks of one plan cache") {
  // The ring all-reduce above (72 us). Kept under key_of(request) at the first ask; a second
  // network on the same PlanCache (another plan of a sweep) finds it without estimating again.
  const auto cluster = ring_cluster(4, 100e9, 2'000'000);
  const hw::Router router(cluster);
  const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(4), .bytes = 4'000'000, .algorithm = Algorithm::ring};
  PlanCache shared(cluster);
  core::Engine first_engine, second_engine;
  Network first(first_engine, cluster, router, &shared), second(second_engine, cluster, router, &shared);
  CHECK_FALSE(second.estimated(key_of(req)).has_value());
  CHECK(estimate(first, req) == estimate(router, req));
  REQUIRE(second.estimated(key_of(req)).has_value());
  CHECK(*second.estimated(key_of(req)) == estimate(router, req));
  // Without a shared cache a network keeps its own.
  core::Engine alone_engine;
  Network alone(alone_engine, cluster, router);
  CHECK_FALSE(alone.estimated(key_of(req)).has_value());
  CHECK(estimate(alone, req) == estimate(router, req));
  CHECK(alone.estimated(key_of(req)).has_value());
  // A cache made for another cluster object is not used: the network keeps its own.
  const auto other_cluster = ring_cluster(4, 100e9, 2'000'000);
  PlanCache other(other_cluster);
  core::Engine elsewhere_engine;
  Network elsewhere(elsewhere_engine, cluster, router, &other);
  CHECK(estimate(elsewhere, req) == estimate(router, req));
  CHECK(elsewhere.estimated(key_of(req)).has_value());
  CHECK_FALSE(other.find_estimate(key_of(req)).has_value());
}

TEST_CASE("ring all-gather and reduce-scatter take (n-1) steps of S/n") {
  // n = 4, S = 4 MB: 3 steps of (1 MB / 100 GB/s + 2 us) = 36 us.
  const auto cluster = ring_cluster(4, 100e9, 2'000'000);
  const hw::Router router(cluster);
  for (Op op : {Op::all_gather, Op::reduce_scatter}) {
    const CollectiveRequest req{.op = op, .gpus = first_gpus(4), .bytes = 4'000'000, .algorithm = Algorithm::ring};
    CHECK(run_together(router, {req}).front() == doctest::Approx(36.0).epsilon(1e-9));
  }
}

TEST_CASE("two collectives that share a link slow each other as max-min sharing says") {
  // 4 GPUs on one switch, 100 GB/s each way per GPU link. Send 0->1 alone: 1 GB / 100 GB/s =
  // 10 ms. Sends 0->1 and 2->1 share the switch->1 link: 50 GB/s each, both end at 20 ms.
  // A third send 3->2 shares nothing with them and still takes 10 ms.
  const auto cluster = testing::star_cluster(4, 100e9);
  const hw::Router router(cluster);
  const CollectiveRequest a{.op = Op::send_recv, .gpus = {0, 1}, .bytes = 1'000'000'000};
  const CollectiveRequest b{.op = Op::send_recv, .gpus = {2, 1}, .bytes = 1'000'000'000};
  const CollectiveRequest c{.op = Op::send_recv, .gpus = {3, 2}, .bytes = 1'000'000'000};
  CHECK(run_together(router, {a}).front() == doctest::Approx(10'000.0));
  const auto all = run_together(router, {a, b, c});
  CHECK(all[0] == doctest::Approx(20'000.0));
  CHECK(all[1] == doctest::Approx(20'000.0));
  CHECK(all[2] == doctest::Approx(10'000.0));
}

TEST_CASE("dgx-b200: 8-GPU all-reduce bus bandwidth within 10 % of the published 830 GB/s") {
  // hardware/presets/dgx-b200.yaml [1807]: a user's 8x B200 all_reduce_perf peak "830+" GB/s
  // (NVIDIA/nccl #1807; size not stated, so the largest size nccl-tests' default sweep reaches).
  const auto cluster = hw::load_cluster("dgx-b200");
  const hw::Router router(cluster);
  const PerfRow row = simulate_size(router, Op::all_reduce, first_gpus(8), 8LL << 30, Algorithm::automatic);
  CHECK(row.busbw_gbps == doctest::Approx(830.0).epsilon(0.10));
}

TEST_CASE("gb200-nvl72: all-reduce bus bandwidth within 10 % of the published figures in the NVLink domain") {
  // hardware/presets/gb200-nvl72.yaml [AZ]: NCCL 2.25.1 Ring on the 4 GPUs of one tray, 679.61
  // GB/s at 8 GB; [MN]: 8 GPUs of two trays, 811 GB/s (algorithm and size not stated, so the tuner's
  // choice at the largest size nccl-tests' default sweep reaches).
  const auto cluster = hw::load_cluster("gb200-nvl72");
  const hw::Router router(cluster);
  CHECK(simulate_size(router, Op::all_reduce, first_gpus(4), 8LL << 30, Algorithm::ring).busbw_gbps ==
        doctest::Approx(679.61).epsilon(0.10));
  CHECK(simulate_size(router, Op::all_reduce, first_gpus(8), 8LL << 30, Algorithm::automatic).busbw_gbps ==
        doctest::Approx(811.0).epsilon(0.10));
}

TEST_CASE("mi300x-oam: RCCL's 8-GPU all-reduce drives the 7 xGMI links at once, within 10 % of the published 319 GB/s") {
  // hardware/presets/mi300x-oam.yaml [RB]: RCCL 2.22.3 all_reduce_perf, 8 MI300X, busbw 318.98
  // GB/s at 16 GiB. The tuner picks all-pairs (direct) over the mesh; a single ring would have one
  // 64 GB/s link per step: 64 x 0.712 = 45.6 GB/s.
  const auto cluster = hw::load_cluster("mi300x-oam");
  const hw::Router router(cluster);
  const PerfRow best = simulate_size(router, Op::all_reduce, first_gpus(8), 16LL << 30, Algorithm::automatic);
  CHECK(best.busbw_gbps == doctest::Approx(318.98).epsilon(0.10));
  CHECK(simulate_size(router, Op::all_reduce, first_gpus(8), 16LL << 30, Algorithm::ring).busbw_gbps ==
        doctest::Approx(64 * 0.712).epsilon(0.02));
  // Reduce-scatter and all-gather are each half of it: the same bus bandwidth.
  CHECK(simulate_size(router, Op::reduce_scatter, first_gpus(8), 16LL << 30, Algorithm::direct).busbw_gbps ==
        doctest::Approx(best.busbw_gbps).epsilon(0.02));
  CHECK(simulate_size(router, Op::all_gather, first_gpus(8), 16LL << 30, Algorithm::direct).busbw_gbps ==
        doctest::Approx(best.busbw_gbps).epsilon(0.02));
}

TEST_CASE("all-pairs all-reduce is a mesh's only: on NVSwitch the tuner keeps NCCL's algorithms") {
  const auto cluster = hw::load_cluster("dgx-h100");
  const hw::Router router(cluster);
  CHECK_THROWS_AS(simulate_size(router, Op::all_reduce, first_gpus(8), 1LL << 30, Algorithm::direct), std::invalid_argument);
}

TEST_CASE("DP traffic on a NIC does not slow TP on NVLink: they share no link") {
  // Max-min gives each flow its own bottleneck when routes are disjoint: a TP all-reduce over
  // server 0's NVLink and a send 0->8 through the NICs end as they would alone.
  const auto cluster = hw::load_cluster("dgx-h100", shape(2, std::nullopt));
  const hw::Router router(cluster);
  const CollectiveRequest tp{.op = Op::all_reduce, .gpus = first_gpus(8), .bytes = 256LL << 20, .algorithm = Algorithm::ring};
  const CollectiveRequest dp{.op = Op::send_recv, .gpus = {1, 9}, .bytes = 256LL << 20};
  const double tp_alone = run_together(router, {tp}).front(), dp_alone = run_together(router, {dp}).front();
  const auto both = run_together(router, {tp, dp});
  CHECK(both[0] == doctest::Approx(tp_alone));
  CHECK(both[1] == doctest::Approx(dp_alone));
}

TEST_CASE("two all-reduces behind one switch uplink halve each other's bandwidth") {
  // a100-pcie: 2 GPUs per PCIe switch. Groups {0,2} and {1,3} each cross switch 0's uplink both
  // ways; alone a ring of 2 is bound by that uplink; together each gets half of it. At 1 GiB the
  // latency is negligible, so the pair takes twice as long (within 1 %).
  const auto cluster = hw::load_cluster("a100-pcie", shape(std::nullopt, 4));
  const hw::Router router(cluster);
  const CollectiveRequest a{.op = Op::all_reduce, .gpus = {0, 2}, .bytes = 1LL << 30, .algorithm = Algorithm::ring};
  const CollectiveRequest b{.op = Op::all_reduce, .gpus = {1, 3}, .bytes = 1LL << 30, .algorithm = Algorithm::ring};
  const double alone = run_together(router, {a}).front();
  const auto both = run_together(router, {a, b});
  CHECK(both[0] == doctest::Approx(2 * alone).epsilon(0.01));
  CHECK(both[1] == doctest::Approx(2 * alone).epsilon(0.01));
}

TEST_CASE("busbw falls steeply from 1 GiB to 1 MiB: small messages are latency-bound") {
  // dgx-a100 ring: at 1 MiB the 14 steps of 3.4 us plus the 8.4 us launch (~56 us) dominate the
  // 1.75 MiB / 240 GB/s = 7.6 us of data, so busbw is under a third of the 1 GiB figure.
  const auto cluster = hw::load_cluster("dgx-a100");
  const hw::Router router(cluster);
  const auto table = simulate_sweep(router, Op::all_reduce, first_gpus(8), {1LL << 20, 1LL << 30}, Algorithm::automatic);
  CHECK(table.rows[0].busbw_gbps < table.rows[1].busbw_gbps / 3);
}

TEST_CASE("an 8-byte all-reduce costs its latency floor: NCCL's LL protocol, picked by the tuner") {
  // dgx-a100, 8 GPUs on NVSwitch, each hop GPU -> switch -> GPU over two 100 ns links. A ring
  // all-reduce is 2(n-1) = 14 steps. LL (NCCL tuning.cc): baseLat 6.6 us + 14 x (hwLat 0.6 us +
  // 0.2 us) = 17.8 us; Simple: 8.4 us + 14 x (3.4 + 0.2) us = 58.8 us. The 8 bytes add tens of
  // picoseconds per step (a byte per rank, 4 on the wire under LL, at 240 GB/s per link).
  const auto cluster = hw::load_cluster("dgx-a100");
  const hw::Router router(cluster);
  auto time_us = [&](std::int64_t bytes, std::optional<hw::Protocol> p) {
    const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(8), .bytes = bytes, .algorithm = Algorithm::ring, .protocol = p};
    return run_together(router, {req}).front();
  };
  CHECK(time_us(8, hw::Protocol::ll) == doctest::Approx(17.8).epsilon(1e-4));
  CHECK(time_us(8, hw::Protocol::simple) == doctest::Approx(58.8).epsilon(1e-4));
  CHECK(time_us(8, std::nullopt) == doctest::Approx(17.8).epsilon(1e-4));  // the tuner's pick
  const auto table = simulate_sweep(router, Op::all_reduce, first_gpus(8), {8, 1LL << 30}, Algorithm::automatic);
  CHECK(table.rows[0].protocol == hw::Protocol::ll);
  CHECK(table.rows[1].protocol == hw::Protocol::simple);
  // LL moves 4 data bytes per 8-byte store: a quarter of Simple's bandwidth at 1 GiB, where
  // latency is under 0.1 % of the time.
  CHECK(time_us(1LL << 30, hw::Protocol::ll) / time_us(1LL << 30, hw::Protocol::simple) == doctest::Approx(4.0).epsilon(0.01));
}

TEST_CASE("the tuner picks what timing every candidate would: the fastest, ties to NCCL's order" * doctest::test_suite("slow")) {
  // It times the candidates without rings first and skips a protocol or a ring whose floor is
  // slower than its best so far; the oracle times every algorithm under every protocol the
  // tuner tries, in coarse mode as the tuner plans them, and takes the fastest, the earlier of
  // Simple, LL128, LL and then of ring, tree, nvls, hierarchical, direct on a tie.
  struct Machine {
    const char* preset;
    int nodes;
  };
  for (const Machine& m : {Machine{"dgx-a100", 2}, Machine{"dgx-h100", 1}, Machine{"dgx-h100", 3}, Machine{"a100-pcie", 2}}) {
    const auto cluster = hw::load_cluster(m.preset, shape(m.nodes, std::nullopt));
    const hw::Router router(cluster);
    for (Op op : {Op::all_reduce, Op::all_gather, Op::reduce_scatter, Op::broadcast})
      for (std::int64_t bytes : {std::int64_t{1} << 10, std::int64_t{1} << 20, std::int64_t{64} << 20, std::int64_t{2} << 30}) {
        INFO(m.preset << " x " << m.nodes << ", " << to_string(op) << ", " << bytes << " B");
        const CollectiveRequest req{.op = op, .gpus = first_gpus(cluster.gpu_count()), .bytes = bytes};
        std::optional<std::tuple<std::int64_t, hw::Protocol, Algorithm>> fastest;
        for (hw::Protocol p : tuner_protocols(router, req))
          for (Algorithm a : supported_algorithms(cluster, req)) {
            CollectiveRequest fixed = req;
            fixed.algorithm = a, fixed.protocol = p, fixed.coarse = true;
            if (!make_algorithm(a)->supports(plan_input(cluster, fixed), p)) continue;
            const std::int64_t t = estimate(router, fixed).ps;
            if (!fastest || t < std::get<0>(*fastest)) fastest = {t, p, a};
          }
        REQUIRE(fastest);
        const AlgorithmChoice choice = choose_with_estimate(router, req);
        CHECK(choice.time.ps == std::get<0>(*fastest));
        CHECK(choice.protocol == std::get<1>(*fastest));
        CHECK(choice.algorithm == std::get<2>(*fastest));
      }
  }
}

TEST_CASE("LL128 is a candidate only where the GPUs of a server talk over NVLink") {
  for (const char* preset : {"rtx4090", "a100-pcie"}) {
    CAPTURE(preset);
    const auto cluster = hw::load_cluster(preset);
    const hw::Router router(cluster);
    std::vector<std::int64_t> sizes;
    for (std::int64_t s = 8; s <= (1LL << 30); s *= 8) sizes.push_back(s);
    const auto table = simulate_sweep(router, Op::all_reduce, first_gpus(cluster.gpu_count()), sizes, Algorithm::automatic, false);
    for (const auto& row : table.rows) CHECK(row.protocol != hw::Protocol::ll128);
    CHECK(table.rows.front().protocol == hw::Protocol::ll);
  }
  const auto nvswitch = hw::load_cluster("dgx-a100");
  const hw::Router router(nvswitch);
  const auto mid = simulate_sweep(router, Op::all_reduce, first_gpus(8), {2LL << 20}, Algorithm::automatic, false);
  CHECK(mid.rows.front().protocol == hw::Protocol::ll128);
}

TEST_CASE("bad requests are rejected at once") {
  const auto cluster = ring_cluster(4, 100e9, 0);
  const hw::Router router(cluster);
  core::Engine engine;
  Network net(engine, cluster, router);
  const auto s = engine.add_stream(engine.add_device(), core::StreamKind::communication);
  CHECK_THROWS_AS(add_collective(net, {.op = Op::all_reduce, .gpus = {0, 0}}, {s, s}), std::invalid_argument);
  CHECK_THROWS_AS(add_collective(net, {.op = Op::all_reduce, .gpus = {0, 1}}, {s}), std::invalid_argument);
  CHECK_THROWS_AS(add_collective(net, {.op = Op::all_reduce, .gpus = {0, 1}, .algorithm = Algorithm::nvls}, {s, s}),
                  std::invalid_argument);
}

TEST_CASE("nccl-tests sizes: suffixes are powers of 1024, and what overflows is not a size") {
  CHECK(parse_size("8") == 8);
  CHECK(parse_size("1M") == 1 << 20);
  CHECK(parse_size("8G") == std::int64_t{8} << 30);
  CHECK(parse_size("8GiB") == std::int64_t{8} << 30);
  CHECK(parse_size("1024T") == kMaxSizeBytes);
  CHECK_FALSE(parse_size("1025T"));
  // Found by tests/fuzz (fuzz_units): the multiplication by 1024 overflowed int64 (UB), and a
  // number of 20 digits made std::stoll throw (an internal error, exit 1).
  CHECK_FALSE(parse_size("899999999909G"));
  CHECK_FALSE(parse_size("99999999999999999999"));
  CHECK_FALSE(parse_size("2PB"));
  // A sweep up to the largest size with a huge factor stops instead of overflowing.
  CHECK(size_sweep(1, kMaxSizeBytes, std::int64_t{1} << 40) == std::vector<std::int64_t>{1, std::int64_t{1} << 40});
  CHECK(size_sweep(8, 64, 2) == std::vector<std::int64_t>{8, 16, 32, 64});
}

}  // namespace
}  // namespace stepsim::comm
