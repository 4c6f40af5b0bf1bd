// A scenario file (sim/plan/scenario.hpp), each strategy checked as `run` would before simulating.
#include "sim/plan/scenario.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return stepsim::fuzz::read_or_refuse(data, size, [](const std::string& text) {
    const auto sc = stepsim::plan::read_scenario_text(text, "fuzz.yaml");
    for (const auto& s : sc.strategies) stepsim::plan::check_strategy(sc, s);
  });
}
