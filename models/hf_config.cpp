// HuggingFace config.json → ModelSpec. Field names per transformers' configuration_*.py of each
// family; defaults are those classes' defaults where a key is absent.
#include <algorithm>
#include <cmath>

#include "models/model_yaml.hpp"
#include "sim/config/yaml_field.hpp"

namespace stepsim::models {
namespace {

using config::Field;

const std::vector<std::string> kFamilies{"llama",    "mistral", "qwen2", "qwen3", "mixtral", "qwen2_moe", "qwen3_moe",
                                         "gemma",    "gemma2",  "gemma3", "gemma3_text", "phi3", "deepseek_v2", "deepseek_v3",
                                         "gpt_neox", "gpt2",    "mpt",   "bloom"};

// The first of `keys` present (families renamed keys over time: bloom n_embed → hidden_size).
Field first_of(const Field& root, std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    if (auto f = root.optional(key)) return *f;
  return root.required(*keys.begin());
}

std::int64_t count(const Field& root, std::initializer_list<const char*> keys) {
  return first_of(root, keys).as_positive_int();
}

bool flag(const Field& root, const char* key, bool fallback) {
  auto f = root.optional(key);
  return f && !f->is_null() ? f->as_bool() : fallback;
}

bool has_dropout(const Field& root, std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    if (auto f = root.optional(key); f && !f->is_null() && f->as_double() > 0) return true;
  return false;
}

// Llama, Mistral, Qwen2: RMSNorm, rotary, SwiGLU, no biases but Qwen2's QKV, untied by default.
void read_llama_like(const Field& root, const std::string& family, ModelSpec& m) {
  m.hidden = count(root, {"hidden_size"});
  m.layers = static_cast<int>(count(root, {"num_hidden_layers"}));
  m.heads = static_cast<int>(count(root, {"num_attention_heads"}));
  m.kv_heads = root.has("num_key_value_heads") ? static_cast<int>(count(root, {"num_key_value_heads"})) : m.heads;
  m.head_dim = root.has("head_dim") && !root.required("head_dim").is_null() ? count(root, {"head_dim"})
                                                                            : m.hidden / m.heads;
  m.ffn_hidden = count(root, {"intermediate_size"});
  m.vocab = count(root, {"vocab_size"});
  m.max_seq = root.has("max_position_embeddings") ? count(root, {"max_position_embeddings"}) : 0;
  m.activation = Activation::swiglu;
  m.norm = Norm::rmsnorm;
  m.position = Position::rotary;
  m.tied_embeddings = flag(root, "tie_word_embeddings", false);
  m.linear_bias = flag(root, "mlp_bias", false);
  m.qkv_bias = family == "qwen2" || family == "qwen2_moe" || flag(root, "attention_bias", false);
  m.qk_norm = family == "qwen3" || family == "qwen3_moe";  // Qwen3Attention's q_norm and k_norm
  m.norm_bias = false;
  m.dropout = has_dropout(root, {"attention_dropout"});
}

// The positive count `key` gives, or `fallback` where it is absent or null (DeepSeek-V2-Lite's
// q_lora_rank; the fields Gemma 3's files leave to their class's defaults).
std::int64_t count_or(const Field& root, const char* key, std::int64_t fallback) {
  auto f = root.optional(key);
  return f && !f->is_null() ? f->as_positive_int() : fallback;
}

// DeepSeek-V2 / V3 (their modeling_deepseek.py on the Hub): latent attention (q_a_proj,
// kv_a_proj_with_mqa, kv_b_proj; no q latent where q_lora_rank is null), dense MLPs of
// intermediate_size in the first first_k_dense_replace layers and experts after: n_routed_experts
// of moe_intermediate_size, top num_experts_per_tok, and the shared experts as one MLP of
// n_shared_experts × moe_intermediate_size (DeepseekV2MoE). V3's noaux_tc routing adds a per-expert
// score bias (MoEGate.e_score_correction_bias). Its multi-token-prediction layer is a warning:
// transformers builds no such layer, and stepsim does not cost it.
void read_deepseek(const Field& root, ModelSpec& m) {
  MlaSpec& a = m.mla;
  a.q_lora_rank = count_or(root, "q_lora_rank", 0);
  a.kv_lora_rank = count(root, {"kv_lora_rank"});
  a.qk_nope_head_dim = count(root, {"qk_nope_head_dim"});
  a.qk_rope_head_dim = count(root, {"qk_rope_head_dim"});
  a.v_head_dim = count(root, {"v_head_dim"});
  m.kv_heads = m.heads;
  m.head_dim = a.v_head_dim;
  if (count_or(root, "n_routed_experts", 0) == 0) return;
  if (auto freq = root.optional("moe_layer_freq"); freq && !freq->is_null() && freq->as_positive_int() != 1)
    freq->fail("expected moe_layer_freq 1 (experts in every layer after the dense ones); other layouts are not modelled yet");
  MoeSpec& moe = m.moe;
  moe.experts = static_cast<int>(count(root, {"n_routed_experts"}));
  moe.top_k = static_cast<int>(count(root, {"num_experts_per_tok"}));
  moe.expert_ffn = count(root, {"moe_intermediate_size"});
  moe.shared_ffn = count_or(root, "n_shared_experts", 0) * moe.expert_ffn;
  if (auto dense = root.optional("first_k_dense_replace"); dense && !dense->is_null()) {
    const std::int64_t layers = dense->as_int();
    if (layers < 0 || layers >= m.layers)
      dense->fail("expected fewer dense layers than the " + std::to_string(m.layers) + " layers, at least 0, found " +
                  dense->found());
    moe.dense_layers = static_cast<int>(layers);
  }
  if (auto method = root.optional("topk_method"); method && !method->is_null()) moe.router_bias = method->as_string() == "noaux_tc";
  if (auto mtp = root.optional("num_nextn_predict_layers"); mtp && !mtp->is_null()) m.mtp_layers = read_mtp_layers(*mtp);
}

// Gemma (transformers' GemmaConfig, Gemma2Config): Llama's layout with a GeGLU MLP (gate_proj,
// up_proj, down_proj; the tanh GELU), head_dim 256 apart from hidden/heads, and embeddings tied
// unless the file says otherwise (tie_word_embeddings defaults to True there). Gemma-2 adds a norm
// after attention and after the MLP (Gemma2DecoderLayer's post_attention_layernorm and
// post_feedforward_layernorm) and alternates local and global attention: even layers slide
// (`not bool(layer_idx % 2)`), odd ones see the whole sequence.
void read_gemma(const Field& root, const std::string& family, ModelSpec& m) {
  m.activation = Activation::geglu;
  m.tied_embeddings = flag(root, "tie_word_embeddings", true);
  if (family != "gemma2") return;
  m.sandwich_norm = true;
  if (auto w = root.optional("sliding_window"); w && !w->is_null()) {
    m.attention_window = w->as_positive_int();
    m.global_attention_every = 2;
  }
}

void warn_softcapping(const Field& root, ModelSpec& m);

// Gemma 3's layer pattern: `sliding_window_pattern` − 1 local layers, then a global one (layer i
// global where (i + 1) % n == 0: transformers' Gemma3TextConfig, 6 by default), or the same
// written out as layer_types. Another layout of layer_types is refused at its position.
int gemma3_global_every(const Field& text) {
  const auto types = text.optional("layer_types");
  if (!types || types->is_null()) {
    auto n = text.optional("sliding_window_pattern");
    return n && !n->is_null() ? static_cast<int>(n->as_positive_int()) : 6;
  }
  const auto items = types->items();
  int every = 0;
  for (std::size_t i = 0; i < items.size() && every == 0; ++i)
    if (items[i].as_string() == "full_attention") every = static_cast<int>(i) + 1;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const bool global = every > 0 && (static_cast<int>(i) + 1) % every == 0;
    if (items[i].as_string() != (global ? "full_attention" : "sliding_attention"))
      items[i].fail("expected local layers repeating with one global after them (Gemma 3's layout); other layouts "
                    "are not modelled, found '" + items[i].as_string() + "' at layer " + std::to_string(i));
  }
  return every;
}

// Gemma 3 (transformers' Gemma3TextConfig; a gemma3 file holds the multimodal model, whose
// language model is its text_config): Gemma-2's layout with q/k norms in place of soft-capping
// and five local layers to one global. The Hub's files leave most fields to the class's
// defaults, used here: vocabulary 262,208, head_dim 256, 8 heads over 4 KV heads, a 4,096-token
// window, tied embeddings.
void read_gemma3(const Field& root, const std::string& family, ModelSpec& m) {
  const Field text = family == "gemma3" ? root.required("text_config") : root;
  if (family == "gemma3")
    m.unmodelled.push_back(config::to_string(text.pos()) + ": only the language model (text_config) is costed; the "
                           "vision tower and its projector are not modelled");
  m.hidden = count(text, {"hidden_size"});
  m.layers = static_cast<int>(count(text, {"num_hidden_layers"}));
  m.ffn_hidden = count(text, {"intermediate_size"});
  m.heads = static_cast<int>(count_or(text, "num_attention_heads", 8));
  m.kv_heads = static_cast<int>(count_or(text, "num_key_value_heads", 4));
  m.head_dim = count_or(text, "head_dim", 256);
  m.vocab = count_or(text, "vocab_size", 262208);
  m.max_seq = count_or(text, "max_position_embeddings", 131072);
  m.activation = Activation::geglu;
  m.norm = Norm::rmsnorm;
  m.position = Position::rotary;
  m.tied_embeddings = flag(text, "tie_word_embeddings", true);
  m.linear_bias = m.norm_bias = false;
  m.qkv_bias = flag(text, "attention_bias", false);
  m.qk_norm = m.sandwich_norm = true;
  m.dropout = has_dropout(text, {"attention_dropout"});
  m.attention_window = count_or(text, "sliding_window", 4096);
  m.global_attention_every = gemma3_global_every(text);
  warn_softcapping(text, m);
}

// Logit soft-capping (Gemma-2: tanh(x/c)·c on the attention scores and the output logits) adds
// elementwise work stepsim does not cost, and FlashAttention runs it only from release 2.6 on.
void warn_softcapping(const Field& root, ModelSpec& m) {
  for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"})
    if (auto f = root.optional(key); f && !f->is_null())
      m.unmodelled.push_back(config::to_string(f->pos()) + ": " + key + " " + f->as_string() +
                             " is not modelled: the tanh capping's elementwise work is not costed");
}

// Local attention every layer: Mistral's and Phi-3's sliding_window (transformers' MistralModel,
// which Phi3Model is generated from, picks the sliding-window mask for the whole model). Qwen
// slides only with use_sliding_window, and only from layer max_window_layers on (28 by default:
// Qwen2Config's layer_types, `i >= max_window_layers`).
void read_sliding_window(const Field& root, const std::string& family, ModelSpec& m) {
  auto w = root.optional("sliding_window");
  if (!w || w->is_null()) return;
  if (family.rfind("qwen", 0) == 0) {
    if (!flag(root, "use_sliding_window", false)) return;
    auto first = root.optional("max_window_layers");
    const std::int64_t global = first && !first->is_null() ? first->as_int() : 28;
    if (global < 0) first->fail("expected a count of layers, at least 0, found " + first->found());
    m.global_first_layers = static_cast<int>(std::min<std::int64_t>(global, m.layers));
  }
  m.attention_window = w->as_positive_int();
}

// Layers whose MLP stays dense in a MoE config: stepsim costs every layer alike, so a config
// that mixes them is refused rather than costed as all-MoE.
void refuse_mixed_layers(const Field& root) {
  if (auto step = root.optional("decoder_sparse_step"); step && !step->is_null() && step->as_positive_int() != 1)
    step->fail("expected decoder_sparse_step 1 (every layer a MoE layer); layers of two kinds are not modelled yet");
  if (auto dense = root.optional("mlp_only_layers"); dense && !dense->is_null() && !dense->items().empty())
    dense->fail("expected no mlp_only_layers (every layer a MoE layer); layers of two kinds are not modelled yet");
}

// transformers' MixtralConfig: num_local_experts experts as wide as intermediate_size, top
// num_experts_per_tok. Qwen2MoeConfig / Qwen3MoeConfig: num_experts of moe_intermediate_size;
// Qwen2-MoE adds one shared expert of shared_expert_intermediate_size behind a sigmoid gate
// (Qwen2MoeSparseMoeBlock). Router jitter and auxiliary-loss coefficients change no cost.
void read_moe(const Field& root, const std::string& family, ModelSpec& m) {
  MoeSpec& moe = m.moe;
  moe.top_k = static_cast<int>(count(root, {"num_experts_per_tok"}));
  if (family == "mixtral") {
    moe.experts = static_cast<int>(count(root, {"num_local_experts"}));
    moe.expert_ffn = m.ffn_hidden;
    return;
  }
  refuse_mixed_layers(root);
  moe.experts = static_cast<int>(count(root, {"num_experts"}));
  moe.expert_ffn = count(root, {"moe_intermediate_size"});
  if (family == "qwen2_moe") {
    moe.shared_ffn = root.has("shared_expert_intermediate_size") ? count(root, {"shared_expert_intermediate_size"}) : 0;
    moe.shared_gate = moe.shared_ffn > 0;
  }
}

void read_gpt_neox(const Field& root, ModelSpec& m) {
  m.hidden = count(root, {"hidden_size"});
  m.layers = static_cast<int>(count(root, {"num_hidden_layers"}));
  m.heads = m.kv_heads = static_cast<int>(count(root, {"num_attention_heads"}));
  m.ffn_hidden = count(root, {"intermediate_size"});
  m.vocab = count(root, {"vocab_size"});
  m.position = Position::rotary;
  m.tied_embeddings = flag(root, "tie_word_embeddings", false);
  m.dropout = has_dropout(root, {"attention_dropout", "hidden_dropout"});
}

void read_gpt2(const Field& root, ModelSpec& m) {
  m.hidden = count(root, {"n_embd"});
  m.layers = static_cast<int>(count(root, {"n_layer"}));
  m.heads = m.kv_heads = static_cast<int>(count(root, {"n_head"}));
  auto inner = root.optional("n_inner");
  m.ffn_hidden = inner && !inner->is_null() ? inner->as_positive_int() : 4 * m.hidden;
  m.vocab = count(root, {"vocab_size"});
  m.max_seq = count(root, {"n_positions"});
  m.position = Position::learned;
  m.tied_embeddings = flag(root, "tie_word_embeddings", true);
  m.dropout = has_dropout(root, {"attn_pdrop", "resid_pdrop"});
}

// MPT: no biases anywhere with no_bias (LayerNorm included); ALiBi turns learned positions off
// (MPTConfig._validate_config).
void read_mpt(const Field& root, ModelSpec& m) {
  m.hidden = count(root, {"d_model"});
  m.layers = static_cast<int>(count(root, {"n_layers"}));
  m.heads = m.kv_heads = static_cast<int>(count(root, {"n_heads"}));
  const double ratio = root.has("expansion_ratio") ? root.required("expansion_ratio").as_positive_double() : 4;
  m.ffn_hidden = static_cast<std::int64_t>(std::llround(ratio * static_cast<double>(m.hidden)));
  m.vocab = count(root, {"vocab_size"});
  m.max_seq = root.has("max_seq_len") ? count(root, {"max_seq_len"}) : 2048;
  const auto attn = root.optional("attn_config");
  const bool alibi = attn && attn->is_map() && flag(*attn, "alibi", false);
  m.position = alibi ? Position::alibi : flag(root, "learned_pos_emb", true) ? Position::learned : Position::none;
  m.linear_bias = m.qkv_bias = m.norm_bias = !flag(root, "no_bias", false);
  m.tied_embeddings = true;
  m.dropout = has_dropout(root, {"resid_pdrop", "emb_pdrop"});
}

void read_bloom(const Field& root, ModelSpec& m) {
  m.hidden = count(root, {"hidden_size", "n_embed"});
  m.layers = static_cast<int>(count(root, {"n_layer", "num_hidden_layers"}));
  m.heads = m.kv_heads = static_cast<int>(count(root, {"n_head", "num_attention_heads"}));
  m.ffn_hidden = 4 * m.hidden;
  m.vocab = count(root, {"vocab_size"});
  m.position = Position::alibi;
  m.tied_embeddings = flag(root, "tie_word_embeddings", true);
  m.dropout = has_dropout(root, {"attention_dropout", "hidden_dropout"});
}

std::string family_of(const Field& root) {
  if (auto type = root.optional("model_type")) return type->as_choice(kFamilies);
  const auto arch = root.required("architectures").items();
  const std::string first = arch.empty() ? "" : arch.front().as_string();
  // Gemma and Phi-3 are named by whole class: Gemma3ForConditionalGeneration and
  // Phi3SmallForCausalLM share their prefixes and are other layouts.
  for (const auto& [prefix, family] : std::vector<std::pair<std::string, std::string>>{
           {"Llama", "llama"}, {"Mistral", "mistral"}, {"Mixtral", "mixtral"}, {"Qwen2Moe", "qwen2_moe"},
           {"Qwen3Moe", "qwen3_moe"}, {"Qwen2", "qwen2"}, {"Qwen3", "qwen3"}, {"Gemma2ForCausalLM", "gemma2"},
           {"GemmaForCausalLM", "gemma"}, {"Gemma3ForConditionalGeneration", "gemma3"},
           {"Gemma3ForCausalLM", "gemma3_text"}, {"Phi3ForCausalLM", "phi3"}, {"DeepseekV2ForCausalLM", "deepseek_v2"},
           {"DeepseekV3ForCausalLM", "deepseek_v3"}, {"GPTNeoX", "gpt_neox"},
           {"GPT2", "gpt2"}, {"MPT", "mpt"}, {"Bloom", "bloom"}})
    if (first.rfind(prefix, 0) == 0) return family;
  root.required("architectures").fail("expected a model_type or an architecture of a supported family "
                                      "(llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, "
                                      "gemma3, gemma3_text, phi3, deepseek_v2, deepseek_v3, gpt_neox, gpt2, mpt, bloom), "
                                      "found '" + first + "'");
}

}  // namespace

ModelSpec read_hf_config(const Field& root, const std::string& default_name) {
  const std::string family = family_of(root);
  ModelSpec m;
  m.name = default_name;
  m.source = "HuggingFace config.json (" + family + ")";
  if (family == "gemma3" || family == "gemma3_text") {
    read_gemma3(root, family, m);
    validate_model(m, family == "gemma3" ? root.required("text_config") : root, false);
    return m;
  }
  if (family == "gpt_neox") read_gpt_neox(root, m);
  else if (family == "gpt2") read_gpt2(root, m);
  else if (family == "mpt") read_mpt(root, m);
  else if (family == "bloom") read_bloom(root, m);
  else read_llama_like(root, family, m);
  if (family == "mixtral" || family == "qwen2_moe" || family == "qwen3_moe") read_moe(root, family, m);
  if (family == "deepseek_v2" || family == "deepseek_v3") read_deepseek(root, m);
  if (family == "gemma" || family == "gemma2") read_gemma(root, family, m);
  else read_sliding_window(root, family, m);
  warn_softcapping(root, m);
  if (m.head_dim == 0) m.head_dim = m.hidden / m.heads;
  validate_model(m, root);
  return m;
}

}  // namespace stepsim::models
