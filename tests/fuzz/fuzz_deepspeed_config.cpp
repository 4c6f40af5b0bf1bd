// A DeepSpeed ds_config.json (sim/plan/deepspeed_config.hpp) applied to a strategy of a fixed
// scenario, then checked as `run` would before simulating.
#include "sim/config/yaml_field.hpp"
#include "sim/plan/deepspeed_config.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return stepsim::fuzz::read_or_refuse(data, size, [](const std::string& text) {
    const auto& sc = stepsim::fuzz::fixed_scenario(
        "name: f\nhardware: {preset: dgx-a100, nodes: 2}\nmodel: llama-2-7b\n"
        "training: {seq_len: 4096, global_batch: 64, precision: bf16}\nstrategies:\n  - {name: s}\n");
    stepsim::plan::Strategy s;
    s.framework = stepsim::plan::Framework::deepspeed;
    const auto doc = stepsim::config::YamlDocument::load_string(text, "fuzz.json");
    stepsim::plan::apply_deepspeed_config(doc.root(), sc.training, sc.cluster.gpu_count(), s);
    stepsim::plan::check_strategy(sc, s);
  });
}
