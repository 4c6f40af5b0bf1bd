// topo import: real and written `nvidia-smi topo -m` pastes become hardware YAML whose graph gives
// back every code (the round trip), and broken pastes fail at the cell with a whole message.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"
#include "hardware/topo_import.hpp"
#include "hardware/topo_matrix.hpp"
#include "hardware/topo_report.hpp"

namespace stepsim::hw {
namespace {

std::string data_path(const std::string& name) { return std::string(STEPSIM_DATA_DIR) + "/tests/hardware/data/" + name; }

std::string read_data(const std::string& name) {
  std::ifstream in(data_path(name), std::ios::binary);
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Sample {
  const char* file;
  const char* gpu;
  int gpus, devices;
};

// The five real pastes (copied from shared/data/samples) and three written ones.
const Sample kSamples[] = {
    {"topo_2x1080ti_consumer_board_phb_numa_na_with_prompt.txt", "RTX-3090", 2, 2},  // no 1080 Ti spec: any GPU
    {"topo_3xrtxa6000_one_nv4_pair_tabs_ansi_escapes_with_prompt.txt", "RTX-A6000", 3, 3},
    {"topo_4xa10_pcie_sys_2nics_with_prompt.txt", "L40S", 4, 6},
    {"topo_8xa100_nv12_17nics_bond_single_numa_with_prompt.txt", "A100-SXM4-80GB", 8, 25},
    {"topo_dgx1_v100_hybridcube_1nic_oneflow.txt", "V100-SXM2-16GB", 8, 9},
    {"topo_dgx_h100_written.txt", "H100-SXM5-80GB", 8, 16},
    {"topo_8x_pcie_two_sockets_written.txt", "A100-PCIE-80GB", 8, 9},
    {"topo_4x_nvlink_bridged_pairs_crlf_written.txt", "RTX-3090", 4, 4},
};

TEST_CASE("import round-trips: topo show of the imported file prints the pasted GPU codes") {
  for (const Sample& s : kSamples) {
    CAPTURE(s.file);
    const std::string text = read_data(s.file);
    const TopoMatrix m = parse_nvidia_smi_topo(text, s.file);
    CHECK(m.devices.size() == static_cast<std::size_t>(s.devices));
    const Cluster c = load_cluster_text(import_nvidia_smi_topo(text, s.file, s.gpu), s.file);
    REQUIRE(c.gpu_count() == s.gpus);
    const auto shown = connection_matrix(c);
    for (int a = 0; a < s.gpus; ++a)
      for (int b = 0; b < s.gpus; ++b) CHECK(shown[a][b] == m.codes[a][b]);
  }
}

TEST_CASE("the parser reads NIC legends, affinities, ANSI escapes and old codes") {
  const TopoMatrix a100 = parse_nvidia_smi_topo(read_data(kSamples[3].file), "a100.txt");
  CHECK(a100.devices[8].label == "NIC0");
  CHECK(a100.devices[8].name == "mlx5_2");        // "NIC0: mlx5_2" in the NIC legend
  CHECK(a100.devices[24].name == "mlx5_bond_0");
  CHECK(a100.devices[0].numa_affinity == "0");
  CHECK(a100.codes[0][8] == "PXB");
  CHECK(a100.where[0][8].line == 3);               // line 1 is the prompt, 2 the header
  CHECK(a100.where[0][8].column == 73);            // 9 columns of 8 characters, then "PXB"
  const TopoMatrix a6000 = parse_nvidia_smi_topo(read_data(kSamples[1].file), "a6000.txt");
  CHECK(a6000.devices.size() == 3);                // the header's ESC[4m ... ESC[0m dropped
  CHECK(a6000.codes[0][1] == "NV4");
  const TopoMatrix dgx1 = parse_nvidia_smi_topo(read_data(kSamples[4].file), "dgx1.txt");
  CHECK(dgx1.devices[8].name == "mlx5_0");         // old format: the NIC is a column by its name
  CHECK(dgx1.devices[4].cpu_affinity == "12-23,36-47");
  const TopoMatrix soc = parse_nvidia_smi_topo(read_data(kSamples[7].file), "soc.txt");
  CHECK(soc.codes[0][2] == "SYS");                 // SOC, as drivers before 384 printed it
}

TEST_CASE("NV# becomes # links of the GPU's generation; a uniform group of 3+ an NVSwitch") {
  // DGX-1: NV1 = 25 GB/s, NV2 = 50 GB/s (V100 NVLink2 6 x 25 = 150 [R9]); no NVSwitch. GPU0 and
  // GPU5 have no bundle: SYS, over PCIe gen3 x16 at 15.75 GB/s, never through a third GPU.
  const std::string dgx1 = read_data(kSamples[4].file);
  const Cluster c = load_cluster_text(import_nvidia_smi_topo(dgx1, "dgx1.txt", "V100-SXM2-16GB"), "dgx1");
  const Router router(c);
  CHECK(router.bottleneck_bytes_per_s(0, 3) == doctest::Approx(50e9));
  CHECK(router.bottleneck_bytes_per_s(0, 1) == doctest::Approx(25e9));
  CHECK(router.bottleneck_bytes_per_s(0, 5) == doctest::Approx(15.75e9));
  // 8xA100 NV12 everywhere: one NVSwitch, 12 x 25 = 300 GB/s per GPU.
  const std::string a100 = read_data(kSamples[3].file);
  const Cluster s = load_cluster_text(import_nvidia_smi_topo(a100, "a100.txt", "A100-SXM4-80GB"), "a100");
  int nvswitches = 0;
  for (const Node& n : s.nodes) nvswitches += n.kind == NodeKind::nvswitch;
  CHECK(nvswitches == 1);
  CHECK(Router(s).bottleneck_bytes_per_s(0, 7) == doctest::Approx(300e9));
}

void check_error(const std::string& text, const std::string& message, const std::string& gpu = "A100") {
  CHECK_THROWS_WITH(import_nvidia_smi_topo(text, "topo.txt", gpu), message.c_str());
}

TEST_CASE("broken pastes fail at the cell, with the whole message") {
  check_error("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\n",
              "topo.txt:3:6: row GPU1 has 1 entries; expected 2 connection codes, one per column");
  check_error("\tGPU0\tGPU1\nGPU0\t X \tPIY\nGPU1\tPIX\t X \n",
              "topo.txt:2:10: unknown connection code 'PIY' in row GPU0; expected X, NV#, PIX, PXB, PHB, NODE or SYS");
  check_error("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPXB\t X \n",
              "topo.txt:3:6: GPU1 to GPU0 is PXB, but GPU0 to GPU1 is PIX (line 2); the matrix must be symmetric");
  check_error("\tGPU0\tGPU1\nGPU0\tPIX\tPIX\nGPU1\tPIX\t X \n",
              "topo.txt:2:6: expected X where row GPU0 meets its own column, found 'PIX'");
  check_error("\tGPU0\tGPU1\nGPU0\t X \tPIX\n\nLegend:\n",
              "topo.txt:3:1: expected the row of GPU1, found the end of the matrix");
  check_error("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU2\tPIX\t X \n", "topo.txt:3:1: expected the row of GPU1, found 'GPU2'");
  check_error("nvidia-smi: command not found\n",
              "topo.txt: no GPU matrix found; expected a header line starting with GPU0 as `nvidia-smi topo -m` prints it");
  // PIX joins 0-1 and 1-2 under one switch, so 0-2 cannot be SYS.
  check_error("\tGPU0\tGPU1\tGPU2\nGPU0\t X \tPIX\tSYS\nGPU1\tPIX\t X \tPIX\nGPU2\tSYS\tPIX\t X \n",
              "topo.txt:2:14: GPU0 to GPU2 is SYS, which no PCIe tree that fits the other entries gives (the nearest "
              "makes it PIX)");
  check_error("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n",
              "topo.txt:2:10: GPU0 to GPU1 is NV4, but L40S has no NVLink in hardware/gpus.yaml", "L40S");
}

TEST_CASE("cells pasted without a separator are split into the codes and labels they are made of") {
  // The same 4-GPU matrix, once spaced as nvidia-smi prints it, once with cells run together
  // (as a paste that lost its tabs shows them) and a no-break space (U+00A0) as a separator.
  const std::string spaced =
      "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\n"
      "GPU0\t X \tPIX\tNODE\tNODE\tPIX\tNODE\n"
      "GPU1\tPIX\t X \tNODE\tNODE\tPIX\tNODE\n"
      "GPU2\tNODE\tNODE\t X \tPIX\tNODE\tPIX\n"
      "GPU3\tNODE\tNODE\tPIX\t X \tNODE\tPIX\n"
      "NIC0\tPIX\tPIX\tNODE\tNODE\t X \tNODE\n"
      "NIC1\tNODE\tNODE\tPIX\tPIX\tNODE\t X \n";
  const std::string glued =
      "   GPU0 GPU1 GPU2 GPU3 NIC0NIC1\n"
      "GPU0  X PIX NODENODE PIX NODE\n"
      "GPU1 PIX  X NODE NODE\xc2\xa0PIX NODE\n"
      "GPU2 NODENODE X PIX NODE PIX\n"
      "GPU3 NODE NODE PIXX NODE PIX\n"
      "NIC0 PIXPIX NODE NODE X NODE\n"
      "NIC1 NODE NODE PIX PIX NODE X\n";
  const TopoMatrix a = parse_nvidia_smi_topo(spaced, "a.txt"), b = parse_nvidia_smi_topo(glued, "b.txt");
  REQUIRE(b.devices.size() == a.devices.size());
  for (std::size_t i = 0; i < a.devices.size(); ++i) {
    CHECK(b.devices[i].label == a.devices[i].label);
    CHECK(b.codes[i] == a.codes[i]);
  }
  // A split cell keeps its own column: "NODENODE" on line 2 starts at column 13, so its second NODE at 17.
  CHECK(b.where[0][2].column == 13);
  CHECK(b.where[0][3].column == 17);
  // A token that is not made of codes entirely stays whole and is reported as it is.
  check_error("\tGPU0\tGPU1\nGPU0\t X \tPIXY\nGPU1\tPIX\t X \n",
              "topo.txt:2:10: unknown connection code 'PIXY' in row GPU0; expected X, NV#, PIX, PXB, PHB, NODE or SYS");
}

TEST_CASE("the imported YAML names its source and the GPU") {
  const std::string yaml = import_nvidia_smi_topo(read_data(kSamples[1].file), "box/a6000.txt", "a6000");
  CHECK(yaml.find("# Imported by `stepsim topo import` from box/a6000.txt (nvidia-smi topo -m).\n") == 0);
  CHECK(yaml.find("\nname: a6000\ngpu: RTX-A6000\n") != std::string::npos);
  CHECK(yaml.find("{from: gpu0, to: gpu1, kind: nvlink, lanes: 4, bandwidth: 56.25GB/s, label: NV4}") != std::string::npos);
}

}  // namespace
}  // namespace stepsim::hw
