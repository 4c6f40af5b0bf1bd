#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "models/model_yaml.hpp"

namespace stepsim::models {
namespace {

const std::string kData = std::string(STEPSIM_DATA_DIR) + "/tests/models/data/";

// Half a unit in the last digit the source printed ("1.7B" → 0.05e9), so a figure rounded to
// two digits is not held to 1 %.
double rounding_of(const std::string& printed, double value) {
  const auto dot = printed.find('.');
  std::size_t digits_after = 0;
  if (dot != std::string::npos)
    while (dot + 1 + digits_after < printed.size() && std::isdigit(static_cast<unsigned char>(printed[dot + 1 + digits_after])))
      ++digits_after;
  std::string mantissa = printed;
  while (!mantissa.empty() && !std::isdigit(static_cast<unsigned char>(mantissa.back()))) mantissa.pop_back();
  const double scale = value / std::stod(mantissa);
  return 0.5 * scale * std::pow(10.0, -static_cast<double>(digits_after));
}

TEST_CASE("every preset's parameter count matches the published one within 1 % (or its rounding)") {
  for (const auto& name : model_preset_names()) {
    const ModelSpec m = load_model(name);
    CAPTURE(name);
    CHECK(!m.source.empty());
    if (m.published_params == 0) {
      std::printf("  %-18s %8.3f B (no published count)\n", name.c_str(), total_params(m) / 1e9);
      continue;
    }
    const auto doc = config::YamlDocument::load_file(std::string(STEPSIM_DATA_DIR) + "/models/presets/" + name + ".yaml");
    const std::string printed = doc.root().required("published_params").as_string();
    const double ours = static_cast<double>(total_params(m));
    const double tolerance = std::max(0.01 * m.published_params, rounding_of(printed, m.published_params));
    std::printf("  %-18s %8.3f B vs published %-12s (%+.2f%%)\n", name.c_str(), ours / 1e9, printed.c_str(),
                100 * (ours / m.published_params - 1));
    CHECK(std::abs(ours - m.published_params) <= tolerance);
  }
  CHECK(model_preset_names().size() >= 33);
}

TEST_CASE("exact parameter counts of released models") {
  // Llama-2-7B: per layer 4·4096² (attention) + 3·4096·11008 (SwiGLU) + 2·4096 (RMSNorms)
  // = 202,383,360; × 32 = 6,476,267,520; + 2·32000·4096 untied embeddings + 4096 final norm.
  CHECK(total_params(load_model("llama-2-7b")) == 6'738'415'616);
  // GPT-NeoX-20B: per layer 12h² + 13h (biases, 2 LayerNorms) with h = 6144 = 453,064,704;
  // × 44 + 2·50432·6144 untied + 2·6144 final LayerNorm = 20,554,567,680 (Black et al. 2022).
  CHECK(total_params(load_model("gpt-neox-20b")) == 20'554'567'680);
  // Mistral 7B: GQA with 8 KV heads of 128: attention 2·4096² + 2·4096·1024 = 41,943,040,
  // MLP 3·4096·14336 = 176,160,768, norms 8192 → 218,112,000 × 32 + 2·32000·4096 + 4096.
  CHECK(total_params(load_model("mistral-7b")) == 7'241'732'096);
}

TEST_CASE("HuggingFace config.json files read as their presets") {
  const ModelSpec llama = load_model(kData + "llama-2-7b-config.json");
  const ModelSpec preset = load_model("llama-2-7b");
  CHECK(llama.layers == preset.layers);
  CHECK(llama.hidden == preset.hidden);
  CHECK(llama.ffn_hidden == 11008);
  CHECK(llama.activation == Activation::swiglu);
  CHECK(llama.norm == Norm::rmsnorm);
  CHECK(!llama.tied_embeddings);
  CHECK(total_params(llama) == total_params(preset));
  CHECK(llama.name == "llama-2-7b-config");

  // GPT-2 small: 12 × (12·768² + 13·768) + (50257 + 1024)·768 + 2·768 = 124,439,808 (tied).
  const ModelSpec gpt2 = load_model(kData + "gpt2-config.json");
  CHECK(gpt2.position == Position::learned);
  CHECK(gpt2.max_seq == 1024);
  CHECK(gpt2.tied_embeddings);
  CHECK(gpt2.dropout);
  CHECK(total_params(gpt2) == 124'439'808);

  const ModelSpec mistral = load_model(kData + "mistral-7b-config.json");
  CHECK(mistral.kv_heads == 8);
  CHECK(total_params(mistral) == total_params(load_model("mistral-7b")));
  // Its sliding window changes what attention costs and is not modelled: said, with its place.
  REQUIRE(mistral.unmodelled.size() == 1);
  CHECK(mistral.unmodelled[0] == kData + "mistral-7b-config.json:16:21: sliding_window 4096 (local attention) is not "
                                         "modelled: attention is costed over the whole sequence, so sequences longer than "
                                         "the window come out slower than they run");
  CHECK(llama.unmodelled.empty());
}

TEST_CASE("a scenario's model: value may be a preset, a mapping with overrides, or a path") {
  const auto doc = config::YamlDocument::load_string(R"yaml(
a: zb-1.5b
b: {preset: llama-2-7b, layers: 2}
c: {layers: 2, hidden: 256, heads: 4, vocab: 1000, position: rotary}
)yaml", "scenario.yaml");
  CHECK(read_model(doc.root().required("a")).layers == 22);
  const ModelSpec b = read_model(doc.root().required("b"));
  CHECK(b.layers == 2);
  CHECK(b.ffn_hidden == 11008);
  CHECK(b.name == "llama-2-7b");
  const ModelSpec c = read_model(doc.root().required("c"));
  CHECK(c.kv_heads == 4);
  CHECK(c.head_dim == 64);
  CHECK(c.ffn_hidden == 1024);  // default 4h
}

std::string error_of(const std::string& yaml) {
  const auto doc = config::YamlDocument::load_string(yaml, "s.yaml");
  try {
    read_model(doc.root().required("model"));
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST_CASE("model mistakes are positioned errors") {
  CHECK(error_of("model: lama-2-7b\n").rfind("s.yaml:1:8: model: unknown model 'lama-2-7b'; did you mean 'llama-2-7b'? Presets: bloom-176b, ", 0) == 0);
  CHECK(error_of("model: {layers: 2, hiden: 256, heads: 4, vocab: 10, max_seq: 8}\n") ==
        "s.yaml:1:20: model: unknown key 'hiden'; did you mean 'hidden'?");
  CHECK(error_of("model: {layers: 2, hidden: 256, heads: 4, kv_heads: 3, vocab: 10, max_seq: 8}\n") ==
        "s.yaml:1:53: model.kv_heads: expected a divisor of heads (4), found '3'");
  CHECK(error_of("model: {layers: 2, hidden: 256, heads: 4, vocab: 10}\n") ==
        "s.yaml:1:8: model: learned position embeddings need max_seq (rows of the position table)");
  CHECK(error_of("model: {layers: 2, hidden: 256, vocab: 10}\n") == "s.yaml:1:8: model: missing required key 'heads'");
  CHECK(error_of("model: {preset: gpt3-175b, activation: relu}\n") ==
        "s.yaml:1:40: model.activation: expected one of gelu, swiglu, found 'relu'; did you mean 'gelu'?");
  CHECK(error_of("model: nowhere/config.json\n") ==
        "s.yaml:1:8: model: no model file 'nowhere/config.json' (relative paths are tried from the working "
        "directory and next to s.yaml)");
}

TEST_CASE("an unknown preset from the command line lists the presets") {
  try {
    load_model("mistral-7");
    FAIL("no error");
  } catch (const config::ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.rfind("unknown model 'mistral-7'; did you mean 'mistral-7b'? Presets: ", 0) == 0);
    CHECK(what.find("zb-28.3b") != std::string::npos);
  }
}

TEST_CASE("a preset answers to the common spellings and to its Hub id") {
  for (const char* name : {"llama2-7b", "Llama-2-7B", "meta-llama/Llama-2-7b-hf", "llama_2_7b"}) {
    CAPTURE(name);
    CHECK(load_model(name).name == "llama-2-7b");
  }
  CHECK(load_model("meta-llama/Meta-Llama-3-8B").name == "llama-3-8b");
  CHECK(load_model("mistralai/Mistral-7B-v0.1").name == "mistral-7b");
  CHECK(load_model("Qwen/Qwen2.5-7B").name == "qwen2.5-7b");
}

TEST_CASE("'did you mean' says when it offers a model of another size") {
  // Mixtral-8x7B is a mixture of experts of 46.7B parameters; mistral-7b is a dense 7.2B model.
  try {
    load_model("mixtral-8x7b");
    FAIL("no error");
  } catch (const config::ConfigError& e) {
    CHECK(std::string(e.what()).rfind("unknown model 'mixtral-8x7b'; did you mean 'mistral-7b'? (that is a model of "
                                      "another size: 7b, not 8x7b) Presets: ", 0) == 0);
  }
}

TEST_CASE("a model directory (what save_pretrained writes) reads its config.json") {
  const std::string dir = std::string(STEPSIM_DATA_DIR) + "/tests/models/data/tiny-hf";
  CHECK(load_model(dir).name == "tiny-hf");
  CHECK(load_model(dir + "/").name == "tiny-hf");
  const std::string empty = std::string(STEPSIM_DATA_DIR) + "/tests/models/data";
  CHECK_THROWS_WITH(load_model(empty), (empty + ": a model directory needs a config.json (a HuggingFace model's); none is in it").c_str());
}

}  // namespace
}  // namespace stepsim::models
