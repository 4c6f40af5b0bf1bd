#include "models/model_spec.hpp"

namespace stepsim::models {

const char* to_string(Activation a) {
  return a == Activation::gelu ? "gelu" : a == Activation::swiglu ? "swiglu" : "geglu";
}
const char* to_string(Norm n) { return n == Norm::layernorm ? "layernorm" : "rmsnorm"; }
const char* to_string(Position p) {
  switch (p) {
    case Position::learned: return "learned";
    case Position::rotary: return "rotary";
    case Position::alibi: return "alibi";
    case Position::none: return "none";
  }
  return "?";
}

namespace {

// Parameters of one layer split by Megatron-LM's tensor-parallel layout.
struct LayerParams {
  std::int64_t sharded = 0;     ///< divided over TP ranks
  std::int64_t replicated = 0;  ///< every TP rank holds a copy
};

// One MLP of width f: column-parallel up/gate (h → f or 2f) with its biases, row-parallel down
// (f → h) whose bias every TP rank keeps.
LayerParams one_mlp(const ModelSpec& m, std::int64_t f) {
  const std::int64_t h = m.hidden;
  const std::int64_t up_out = is_gated(m.activation) ? 2 * f : f;
  return {h * up_out + (m.linear_bias ? up_out : 0) + f * h, m.linear_bias ? h : 0};
}

// The MLP of one layer with `experts` of the routed experts. Megatron-Core without expert
// parallelism splits every expert over TP like a dense MLP (expert tensor parallelism = TP) and
// keeps the router and the shared-expert gate whole on each rank.
LayerParams mlp_layer_params(const ModelSpec& m, std::int64_t experts, bool moe_layer = true) {
  if (!m.moe.enabled() || !moe_layer) return one_mlp(m, m.ffn_hidden);
  const LayerParams expert = one_mlp(m, m.moe.expert_ffn);
  LayerParams p{experts * expert.sharded,
                experts * expert.replicated + m.hidden * m.moe.experts + (m.moe.router_bias ? m.moe.experts : 0)};
  if (m.moe.shared_ffn > 0) {
    const LayerParams shared = one_mlp(m, m.moe.shared_ffn);
    p.sharded += shared.sharded;
    p.replicated += shared.replicated + (m.moe.shared_gate ? m.hidden : 0);
  }
  return p;
}

// Megatron-Core's MLASelfAttention (multi_latent_attention.py with TransformerEngine's spec): the
// down projections and the latent norms duplicated on every TP rank, the up projections
// column-parallel, the output projection row-parallel. No biases (DeepSeek's attention_bias).
LayerParams latent_attention_params(const ModelSpec& m) {
  const MlaSpec& a = m.mla;
  const std::int64_t h = m.hidden, heads = m.heads, qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
  LayerParams p;
  p.replicated = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank;
  if (a.q_lora_rank > 0) {
    p.replicated += h * a.q_lora_rank + a.q_lora_rank;
    p.sharded = a.q_lora_rank * heads * qk;
  } else {
    p.sharded = h * heads * qk;
  }
  p.sharded += a.kv_lora_rank * heads * (a.qk_nope_head_dim + a.v_head_dim) + heads * a.v_head_dim * h;
  return p;
}

LayerParams layer_params(const ModelSpec& m, int layer) {
  const std::int64_t h = m.hidden, q = std::int64_t{m.heads} * m.head_dim;
  const std::int64_t kv = std::int64_t{m.kv_heads} * m.head_dim;
  LayerParams p = mlp_layer_params(m, m.moe.experts, is_moe_layer(m, layer));
  if (m.mla.enabled()) {
    const LayerParams attention = latent_attention_params(m);
    p.sharded += attention.sharded;
    p.replicated += attention.replicated;
  } else {
    // Column-parallel QKV (h → q + 2kv) with its biases; row-parallel output projection (q → h),
    // its bias replicated.
    p.sharded += h * (q + 2 * kv) + (m.qkv_bias ? q + 2 * kv : 0) + q * h;
    p.replicated += m.linear_bias ? h : 0;
  }
  p.replicated += norms_per_layer(m) * norm_params(m) + (m.qk_norm ? 2 * m.head_dim : 0);
  return p;
}

}  // namespace

std::int64_t attention_params(const ModelSpec& m) {
  if (m.mla.enabled()) {
    const LayerParams p = latent_attention_params(m);
    return p.sharded + p.replicated;
  }
  const std::int64_t h = m.hidden, q = std::int64_t{m.heads} * m.head_dim;
  const std::int64_t kv = std::int64_t{m.kv_heads} * m.head_dim;
  return h * (q + 2 * kv) + q * h + (m.qkv_bias ? q + 2 * kv : 0) + (m.linear_bias ? h : 0);
}

std::int64_t mlp_params(const ModelSpec& m) {
  const LayerParams p = mlp_layer_params(m, m.moe.experts);
  return p.sharded + p.replicated;
}

std::int64_t active_mlp_params(const ModelSpec& m) {
  const LayerParams p = mlp_layer_params(m, m.moe.enabled() ? m.moe.top_k : 0);
  return p.sharded + p.replicated;
}

std::int64_t norm_params(const ModelSpec& m) {
  return m.norm == Norm::layernorm && m.norm_bias ? 2 * m.hidden : m.hidden;
}

bool is_moe_layer(const ModelSpec& m, int layer) { return m.moe.enabled() && layer >= m.moe.dense_layers; }

std::int64_t params_per_layer(const ModelSpec& m, int layer) {
  const LayerParams p = layer_params(m, layer);
  return p.sharded + p.replicated;
}

std::int64_t params_per_layer(const ModelSpec& m) { return params_per_layer(m, m.layers - 1); }

std::int64_t embedding_params(const ModelSpec& m) {
  const std::int64_t positions = m.position == Position::learned ? m.max_seq : 0;
  return (m.vocab + positions) * m.hidden;
}

std::int64_t head_params(const ModelSpec& m) {
  return norm_params(m) + (m.tied_embeddings ? 0 : m.vocab * m.hidden);
}

std::int64_t total_params(const ModelSpec& m) {
  std::int64_t layers = 0;
  for (int l = 0; l < m.layers; ++l) layers += params_per_layer(m, l);
  return embedding_params(m) + layers + head_params(m);
}

std::int64_t mtp_params_per_rank(const ModelSpec& m, int tp) {
  return m.mtp_layers * (3 * norm_params(m) + 2 * m.hidden * m.hidden / tp + params_per_layer_per_rank(m, tp));
}

std::int64_t mtp_params(const ModelSpec& m) { return mtp_params_per_rank(m, 1); }

std::int64_t active_params(const ModelSpec& m) {
  std::int64_t moe_layers = 0;
  for (int l = 0; l < m.layers; ++l) moe_layers += is_moe_layer(m, l) ? 1 : 0;
  return total_params(m) - moe_layers * (mlp_params(m) - active_mlp_params(m));
}

int norms_per_layer(const ModelSpec& m) { return m.sandwich_norm ? 4 : 2; }

std::int64_t qk_head_dim(const ModelSpec& m) {
  return m.mla.enabled() ? m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim : m.head_dim;
}

std::int64_t v_head_dim(const ModelSpec& m) { return m.mla.enabled() ? m.mla.v_head_dim : m.head_dim; }

std::int64_t attention_window(const ModelSpec& m, int layer) {
  const bool global = (m.global_attention_every > 0 && (layer + 1) % m.global_attention_every == 0) ||
                      layer < m.global_first_layers;
  return global ? 0 : m.attention_window;
}

std::int64_t params_per_layer_per_rank(const ModelSpec& m, int layer, int tp) {
  const LayerParams p = layer_params(m, layer);
  return p.sharded / tp + p.replicated;
}

std::int64_t params_per_layer_per_rank(const ModelSpec& m, int tp) { return params_per_layer_per_rank(m, m.layers - 1, tp); }

}  // namespace stepsim::models
