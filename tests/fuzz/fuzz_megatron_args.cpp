// A Megatron-LM launch script or arguments file (sim/plan/megatron_args.hpp) applied to a strategy
// of a fixed scenario, then checked as `run` would before simulating.
#include "sim/config/shell_words.hpp"
#include "sim/plan/megatron_args.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return stepsim::fuzz::read_or_refuse(data, size, [](const std::string& text) {
    const auto& sc = stepsim::fuzz::fixed_scenario(
        "name: f\nhardware: {preset: dgx-h100, nodes: 2}\nmodel: llama-2-7b\n"
        "training: {seq_len: 4096, global_batch: 64, precision: bf16}\nstrategies:\n  - {name: s}\n");
    stepsim::plan::Strategy s;
    stepsim::plan::apply_megatron_args(stepsim::config::read_shell_script(text, "fuzz.sh"), sc.model, sc.training, s);
    stepsim::plan::check_strategy(sc, s);
  });
}
