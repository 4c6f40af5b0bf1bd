// Internal to models/: the sizes of one layer's ops on one rank and the builders of its ops (a
// GEMM, a bandwidth-bound op, a norm, a residual add), shared by layer_ops.cpp (the layer, its
// MLP or experts, the embedding and the head), attention_ops.cpp (the attention block) and
// recompute_policy.cpp. No other layer includes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/layer_ops.hpp"

namespace stepsim::models::detail {

using I64 = std::int64_t;

// The sizes every op of a layer needs, per TP rank.
struct Dims {
  double e;       // bytes per element
  I64 b, s;       // s: the whole sequence (attention's keys)
  int cp;         // context-parallel ranks sharing it
  I64 tokens;     // T = b·s/cp, rows of every GEMM
  I64 norm_tokens;  // T/t with sequence parallelism, else T: rows of norms and dropouts
  I64 h;
  I64 d;          // a head's query and key dims (d_nope + d_rope under latent attention)
  I64 dv;         // a head's value dims
  I64 q_heads;    // a/t
  I64 kv_heads;   // g/t (at least one: KV heads are replicated when g < t)
  I64 ffn;        // f/t
  int etp;        // expert tensor-parallel degree: t, or 1 (whole experts)
  bool dropout;
  int tp;
  EagerOps eager;
};

/// Checks that the shape fits the model (TP, EP, CP divide what they split) and works out Dims;
/// std::invalid_argument where it does not (sim/plan checks the strategy first).
Dims dims_of(const ModelSpec& m, const LayerShape& shape);
/// A GEMM with weights W[k×n] and its two backward GEMMs; `stored_input_bytes` kept for them.
OpCost matmul(std::string name, GemmShape g, double e, bool bias, I64 stored_input_bytes);
/// A bandwidth-bound op: `fwd` and `bwd` bytes moved, `stored` bytes kept for backward.
OpCost memory_op(std::string name, double fwd, double bwd, I64 stored, int kernels = 1);
I64 to_bytes(double v);
/// LayerNorm / RMSNorm over the rank's norm_tokens × h.
OpCost norm_op(std::string name, const ModelSpec& m, const Dims& x);
/// The same over norm_tokens × `width` with `params` weights (latent attention's latent norms,
/// RMSNorms: `rms`).
OpCost norm_op(std::string name, const Dims& x, I64 width, I64 params, bool rms);
/// `norms` alike norms over `elements` elements in all, as norm_op costs one (Qwen3's q and k
/// norms over each head): fused, or at::rms_norm's eager chain where x.eager.norm and `rms`.
OpCost norms_op(std::string name, const Dims& x, double elements, int norms, bool rms);
/// Residual add with hidden dropout.
OpCost dropout_add_op(std::string name, const Dims& x);
/// The attention block after the layer's input norm: the projections, q/k norms, rotary, the
/// core (flash, cuDNN or unfused) and the output projection (attention_ops.cpp).
void add_attention(std::vector<OpCost>& ops, const ModelSpec& m, const Dims& x, const LayerShape& shape);
/// Under recompute: selective, marks what re-runs and sets what each op keeps, as the shape's
/// SelectivePolicy says (recompute_policy.cpp).
void apply_selective_recompute(std::vector<OpCost>& ops, const ModelSpec& m, const Dims& x, const LayerShape& shape);
/// Under FP8 training, marks the layer's linear GEMMs FP8 and puts each one's input cast before
/// it and its output gradient's cast after it (fp8_ops.cpp); `e` is the 16-bit element size.
void apply_fp8(std::vector<OpCost>& ops, double e, Fp8Recipe recipe, bool transposes);

}  // namespace stepsim::models::detail
