// A hardware file: a preset with overrides, or a server and network written out (hardware/hardware_yaml.hpp).
#include "hardware/hardware_yaml.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return stepsim::fuzz::read_or_refuse(data, size, [](const std::string& text) {
    stepsim::hw::load_cluster_text(text, "fuzz.yaml");
  });
}
