// `nvidia-smi topo -m` output as pasted, through to the hardware YAML (hardware/topo_import.hpp).
#include "hardware/topo_import.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return stepsim::fuzz::read_or_refuse(data, size, [](const std::string& text) {
    stepsim::hw::import_nvidia_smi_topo(text, "fuzz.txt", "A100-SXM4-80GB");
  });
}
