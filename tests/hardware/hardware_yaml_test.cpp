// Hardware YAML: the forms a cluster is written in, and the exact message of each mistake.
#include <doctest/doctest.h>

#include "hardware/hardware_yaml.hpp"
#include "sim/config/yaml_field.hpp"

namespace stepsim::hw {
namespace {

const char* const kPair = R"yaml(
gpu: RTX-3090
price_per_gpu_hour: 0.5
server:
  p2p: false
  nodes:
    - {name: gpu0, kind: gpu}
    - {name: gpu1, kind: gpu}
    - {name: cpu0, kind: cpu}
  links:
    - {from: gpu0, to: gpu1, kind: nvlink, lanes: 4, bandwidth: 56.25GB/s, label: NV4}
    - {from: gpu0, to: cpu0, kind: pcie, bandwidth: 31.5GB/s, latency: 250ns}
    - {from: gpu1, to: cpu0, kind: pcie, bandwidth: 31.5GB/s}
comm:
  ring_step_latency: 7us
  nvlink_efficiency: 0.7
  ll: {ring_step_latency: 1us, bandwidth_share: 0.3}
)yaml";

TEST_CASE("a server drawn link by link: nodes, both directions of each link, comm and price") {
  const Cluster c = load_cluster_text(kPair, "pair.yaml");
  CHECK(c.name == "pair.yaml");
  CHECK(c.gpu_count() == 2);
  CHECK(c.nodes.size() == 3);
  REQUIRE(c.links.size() == 6);  // 3 physical links, each both ways
  CHECK(c.links[1].from == 1);
  CHECK(c.links[1].to == 0);
  CHECK(c.links[1].bytes_per_s == doctest::Approx(56.25e9));
  CHECK(c.links[2].latency_ps == 250'000);
  CHECK_FALSE(c.gpu_p2p);
  CHECK(c.comm.ring_step_latency_ps == 7'000'000);
  CHECK(c.comm.nvlink_efficiency == doctest::Approx(0.7));
  CHECK(c.comm.tree_step_latency_ps == CommParams{}.tree_step_latency_ps);  // untouched: default
  CHECK(c.comm.ll.ring_step_latency_ps == 1'000'000);
  CHECK(c.comm.ll.bandwidth_share == doctest::Approx(0.3));
  CHECK(c.comm.ll.launch_latency_ps == CommParams{}.ll.launch_latency_ps);
  CHECK(c.comm.cost(Protocol::simple).ring_step_latency_ps == 7'000'000);
  CHECK(c.comm.cost(Protocol::ll128).ring_step_latency_ps == CommParams{}.ll128.ring_step_latency_ps);
  CHECK(c.gpu.price_per_hour == doctest::Approx(0.5));
}

TEST_CASE("presets take a server count and a GPU count") {
  const Cluster four = load_cluster("a100-pcie", {.nodes = std::nullopt, .gpus_per_node = 4});
  CHECK(four.gpu_count() == 4);
  CHECK(four.gpu.name == "A100-PCIE-80GB");
  const Cluster big = load_cluster("dgx-h100", {.nodes = 64, .gpus_per_node = std::nullopt});
  CHECK(big.gpu_count() == 512);
  CHECK(big.servers == 64);
  CHECK(big.server_of(511) == 63);
  CHECK(big.comm.nvls);
}

TEST_CASE("a scenario's hardware value: a preset name, a preset with shape, or inline") {
  auto doc = config::YamlDocument::load_string("a: dgx-a100\nb: {preset: dgx-a100, nodes: 2, comm: {nvls: true}}\n", "s.yaml");
  CHECK(read_cluster(doc.root().required("a")).gpu_count() == 8);
  const Cluster b = read_cluster(doc.root().required("b"));
  CHECK(b.gpu_count() == 16);
  CHECK(b.comm.nvls);
}

TEST_CASE("a preset can take another GPU: the same box and links, that GPU's figures") {
  auto doc = config::YamlDocument::load_string(
      "a: {preset: dgx-a100, gpu: a100-40gb, nodes: 2}\nb: {preset: dgx-a100, gpu: A100-SXM4-4GB}\n", "s.yaml");
  const Cluster a = read_cluster(doc.root().required("a"));
  CHECK(a.gpu.name == "A100-SXM4-40GB");
  CHECK(a.gpu.memory_bytes == 40LL * 1024 * 1024 * 1024);
  CHECK(a.gpu_count() == 16);
  CHECK_THROWS_WITH(read_cluster(doc.root().required("b")),
                    "s.yaml:2:28: b.gpu: unknown GPU 'A100-SXM4-4GB'; did you mean 'A100-SXM4-40GB'? (known GPUs: "
                    "V100-SXM2-16GB, V100-SXM2-32GB, A100-SXM4-40GB, A100-SXM4-80GB, A100-PCIE-40GB, A100-PCIE-80GB, "
                    "H100-SXM5-80GB, H100-PCIE-80GB, H200-SXM-141GB, H800-SXM5-80GB, L40S, RTX-A6000, RTX-4090, "
                    "RTX-5090, RTX-3090, B200-SXM-180GB, GB200, H20, RTX-6000-Ada, MI300X)");
}

void check_error(const std::string& yaml, const std::string& message) {
  CHECK_THROWS_WITH(load_cluster_text(yaml, "hw.yaml"), message.c_str());
}

TEST_CASE("mistakes in hardware YAML are positioned and say what was expected") {
  check_error("gpu: A100\nserver: {gpus: 2, pcie: {bandwidth: 31.5}}\n",
              "hw.yaml:2:37: server.pcie.bandwidth: expected a bandwidth with a unit such as 450GB/s, found '31.5'");
  check_error("gpu: A100\nserver: {gpus: 2, pcie: {}, socket: 2}\n",
              "hw.yaml:2:29: server: unknown key 'socket'; did you mean 'sockets'?");
  check_error("gpu: B300\nserver: {gpus: 2, pcie: {}}\n",
              "hw.yaml:1:6: gpu: unknown GPU 'B300'; did you mean 'b200'? (known GPUs: V100-SXM2-16GB, V100-SXM2-32GB, "
              "A100-SXM4-40GB, A100-SXM4-80GB, A100-PCIE-40GB, A100-PCIE-80GB, H100-SXM5-80GB, H100-PCIE-80GB, "
              "H200-SXM-141GB, H800-SXM5-80GB, L40S, RTX-A6000, RTX-4090, RTX-5090, RTX-3090, B200-SXM-180GB, GB200, H20, RTX-6000-Ada, MI300X)");
  check_error("gpu: MI300X\nserver: {gpus: 9, pcie: {}, nvlink: {topology: mesh}}\n",
              "hw.yaml:2:48: server.nvlink.topology: a mesh joins every two of the 9 GPUs by a link of their own: expected at least 8 "
              "links per GPU, found 7");
  CHECK_THROWS_WITH(load_cluster("mi300x-oam", {.nodes = std::nullopt, .gpus_per_node = 9}),
                    doctest::Contains("'mi300x-oam' joins every two GPUs by a link of their own, 7 links per GPU: expected at most 8 "
                                      "GPUs per server, found 9"));
  check_error("gpu: L40S\nserver: {gpus: 2, pcie: {}, nvlink: {topology: pairs}}\n",
              "hw.yaml:2:37: server.nvlink: missing required key 'links'");
  check_error("gpu: A100\nserver:\n  nodes: [{name: gpu0, kind: gpu}]\n  links: [{from: gpu0, to: gpu1, kind: pcie, bandwidth: 1GB/s}]\n",
              "hw.yaml:4:28: server.links[0].to: no node named 'gpu1'; did you mean 'gpu0'?");
  check_error("gpu: A100\nserver:\n  nodes: [{name: gpu0, kind: gpu}]\n  links: [{from: gpu0, to: gpu0, kind: pcie, bandwidth: 1GB/s}]\n",
              "hw.yaml:4:28: server.links[0].to: a link needs two different nodes, found 'gpu0' twice");
  check_error("gpu: A100\nserver: {gpus: 2, pcie: {}}\nservers: 2\n",
              "hw.yaml: 'hw.yaml' has no 'network', so it cannot have 2 servers");
  check_error("gpu: A100\nserver: {gpus: 2, pcie: {}}\ncomm: {nvlink_efficiency: 1.5}\n",
              "hw.yaml:3:27: comm.nvlink_efficiency: expected a fraction in (0, 1], found '1.5'");
  check_error("gpu: A100\nserver: {gpus: 2, pcie: {}}\ncomm: {ll128: {bandwidth_share: 0}}\n",
              "hw.yaml:3:33: comm.ll128.bandwidth_share: expected a fraction in (0, 1], found '0'");
  check_error("gpu: A100\nserver: {gpus: 2, pcie: {}}\ncomm: {ll: {step_latency: 1us}}\n",
              "hw.yaml:3:13: comm.ll: unknown key 'step_latency'; expected one of launch_latency, ring_step_latency, tree_step_latency, network_step_latency, bandwidth_share");
}

TEST_CASE("an unknown preset lists the presets and suggests the closest") {
  CHECK_THROWS_WITH(load_cluster("dgx-a10"),
                    "unknown hardware preset 'dgx-a10'; did you mean 'dgx-a100'? (presets: a100-pcie, dgx-2, "
                    "dgx-a100, dgx-b200, dgx-h100, gb200-nvl72, h100-pcie-nvlink, hgx-h20, hgx-h200, l40s-pcie, mi300x-oam, rtx3090-nvlink, rtx4090, rtx5090, rtx6000ada-pcie; or give a path to a "
                    "hardware YAML file)");
  auto doc = config::YamlDocument::load_string("hardware: {preset: dgx-h10, nodes: 2}\n", "s.yaml");
  CHECK_THROWS_WITH(read_cluster(doc.root().required("hardware")),
                    "s.yaml:1:20: hardware.preset: unknown hardware preset 'dgx-h10'; did you mean 'dgx-h100'? (presets: "
                    "a100-pcie, dgx-2, dgx-a100, dgx-b200, dgx-h100, gb200-nvl72, h100-pcie-nvlink, hgx-h20, hgx-h200, l40s-pcie, mi300x-oam, rtx3090-nvlink, rtx4090, rtx5090, rtx6000ada-pcie; or "
                    "give a path to a hardware YAML file)");
}

TEST_CASE("a link-by-link server cannot change its GPU count") {
  auto doc = config::YamlDocument::load_string(
      "hardware:\n  preset: " STEPSIM_DATA_DIR "/tests/hardware/data/pair.yaml\n  gpus: 4\n", "s.yaml");
  CHECK_THROWS_WITH(read_cluster(doc.root().required("hardware")),
                    "s.yaml:3:9: hardware.gpus: the server of 'pair' is drawn link by link; its GPU count cannot be changed");
}

TEST_CASE("every preset loads, alone and as a 3-server cluster") {
  for (const auto& name : preset_names()) {
    CAPTURE(name);
    const Cluster one = load_cluster(name);
    CHECK(one.servers == 1);
    const Cluster three = load_cluster(name, {.nodes = 3, .gpus_per_node = std::nullopt});
    CHECK(three.gpu_count() == 3 * one.gpu_count());
  }
}

TEST_CASE("a GPU defined inline: a base and what differs from it, or every figure") {
  // With a base, only the named figures change (a peak lists only the dtypes that change); the
  // base's fit stays. Without one, every figure is required and gpus.yaml's defaults fill the
  // efficiency parameters, which then are not fitted to anything.
  const Cluster based = load_cluster_text(
      "gpu: {base: A100-SXM4-80GB, name: A100-custom, memory: 40GiB, peak: {bf16: 300TFLOPS}}\nserver: {gpus: 2, pcie: {}}\n",
      "hw.yaml");
  const GpuSpec a100 = load_gpu_spec("A100-SXM4-80GB");
  CHECK(based.gpu.name == "A100-custom");
  CHECK(based.gpu.memory_bytes == std::int64_t{40} << 30);
  CHECK(based.gpu.peak.bf16 == doctest::Approx(300e12));
  CHECK(based.gpu.peak.fp16 == doctest::Approx(a100.peak.fp16));
  CHECK(based.gpu.memory_bytes_per_s == doctest::Approx(a100.memory_bytes_per_s));
  CHECK(based.gpu.matmul_efficiency == doctest::Approx(a100.matmul_efficiency));
  CHECK(based.gpu.fitted_to == a100.fitted_to);
  const Cluster whole = load_cluster_text(
      "gpu: {name: MyGPU, peak: {bf16: 500TFLOPS}, memory: 96GiB, memory_bandwidth: 4TB/s, sm_count: 100,\n"
      "      pcie: {generation: 5, bandwidth: 63GB/s}, memory_efficiency: 0.7}\nserver: {gpus: 2, pcie: {}}\n",
      "hw.yaml");
  CHECK(whole.gpu.name == "MyGPU");
  CHECK(whole.gpu.peak.bf16 == doctest::Approx(500e12));
  CHECK(whole.gpu.peak.fp16 == 0);
  CHECK(whole.gpu.memory_efficiency == doctest::Approx(0.7));
  CHECK(whole.gpu.matmul_efficiency == doctest::Approx(0.8));  // gpus.yaml defaults:
  CHECK(whole.gpu.fitted_to.empty());
}

TEST_CASE("mistakes in an inline GPU are positioned like gpus.yaml's") {
  check_error("gpu: {base: A100-SXM4-80GB, memory: 40}\nserver: {gpus: 2, pcie: {}}\n",
              "hw.yaml:1:37: gpu.memory: expected a size with a unit such as 80GiB, found '40'");
  check_error("gpu: {bsae: A100-SXM4-80GB}\nserver: {gpus: 2, pcie: {}}\n",
              "hw.yaml:1:7: gpu: unknown key 'bsae'; did you mean 'base'?");
  check_error("gpu: {name: G, memory: 8GiB}\nserver: {gpus: 2, pcie: {}}\n", "hw.yaml:1:6: gpu: missing required key 'peak'");
  check_error("gpu: {base: A100, peak: {bf17: 1TFLOPS}}\nserver: {gpus: 2, pcie: {}}\n",
              "hw.yaml:1:26: gpu.peak: unknown key 'bf17'; did you mean 'bf16'?");
}

}  // namespace
}  // namespace stepsim::hw
