#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "models/model_yaml.hpp"
#include "sim/config/yaml_field.hpp"

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
    if (m.published_active_params > 0) {  // a MoE model card's active parameters per token
      const std::string active_printed = doc.root().required("published_active_params").as_string();
      const double active = static_cast<double>(active_params(m));
      const double tolerance = std::max(0.01 * m.published_active_params, rounding_of(active_printed, m.published_active_params));
      // Cards count the input embedding (Mistral, Qwen) or not (DeepSeek: a token reads one row
      // of the table); the count must match one of the two readings.
      const double without_embedding = active - static_cast<double>(embedding_params(m));
      CHECK((std::abs(active - m.published_active_params) <= tolerance ||
             std::abs(without_embedding - m.published_active_params) <= tolerance));
    }
  }
  CHECK(model_preset_names().size() >= 45);
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

TEST_CASE("exact parameter counts of mixture-of-experts models, total and active per token") {
  // Mixtral 8x7B: attention 41,943,040 (as Mistral 7B), 8 SwiGLU experts of 3·4096·14336 =
  // 176,160,768, router 4096·8, norms 8192 → 1,451,270,144 per layer; × 32 + 2·32000·4096 + 4096.
  const ModelSpec mixtral = load_model("mixtral-8x7b");
  CHECK(total_params(mixtral) == 46'702'792'704);
  // Active: 2 of the 8 experts → 394,305,536 per layer; × 32 + the embeddings and final norm.
  CHECK(active_params(mixtral) == 12'879'925'248);
  // Qwen1.5-MoE-A2.7B: attention 2048·6144 + 6144 QKV bias + 2048² = 16,783,360; 60 experts of
  // 3·2048·1408 = 8,650,752; a shared expert 3·2048·5632 = 34,603,008 and its gate 2048; router
  // 2048·60; norms 4096 → 570,560,512 per layer; × 24 + 2·151936·2048 + 2048.
  const ModelSpec qwen15 = load_model("qwen1.5-moe-a2.7b");
  CHECK(total_params(qwen15) == 14'315'784'192);
  // Active: 4 experts (34,603,008) → 86,118,400 per layer.
  CHECK(active_params(qwen15) == 2'689'173'504);
  // Qwen3-30B-A3B: attention 2048·(4096 + 2·512) + 4096·2048 = 18,874,368 and q/k norms 2·128;
  // 128 experts of 3·2048·768 = 4,718,592; router 2048·128; norms 4096 → 623,120,640 per layer;
  // × 48 + 2·151936·2048 + 2048. Active: 8 experts → 56,889,600 per layer (the card says 3.3B).
  const ModelSpec qwen3 = load_model("qwen3-30b-a3b");
  CHECK(total_params(qwen3) == 30'532'122'624);
  CHECK(active_params(qwen3) == 3'353'032'704);
  // A dense model's active parameters are all of them.
  CHECK(active_params(load_model("llama-2-7b")) == total_params(load_model("llama-2-7b")));
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
  // Its sliding window is costed: every layer local, as the preset (Mistral 7B v0.1).
  CHECK(mistral.attention_window == 4096);
  CHECK(mistral.global_attention_every == 0);
  CHECK(load_model("mistral-7b").attention_window == 4096);
  CHECK(mistral.unmodelled.empty());
  CHECK(llama.unmodelled.empty());
}

TEST_CASE("MoE config.json files read as their presets") {
  for (const char* name : {"mixtral-8x7b", "qwen1.5-moe-a2.7b", "qwen3-30b-a3b"}) {
    CAPTURE(name);
    const ModelSpec hf = load_model(kData + name + "-config.json");
    const ModelSpec preset = load_model(name);
    CHECK(hf.moe == preset.moe);
    CHECK(hf.qk_norm == preset.qk_norm);
    CHECK(hf.qkv_bias == preset.qkv_bias);
    CHECK(total_params(hf) == total_params(preset));
    CHECK(active_params(hf) == active_params(preset));
    CHECK(hf.unmodelled.empty());  // Qwen's sliding_window is off (use_sliding_window false)
  }
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
        "s.yaml:1:40: model.activation: expected one of gelu, swiglu, geglu, found 'relu'; did you mean 'gelu'?");
  CHECK(error_of("model: nowhere/config.json\n") ==
        "s.yaml:1:8: model: no model file 'nowhere/config.json' (relative paths are tried from the working "
        "directory and next to s.yaml)");
}

TEST_CASE("MoE mistakes are positioned errors") {
  CHECK(error_of("model: {preset: mixtral-8x7b, moe: {top_k: 9}}\n") ==
        "s.yaml:1:44: model.moe.top_k: expected top_k between 1 and the 8 experts, found 9");
  CHECK(error_of("model: {preset: llama-2-7b, moe: {experts: 8}}\n") ==
        "s.yaml:1:34: model.moe: missing required key 'top_k'");
  CHECK(error_of("model: {preset: mixtral-8x7b, moe: {expert: 8}}\n") ==
        "s.yaml:1:37: model.moe: unknown key 'expert'; did you mean 'experts'?");
  const auto doc = config::YamlDocument::load_string(
      "{model_type: qwen3_moe, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, intermediate_size: 128,\n"
      " vocab_size: 100, num_experts: 4, num_experts_per_tok: 2, moe_intermediate_size: 32, mlp_only_layers: [0]}\n",
      "config.json");
  try {
    read_hf_config(doc.root(), "x");
    FAIL("mixed layers accepted");
  } catch (const config::ConfigError& e) {
    CHECK(std::string(e.what()) == "config.json:2:103: mlp_only_layers: expected no mlp_only_layers (every layer a "
                                   "MoE layer); layers of two kinds are not modelled yet");
  }
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
  // A Mistral of 12B parameters is not mistral-7b.
  try {
    load_model("mistral-12b");
    FAIL("no error");
  } catch (const config::ConfigError& e) {
    CHECK(std::string(e.what()).rfind("unknown model 'mistral-12b'; did you mean 'mistral-7b'? (that is a model of "
                                      "another size: 7b, not 12b) Presets: ", 0) == 0);
  }
  // The mixture of experts is a preset of its own now, under its Hub ids too.
  CHECK(load_model("mistralai/Mixtral-8x7B-v0.1").name == "mixtral-8x7b");
  CHECK(load_model("Qwen/Qwen1.5-MoE-A2.7B").name == "qwen1.5-moe-a2.7b");
  CHECK(load_model("Qwen/Qwen3-30B-A3B").name == "qwen3-30b-a3b");
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
