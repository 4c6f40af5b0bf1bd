// FLOP counts for reporting throughput. MFU counts model FLOPs (what the model needs, no
// recompute); HFU counts hardware FLOPs (what ran, recompute included). Each function says
// which, and cites its formula. Per training iteration unless the name says per token.
#pragma once

#include <cstdint>

#include "models/model_spec.hpp"

namespace stepsim::models {

/// MFU numerator. Narayanan et al. SC'21 eq. 3 without recompute / Korthikanti et al. 2022
/// appendix A: 72·B·L·s·h²·(1 + s/(6h) + V/(12hL)) for B sequences of s tokens.
double megatron_model_flops(double batch, double layers, double seq, double hidden, double vocab);
/// HFU with full activation recompute, the figure Narayanan et al. SC'21 report (eq. 3):
/// 96·B·s·L·h²·(1 + s/(6h) + V/(16Lh)).
double megatron_hardware_flops_full_recompute(double batch, double layers, double seq,
                                              double hidden, double vocab);
/// HFU with selective recompute (Korthikanti et al. 2022 appendix A):
/// 72·B·L·s·h²·(1 + s/(3h) + V/(12hL)).
double megatron_hardware_flops_selective(double batch, double layers, double seq, double hidden,
                                         double vocab);

/// MFU numerator per token for any decoder (GQA, SwiGLU): 6·N + 12·L·h·s, i.e. 6N for the
/// matmuls forward and backward plus attention scores and context (MosaicML llm-foundry:
/// attn_flops_per_seq = L·2·2·h·s², times 3 for forward + backward, divided by s tokens).
/// N = active_params(m) (total_params for a dense model), embeddings included, as llm-foundry
/// counts it; a MoE token runs k experts, as Megatron-Core's num_floating_point_operations counts.
/// A sliding-window layer counts its window w < s of keys instead of s.
double model_flops_per_token(const ModelSpec& m, std::int64_t seq);
/// HFU per token with one recompute forward (llm-foundry's HFU: 4 instead of 3): 8·N + 16·L·h·s.
double hardware_flops_per_token_full_recompute(const ModelSpec& m, std::int64_t seq);

}  // namespace stepsim::models
