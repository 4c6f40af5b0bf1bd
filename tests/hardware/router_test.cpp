// Router: routes and bottleneck bandwidths per preset, each expected figure derived from the
// preset's cited links (hardware/presets/*.yaml).
#include <doctest/doctest.h>

#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"

namespace stepsim::hw {
namespace {

constexpr double kG = 1e9;

double bottleneck(const std::string& preset, int a, int b, ClusterShape shape = {}) {
  const Cluster c = load_cluster(preset, shape);
  return Router(c).bottleneck_bytes_per_s(a, b);
}

bool uses(const Cluster& c, const Route& r, LinkKind kind) {
  for (int l : r)
    if (c.links[l].kind == kind) return true;
  return false;
}

// Every route is a chain of links from the source GPU to the destination GPU.
void check_chains(const Cluster& c, const Router& router, int a, int b) {
  for (const Route& r : router.routes(a, b)) {
    REQUIRE_FALSE(r.empty());
    CHECK(c.links[r.front()].from == c.gpu_nodes[a]);
    CHECK(c.links[r.back()].to == c.gpu_nodes[b]);
    for (std::size_t i = 1; i < r.size(); ++i) CHECK(c.links[r[i - 1]].to == c.links[r[i]].from);
  }
}

TEST_CASE("NVSwitch servers: every pair gets the GPU's whole NVLink bandwidth") {
  // One logical NVSwitch, each GPU linked to it at its full per-direction NVLink figure:
  // A100 NVLink3 12 x 25 = 300 GB/s, H100/H200 NVLink4 18 x 25 = 450 GB/s ([R9]).
  CHECK(bottleneck("dgx-a100", 0, 7) == doctest::Approx(300 * kG));
  CHECK(bottleneck("dgx-h100", 3, 4) == doctest::Approx(450 * kG));
  CHECK(bottleneck("hgx-h200", 0, 1) == doctest::Approx(450 * kG));
  const Cluster c = load_cluster("dgx-a100");
  const Router router(c);
  REQUIRE(router.routes(0, 1).size() == 1);
  // NVLink wins over the PCIe path of equal hop count: gpu0 -> nvswitch0 -> gpu1.
  const Route& r = router.routes(0, 1)[0];
  CHECK(r.size() == 2);
  CHECK_FALSE(uses(c, r, LinkKind::pcie));
  CHECK(&router.routes(0, 1)[0] == &r);  // cached: the same vector
}

TEST_CASE("PCIe servers: the x16 link is the bottleneck, also across sockets") {
  // gen4 x16 31.5 GB/s per direction [R9]; across sockets the UPI (67.2 GB/s) is wider.
  CHECK(bottleneck("a100-pcie", 0, 1) == doctest::Approx(31.5 * kG));
  CHECK(bottleneck("a100-pcie", 0, 7) == doctest::Approx(31.5 * kG));
  // Bridged pairs: H100 PCIe bridge 300 GB/s [R9]; between pairs gen5 x16 63 GB/s.
  CHECK(bottleneck("h100-pcie-nvlink", 0, 1) == doctest::Approx(300 * kG));
  CHECK(bottleneck("h100-pcie-nvlink", 1, 2) == doctest::Approx(63 * kG));
  // RTX 3090 bridge 56.25 GB/s per direction [GA102]; other pairs over gen4 via the CPU.
  CHECK(bottleneck("rtx3090-nvlink", 0, 1) == doctest::Approx(56.25 * kG));
  CHECK(bottleneck("rtx3090-nvlink", 0, 3) == doctest::Approx(31.5 * kG));
}

TEST_CASE("a mesh (MI300X's xGMI) joins every two GPUs by one link of their own") {
  // 7 links of 64 GB/s each way per GPU [MI300]: a pair gets one link, directly.
  const Cluster c = load_cluster("mi300x-oam");
  CHECK(c.gpu_mesh);
  const Router router(c);
  for (int b = 1; b < 8; ++b) {
    CAPTURE(b);
    CHECK(bottleneck("mi300x-oam", 0, b) == doctest::Approx(64 * kG));
    REQUIRE(router.routes(0, b).size() == 1);
    CHECK(router.routes(0, b)[0].size() == 1);
  }
  CHECK_FALSE(load_cluster("dgx-h100").gpu_mesh);
}

TEST_CASE("without P2P, traffic between GPUs turns around at the CPU") {
  const Cluster c = load_cluster("rtx4090");
  const Router router(c);
  REQUIRE(router.routes(0, 1).size() == 1);
  const Route& r = router.routes(0, 1)[0];
  // gpu0 -> pcie0 -> cpu0 -> pcie1 -> gpu1 (one GPU per x16 port): up one GPU's link, through host
  // memory, down the other's, so the bottleneck stays 31.5 GB/s.
  REQUIRE(r.size() == 4);
  CHECK(c.nodes[c.links[r[1]].to].kind == NodeKind::cpu);
  CHECK(router.bottleneck_bytes_per_s(0, 1) == doctest::Approx(31.5 * kG));
  check_chains(c, router, 0, 1);
}

TEST_CASE("between servers: one NIC per GPU on a rail, ECMP across spines off the rail") {
  // DGX A100: HDR 200 Gb/s = 25 GB/s per GPU [R9]; DGX H100: NDR 400 Gb/s = 50 GB/s.
  const ClusterShape two{.nodes = 2, .gpus_per_node = std::nullopt};
  CHECK(bottleneck("dgx-a100", 0, 8, two) == doctest::Approx(25 * kG));
  CHECK(bottleneck("dgx-h100", 0, 8, two) == doctest::Approx(50 * kG));
  const Cluster c = load_cluster("dgx-a100", two);
  const Router router(c);
  // Same rail: gpu0 -> pcie0 -> mlx5_0 -> leaf0 -> mlx5_0' -> pcie0' -> gpu8, one route.
  CHECK(router.routes(0, 8).size() == 1);
  CHECK(router.routes(0, 8)[0].size() == 6);
  // Rail 0 to rail 1 goes up to each of the 4 spines: 4 equal-cost routes of 8 links. Each spine
  // uplink carries 20 servers x 25 GB/s / 4 spines = 125 GB/s; the NIC's 25 GB/s stays the limit.
  REQUIRE(router.routes(0, 9).size() == 4);
  for (const Route& r : router.routes(0, 9)) CHECK(r.size() == 8);
  CHECK(router.bottleneck_bytes_per_s(0, 9) == doctest::Approx(25 * kG));
  check_chains(c, router, 0, 9);
}

TEST_CASE("a fat tree spreads over its spines, and routes inside a server never leave it") {
  // a100-pcie: 16 servers per leaf, so server 16 is on the second leaf, 4 spines apart.
  const Cluster c = load_cluster("a100-pcie", {.nodes = 17, .gpus_per_node = std::nullopt});
  const Router router(c);
  CHECK(router.routes(0, 16 * 8).size() == 4);
  check_chains(c, router, 0, 16 * 8);
  // GPU0 to GPU4 crosses the sockets: over UPI, not out through a NIC and back.
  for (const Route& r : router.routes(0, 4)) CHECK_FALSE(uses(c, r, LinkKind::infiniband));
  CHECK(router.bottleneck_bytes_per_s(0, 4) == doctest::Approx(31.5 * kG));
  // No route between two servers touches a third one's nodes, whichever GPUs they join.
  for (const auto& [a, b] : {std::pair{0, 16 * 8}, std::pair{3, 9 * 8 + 5}, std::pair{15 * 8 + 7, 1}}) {
    const int sa = c.nodes[c.gpu_nodes[a]].server, sb = c.nodes[c.gpu_nodes[b]].server;
    for (const Route& r : router.routes(a, b))
      for (int l : r)
        for (int node : {c.links[l].from, c.links[l].to}) {
          const int s = c.nodes[node].server;
          CHECK((s < 0 || s == sa || s == sb));
        }
  }
}

TEST_CASE("shared links split the bottleneck: n routes over one link get link / n each") {
  // A GPU with two equal routes to another through one shared 10 GB/s link: 2 x (10 / 2) = 10,
  // not 20 as a plain sum of route bottlenecks would say.
  const Cluster c = load_cluster_text(R"yaml(
gpu: A100
server:
  nodes: [{name: gpu0, kind: gpu}, {name: gpu1, kind: gpu}, {name: s0, kind: pcie_switch},
          {name: a, kind: pcie_switch}, {name: b, kind: pcie_switch}]
  links:
    - {from: gpu0, to: s0, kind: pcie, bandwidth: 10GB/s}
    - {from: s0, to: a, kind: pcie, bandwidth: 40GB/s}
    - {from: s0, to: b, kind: pcie, bandwidth: 40GB/s}
    - {from: a, to: gpu1, kind: pcie, bandwidth: 40GB/s}
    - {from: b, to: gpu1, kind: pcie, bandwidth: 40GB/s}
)yaml", "diamond");
  const Router router(c);
  CHECK(router.routes(0, 1).size() == 2);
  CHECK(router.bottleneck_bytes_per_s(0, 1) == doctest::Approx(10 * kG));
}

}  // namespace
}  // namespace stepsim::hw

