// How long an op takes on one GPU. A roofline with an achievable-efficiency model:
//
//   time = max(flops / (peak · eff), bytes / (memory_bw · memory_efficiency)) + launch · kernels
//
// eff for a GEMM C[m×n] += A[m×k]·B[k×n] (batched `batch` times):
//   waves      = ceil(tiles / sm_count), tiles = batch · ceil(m/tile_m) · ceil(n/tile_n)
//   shape_eff  = batch·m·n / (waves · sm_count · tile_m · tile_n)   wave and tile quantization
//   k_eff      = k / (k + matmul_k_half)                             short inner dimensions
//   eff        = matmul_efficiency · shape_eff · k_eff
// taking the better of the two tile orientations (cuBLAS picks its tile by shape), and the best
// of the largest tile and its half and quarter sizes, each at its own share of the math rate
// tile_rate(I) = I / (I + matmul_tile_half_intensity), I = tile_m·tile_n/(tile_m + tile_n)
// FLOP per operand byte, relative to the largest tile's (smaller tiles quantize finely but
// load more bytes per FLOP). Flash
// attention runs at attention_efficiency of peak forward and attention_backward() backward,
// cuDNN's fused attention at cudnn_attention_forward() / cudnn_attention_backward();
// bandwidth-bound ops at memory_efficiency. An FP8 GEMM (OpCost::fp8) runs at the FP8 peak times
// fp8_matmul_ratio · eff.
// All parameters live in hw::GpuSpec, one set per GPU kind (never per model).
// tests/models/compute_time_test.cpp fits the A100 set to Zero Bubble's profiled times.
#pragma once

#include <cstdint>

#include "hardware/gpu_spec.hpp"
#include "models/layer_ops.hpp"

namespace stepsim::models {

/// Times in picoseconds (rounded up, so a non-empty op never takes 0 ps).
struct OpTime {
  std::int64_t fwd_ps = 0;
  std::int64_t bwd_input_ps = 0;   ///< B
  std::int64_t bwd_weight_ps = 0;  ///< W
  std::int64_t recompute_ps = 0;   ///< forward re-run before backward: fwd_ps × recompute_share when op.recompute
  std::int64_t bwd_ps() const { return recompute_ps + bwd_input_ps + bwd_weight_ps; }
  auto operator<=>(const OpTime&) const = default;
};

/// Peak dense FLOP/s of `gpu` for `dtype`; 0 when the GPU has none.
double peak_flops(const hw::GpuSpec& gpu, hw::Dtype dtype);
/// Fraction of peak one GEMM of this shape reaches (the `eff` above), in (0, 1]; an FP8 GEMM's
/// is fp8_matmul_ratio of it.
double gemm_efficiency(const GemmShape& gemm, const hw::GpuSpec& gpu, hw::Dtype dtype = hw::Dtype::bf16);
/// Seconds for a GEMM that moves `bytes` (roofline, no launch overhead).
double gemm_seconds(const GemmShape& gemm, double bytes, const hw::GpuSpec& gpu, hw::Dtype dtype);

/// `dtype` is the 16-bit type everything but FP8 GEMMs (OpCost::fp8) runs in.
/// Requires: peak_flops(gpu, dtype) > 0 (and of fp8 for an FP8 GEMM), gpu.memory_bytes_per_s > 0.
OpTime time_op(const OpCost& op, const hw::GpuSpec& gpu, hw::Dtype dtype);

/// Sums of time_op over a list of ops, picoseconds.
struct OpsTime {
  std::int64_t fwd_ps = 0, bwd_input_ps = 0, bwd_weight_ps = 0, recompute_ps = 0;
};
OpsTime time_ops(const std::vector<OpCost>& ops, const hw::GpuSpec& gpu, hw::Dtype dtype);

}  // namespace stepsim::models
