#include "models/model_spec.hpp"

namespace stepsim::models {

const char* to_string(Activation a) { return a == Activation::gelu ? "gelu" : "swiglu"; }
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

LayerParams layer_params(const ModelSpec& m) {
  const std::int64_t h = m.hidden, q = std::int64_t{m.heads} * m.head_dim;
  const std::int64_t kv = std::int64_t{m.kv_heads} * m.head_dim, f = m.ffn_hidden;
  LayerParams p;
  // Column-parallel: QKV (h → q + 2kv) and MLP up/gate (h → f or 2f), with their biases.
  const std::int64_t up_out = m.activation == Activation::swiglu ? 2 * f : f;
  p.sharded += h * (q + 2 * kv) + (m.qkv_bias ? q + 2 * kv : 0);
  p.sharded += h * up_out + (m.linear_bias ? up_out : 0);
  // Row-parallel: output projection (q → h) and MLP down (f → h); their biases are replicated.
  p.sharded += q * h + f * h;
  p.replicated += m.linear_bias ? 2 * h : 0;
  p.replicated += 2 * norm_params(m);
  return p;
}

}  // namespace

std::int64_t attention_params(const ModelSpec& m) {
  const std::int64_t h = m.hidden, q = std::int64_t{m.heads} * m.head_dim;
  const std::int64_t kv = std::int64_t{m.kv_heads} * m.head_dim;
  return h * (q + 2 * kv) + q * h + (m.qkv_bias ? q + 2 * kv : 0) + (m.linear_bias ? h : 0);
}

std::int64_t mlp_params(const ModelSpec& m) {
  const std::int64_t h = m.hidden, f = m.ffn_hidden;
  const int matrices = m.activation == Activation::swiglu ? 3 : 2;
  const std::int64_t biases = m.linear_bias ? (matrices - 1) * f + h : 0;
  return matrices * h * f + biases;
}

std::int64_t norm_params(const ModelSpec& m) {
  return m.norm == Norm::layernorm && m.norm_bias ? 2 * m.hidden : m.hidden;
}

std::int64_t params_per_layer(const ModelSpec& m) {
  return attention_params(m) + mlp_params(m) + 2 * norm_params(m);
}

std::int64_t embedding_params(const ModelSpec& m) {
  const std::int64_t positions = m.position == Position::learned ? m.max_seq : 0;
  return (m.vocab + positions) * m.hidden;
}

std::int64_t head_params(const ModelSpec& m) {
  return norm_params(m) + (m.tied_embeddings ? 0 : m.vocab * m.hidden);
}

std::int64_t total_params(const ModelSpec& m) {
  return embedding_params(m) + m.layers * params_per_layer(m) + head_params(m);
}

std::int64_t params_per_layer_per_rank(const ModelSpec& m, int tp) {
  const LayerParams p = layer_params(m);
  return p.sharded / tp + p.replicated;
}

}  // namespace stepsim::models
