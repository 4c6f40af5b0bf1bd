// A torchtitan TOML job config (sim/plan/torchtitan_config.hpp) applied to a strategy of a fixed
// scenario, then checked as `run` would before simulating.
#include "sim/plan/torchtitan_config.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return stepsim::fuzz::read_or_refuse(data, size, [](const std::string& text) {
    const auto& sc = stepsim::fuzz::fixed_scenario(
        "name: f\nhardware: {preset: dgx-a100, nodes: 8}\nmodel: llama-3-70b\n"
        "training: {seq_len: 8192, global_batch: 64, precision: bf16}\nstrategies:\n  - {name: s}\n");
    stepsim::plan::Strategy s;
    stepsim::plan::apply_torchtitan_config(text, "fuzz.toml", sc.model, sc.training, sc.cluster.gpu_count(), s);
    stepsim::plan::check_strategy(sc, s);
  });
}
