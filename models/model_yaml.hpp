// Reading a model: a preset name (`llama-2-7b`), a model YAML file, a HuggingFace config.json, or
// a scenario's `model:` value (any of those, or an inline mapping, optionally `preset:` plus
// overrides). Every mistake is a config::ConfigError with `file:line:column: key.path: …`.
//
// Model YAML keys (models/presets/*.yaml are examples, each citing its source):
//   layers, hidden, heads, vocab                     required
//   kv_heads (= heads), head_dim (= hidden/heads), ffn_hidden (= 4·hidden)
//   activation: gelu | swiglu | geglu (gelu)   norm: layernorm | rmsnorm (layernorm)
//   position: learned | rotary | alibi | none (learned; learned needs max_seq)
//   tied_embeddings (true), bias (true), qkv_bias (= bias), norm_bias (= bias), dropout (true),
//   qk_norm (false), sandwich_norm (false)
//   attention_window (0 = none: every earlier token), global_attention_every (0 = every layer local),
//   global_first_layers (0), mtp_layers (0: multi-token-prediction depths)
//   name, source, published_params (a count such as 6.74B), published_active_params (MoE)
//   moe: {experts, top_k, expert_ffn (= ffn_hidden), shared_ffn (0), shared_gate (false),
//         capacity_factor (0 = dropless), load_imbalance (1), dense_layers (0), router_bias (false)}
//                                                    mixture of experts (model_spec.hpp MoeSpec)
//   mla: {kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim, q_lora_rank (0)}
//                                                    latent attention (model_spec.hpp MlaSpec)
#pragma once

#include <string>
#include <vector>

#include "models/model_spec.hpp"
#include "sim/config/yaml_fwd.hpp"

namespace stepsim::models {

/// A preset name, or a path to a model YAML or config.json (relative to the working directory).
ModelSpec load_model(const std::string& preset_or_path);
/// A scenario's `model:` value: a preset name or path (a relative path is also tried next to the
/// scenario file), or a mapping in the model YAML format.
ModelSpec read_model(const config::Field& field);
/// Names of the presets in models/presets/, sorted.
std::vector<std::string> model_preset_names();

/// The model YAML format at `root` (a mapping). `default_name` when it has no `name:`.
ModelSpec read_model_yaml(const config::Field& root, const std::string& default_name);
/// A HuggingFace config.json already parsed (Llama, Mistral, Qwen2, Gemma, Gemma-2, Phi-3, GPT-NeoX, GPT-2, MPT, BLOOM,
/// Mixtral, Qwen2-MoE, Qwen3, Qwen3-MoE);
/// unknown keys are ignored (config.json files carry many we do not need).
ModelSpec read_hf_config(const config::Field& root, const std::string& default_name);
/// True when `root` looks like a HuggingFace config (it has `model_type` or `architectures`).
bool is_hf_config(const config::Field& root);

/// Multi-token-prediction depths (ModelSpec::mtp_layers) as a model file or config.json gives them:
/// 0 to 16, else an error at `f`.
int read_mtp_layers(const config::Field& f);

/// Checks the invariants of model_spec.hpp; errors point at `where` (the model's mapping).
/// `head_dim_from_split`: a head_dim absent from `where` was taken as hidden/heads, which must
/// then divide (false where the family has a default of its own: Gemma 3's 256).
void validate_model(const ModelSpec& m, const config::Field& where, bool head_dim_from_split = true);

}  // namespace stepsim::models
