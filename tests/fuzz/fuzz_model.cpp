// A model file, as stepsim's YAML and as a HuggingFace config.json (models/model_yaml.hpp).
#include "models/model_yaml.hpp"
#include "sim/config/yaml_field.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  stepsim::fuzz::read_or_refuse(data, size, [](const std::string& text) {
    stepsim::models::read_model_yaml(stepsim::config::YamlDocument::load_string(text, "fuzz.yaml").root(), "fuzz");
  });
  return stepsim::fuzz::read_or_refuse(data, size, [](const std::string& text) {
    stepsim::models::read_hf_config(stepsim::config::YamlDocument::load_string(text, "config.json").root(), "fuzz");
  });
}
