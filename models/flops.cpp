#include "models/flops.hpp"

namespace stepsim::models {

double megatron_model_flops(double B, double L, double s, double h, double V) {
  return 72 * B * L * s * h * h * (1 + s / (6 * h) + V / (12 * h * L));
}

double megatron_hardware_flops_full_recompute(double B, double L, double s, double h, double V) {
  return 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
}

double megatron_hardware_flops_selective(double B, double L, double s, double h, double V) {
  return 72 * B * L * s * h * h * (1 + s / (3 * h) + V / (12 * h * L));
}

namespace {

// Attention scores and context per sequence, forward: L·2·2·h·s² (llm-foundry's attn_flops_per_seq).
// A local layer's query meets at most its window of keys, so w replaces s there (Mistral 7B,
// Jiang et al. 2023 §2: sliding-window attention costs O(s·w), not O(s²)).
// Latent attention's scores run over d_qk dims and its context over d_v: 2·a·(d_qk + d_v) in place of 4·a·d.
double attention_flops_per_token(const ModelSpec& m, std::int64_t seq) {
  const double attention_width = static_cast<double>(m.heads) * static_cast<double>(qk_head_dim(m) + v_head_dim(m)) / 2;
  double keys = 0;
  for (int layer = 0; layer < m.layers; ++layer) {
    const std::int64_t window = attention_window(m, layer);
    keys += static_cast<double>(window > 0 && window < seq ? window : seq);
  }
  return 4.0 * attention_width * keys;
}

}  // namespace

double model_flops_per_token(const ModelSpec& m, std::int64_t seq) {
  return 3 * (2.0 * static_cast<double>(active_params(m)) + attention_flops_per_token(m, seq));
}

double hardware_flops_per_token_full_recompute(const ModelSpec& m, std::int64_t seq) {
  return 4 * (2.0 * static_cast<double>(active_params(m)) + attention_flops_per_token(m, seq));
}

}  // namespace stepsim::models
