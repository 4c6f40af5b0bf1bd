// HuggingFace config.json files of the Gemma, Gemma-2 and Phi-3 families read as their presets,
// with their local attention costed and what stepsim does not cost said with its position. The
// fixtures in data/ are the Hub's files for those models (field for field as published).
#include <doctest/doctest.h>

#include <string>

#include "models/model_yaml.hpp"
#include "sim/config/yaml_field.hpp"

namespace stepsim::models {
namespace {

const std::string kData = std::string(STEPSIM_DATA_DIR) + "/tests/models/data/";

ModelSpec from_json(const std::string& json) {
  const auto doc = config::YamlDocument::load_string(json, "config.json");
  return read_hf_config(doc.root(), "inline");
}

std::string reader_error(const std::string& json) {
  try {
    from_json(json);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("Gemma 7B: a GeGLU MLP, head_dim 256 apart from hidden/heads, tied embeddings by default") {
  const ModelSpec m = load_model(kData + "gemma-7b-config.json");
  CHECK(m.activation == Activation::geglu);
  CHECK(m.head_dim == 256);
  CHECK(m.tied_embeddings);  // tie_word_embeddings absent: GemmaConfig's default
  CHECK(!m.sandwich_norm);
  CHECK(m.attention_window == 0);
  // 28 × (3072·4096·4 + 3·3072·24576 + 2·3072) + 256000·3072 + 3072 = 8,537,680,896, the Hub's count.
  CHECK(total_params(m) == 8'537'680'896);
  CHECK(total_params(m) == total_params(load_model("gemma-7b")));
  CHECK(m.unmodelled.empty());
}

TEST_CASE("Gemma-2 9B: four norms a layer, even layers local over 4096 keys, soft-capping said") {
  const ModelSpec m = load_model(kData + "gemma-2-9b-config.json");
  CHECK(m.sandwich_norm);
  CHECK(m.attention_window == 4096);
  CHECK(m.global_attention_every == 2);
  // transformers' Gemma2DecoderLayer: is_sliding = not bool(layer_idx % 2).
  CHECK(attention_window(m, 0) == 4096);
  CHECK(attention_window(m, 1) == 0);
  CHECK(attention_window(m, 40) == 4096);
  CHECK(attention_window(m, 41) == 0);
  // 42 × (3584·4096·2 + 2·3584·2048 + 3·3584·14336 + 4·3584) + 256000·3584 + 3584 = 9,241,705,984.
  CHECK(total_params(m) == 9'241'705'984);
  CHECK(total_params(m) == total_params(load_model("gemma-2-9b")));
  REQUIRE(m.unmodelled.size() == 2);
  CHECK(m.unmodelled[0] == kData + "gemma-2-9b-config.json:5:29: attn_logit_softcapping 50.0 is not modelled: the "
                                   "tanh capping's elementwise work is not costed");
  CHECK(m.unmodelled[1] == kData + "gemma-2-9b-config.json:9:30: final_logit_softcapping 30.0 is not modelled: the "
                                   "tanh capping's elementwise work is not costed");
}

TEST_CASE("Phi-3 mini: fused projections count as Llama's, a window of 2047 keys in every layer") {
  const ModelSpec m = load_model(kData + "phi-3-mini-4k-config.json");
  CHECK(m.activation == Activation::swiglu);
  CHECK(!m.tied_embeddings);
  CHECK(m.attention_window == 2047);
  CHECK(m.global_attention_every == 0);
  CHECK(attention_window(m, 31) == 2047);
  // 32 × (4·3072² + 3·3072·8192 + 2·3072) + 2·32064·3072 + 3072 = 3,821,079,552, the Hub's count.
  CHECK(total_params(m) == 3'821'079'552);
  CHECK(total_params(m) == total_params(load_model("phi-3-mini-4k")));
}

TEST_CASE("DeepSeek-V2-Lite: latent attention without a query latent, one dense layer, then 64 experts") {
  const ModelSpec m = load_model(kData + "deepseek-v2-lite-config.json");
  CHECK(m.mla.q_lora_rank == 0);  // null in the file
  CHECK(m.mla.kv_lora_rank == 512);
  CHECK(qk_head_dim(m) == 192);
  CHECK(v_head_dim(m) == 128);
  CHECK(m.moe.dense_layers == 1);
  CHECK(m.moe.shared_ffn == 2 * 1408);
  CHECK(!m.moe.router_bias);
  // Attention: q_proj 2048·16·192 + kv_a 2048·(512+64) + its norm 512 + kv_b 512·16·256 + o 16·128·2048
  // = 13,763,072; 27 × (that + 2·2048) + one dense 3·2048·10944 + 26 × (66 experts of 3·2048·1408
  // + the 64·2048 router) + 2·102400·2048 + 2048 = 15,706,484,224 (15.7B, DeepSeek-V2 App. B.1).
  CHECK(attention_params(m) == 13'763'072);
  CHECK(total_params(m) == 15'706'484'224);
  CHECK(total_params(m) == total_params(load_model("deepseek-v2-lite")));
  // Active: 27 attention blocks and norms, the dense MLP, 26 × (6 routed + 2 shared experts + the
  // router), embedding, head and final norm = 2,661,150,208; 2,451,435,008 without the input
  // embedding, which the paper's "2.4B" seems to leave out (and to truncate).
  CHECK(active_params(m) == 2'661'150'208);
  CHECK(m.unmodelled.empty());
}

TEST_CASE("DeepSeek-V3: a query latent, three dense layers, the router's score bias, one MTP depth") {
  const ModelSpec m = load_model(kData + "deepseek-v3-config.json");
  CHECK(m.mla.q_lora_rank == 1536);
  CHECK(m.moe.dense_layers == 3);
  CHECK(m.moe.router_bias);  // topk_method noaux_tc
  // Attention: q_a 7168·1536 + 1536 + q_b 1536·128·192 + kv_a 7168·576 + 512 + kv_b 512·128·256
  // + o 128·128·7168 = 187,107,328; 61 × (that + 2·7168) + 3 × 3·7168·18432 + 58 × (257 experts of
  // 3·7168·2048 + 256·7168 + 256) + 2·129280·7168 + 7168 = 671,026,419,200 (the 671B main model).
  CHECK(attention_params(m) == 187'107'328);
  CHECK(total_params(m) == 671'026'419'200);
  CHECK(total_params(m) == total_params(load_model("deepseek-v3")));
  // num_nextn_predict_layers 1: one multi-token-prediction depth, whose own weights are enorm,
  // hnorm and its final norm (3·7168), eh_proj 2·7168·7168 = 102,760,448 and one MoE layer:
  // 187,107,328 + 2·7168 + 257·3·7168·2048 + 256·7168 + 256 = 11,507,286,272; 11,610,068,224 in all.
  CHECK(m.mtp_layers == 1);
  CHECK(mtp_params(m) == 11'610'068'224);
  CHECK(load_model("deepseek-v3").mtp_layers == 1);
  CHECK(m.unmodelled.empty());
  std::string text = R"({"model_type": "deepseek_v3", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
 "intermediate_size": 128, "vocab_size": 100, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8,
 "v_head_dim": 8, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "moe_layer_freq": 2})";
  CHECK(reader_error(text) == "config.json:3:115: moe_layer_freq: expected moe_layer_freq 1 (experts in every layer after "
                              "the dense ones); other layouts are not modelled yet");
}

TEST_CASE("Qwen2 slides only with use_sliding_window, and only from layer max_window_layers on") {
  const std::string qwen = R"({"model_type": "qwen2", "hidden_size": 1024, "num_hidden_layers": 4,
 "num_attention_heads": 16, "num_key_value_heads": 2, "intermediate_size": 2816, "vocab_size": 1000,
 "sliding_window": 4096, "max_window_layers": 2, "use_sliding_window": )";
  const ModelSpec m = from_json(qwen + "true}");
  CHECK(m.attention_window == 4096);
  CHECK(m.global_first_layers == 2);
  CHECK(attention_window(m, 1) == 0);     // Qwen2Config's layer_types: i >= max_window_layers slides
  CHECK(attention_window(m, 2) == 4096);
  CHECK(m.unmodelled.empty());
  CHECK(from_json(qwen + "false}").attention_window == 0);
}

TEST_CASE("Gemma 3 12B: the language model of the multimodal file, class defaults, one global layer in six") {
  const ModelSpec m = load_model(kData + "gemma-3-12b-config.json");
  CHECK(m.head_dim == 256);     // absent from text_config: Gemma3TextConfig's default
  CHECK(m.vocab == 262'208);    // likewise
  CHECK(m.tied_embeddings);
  CHECK(m.qk_norm);
  CHECK(m.sandwich_norm);
  CHECK(m.attention_window == 1024);
  CHECK(m.global_attention_every == 6);
  CHECK(attention_window(m, 4) == 1024);
  CHECK(attention_window(m, 5) == 0);  // (5 + 1) % 6 == 0: global
  // 48 × (3840·4096 + 2·3840·2048 + 4096·3840 + 3·3840·15360 + 4·3840 + 2·256) = 10,759,151,616
  // (the paper's 10,759M non-embedding) + 262,208·3840 tied + 3840 = 11,766,034,176.
  CHECK(total_params(m) == 11'766'034'176);
  CHECK(total_params(m) == total_params(load_model("gemma-3-12b")));
  REQUIRE(m.unmodelled.size() == 1);
  CHECK(m.unmodelled[0] == kData + "gemma-3-12b-config.json:10:18: only the language model (text_config) is costed; the "
                                   "vision tower and its projector are not modelled");
}

TEST_CASE("Gemma 3's layer_types: the repeating pattern is read, any other layout refused at its place") {
  const std::string base = R"({"model_type": "gemma3_text", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4,
 "sliding_window": 16, "layer_types": )";
  const ModelSpec m = from_json(base + R"(["sliding_attention", "full_attention", "sliding_attention", "full_attention"]})");
  CHECK(m.global_attention_every == 2);
  CHECK(reader_error(base + R"(["sliding_attention", "full_attention", "full_attention", "full_attention"]})") ==
        "config.json:2:79: layer_types[2]: expected local layers repeating with one global after them (Gemma 3's layout); "
        "other layouts are not modelled, found 'full_attention' at layer 2");
}

TEST_CASE("Gemma-3n and Phi-3-small share their families' class prefixes and are refused by name") {
  for (const char* arch : {"Gemma3nForConditionalGeneration", "Phi3SmallForCausalLM"}) {
    CAPTURE(arch);
    const std::string message = reader_error(std::string(R"({"architectures": [")") + arch + R"("]})");
    CHECK(message.find("expected a model_type or an architecture of a supported family") != std::string::npos);
    CHECK(message.find(std::string("found '") + arch + "'") != std::string::npos);
  }
  CHECK(reader_error(R"({"model_type": "gemma2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
 "intermediate_size": 128, "vocab_size": 100, "sliding_window": 0})") ==
        "config.json:2:65: sliding_window: expected a positive integer, found '0'");
}

TEST_CASE("tuned checkpoints' Hub ids name their base's preset") {
  CHECK(load_model("google/gemma-2-9b-it").name == "gemma-2-9b");
  CHECK(load_model("microsoft/Phi-3-mini-4k-instruct").name == "phi-3-mini-4k");
  CHECK(load_model("meta-llama/Llama-2-7b-chat-hf").name == "llama-2-7b");
}

}  // namespace stepsim::models