namespace stepsim::hw {
namespace {

TEST_CASE("links_from lists exactly the links that leave a GPU") {
  for (const char* preset : {"dgx-h100", "rtx5090", "mi300x-oam"}) {
    CAPTURE(preset);
    const Cluster c = load_cluster(preset);
    const Router router(c);
    for (int gpu : {0, c.gpu_count() - 1}) {
      std::vector<int> expected;
      for (int l = 0; l < static_cast<int>(c.links.size()); ++l)
        if (c.links[static_cast<std::size_t>(l)].from == c.gpu_nodes[static_cast<std::size_t>(gpu)]) expected.push_back(l);
      CHECK(router.links_from(gpu) == expected);
    }
  }
}

TEST_CASE("link classes: equal exactly for links of the same kind, rate and latency") {
  const Cluster c = load_cluster("dgx-h100", {.nodes = 2, .gpus_per_node = std::nullopt});
  const Router router(c);
  int same = 0, different = 0;
  for (std::size_t a = 0; a < c.links.size(); a += 3)
    for (std::size_t b = 0; b < c.links.size(); b += 5) {
      const Link& x = c.links[a];
      const Link& y = c.links[b];
      const bool alike = x.kind == y.kind && x.bytes_per_s == y.bytes_per_s && x.latency_ps == y.latency_ps;
      CHECK((router.link_class(static_cast<int>(a)) == router.link_class(static_cast<int>(b))) == alike);
      ++(alike ? same : different);
    }
  CHECK(same > 0);
  CHECK(different > 0);
}

}  // namespace
}  // namespace stepsim::hw
