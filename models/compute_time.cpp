#include "models/compute_time.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace stepsim::models {
namespace {

double ceil_div(std::int64_t a, std::int64_t b) { return static_cast<double>((a + b - 1) / b); }

double orientation_efficiency(const GemmShape& g, int sms, std::int64_t tile_m, std::int64_t tile_n) {
  const double tiles = static_cast<double>(g.batch) * ceil_div(g.m, tile_m) * ceil_div(g.n, tile_n);
  const double waves = std::ceil(tiles / sms);
  return static_cast<double>(g.batch * g.m) * static_cast<double>(g.n) /
         (waves * sms * static_cast<double>(tile_m * tile_n));
}

// A tile of a×b outputs does 2·a·b FLOPs per k-step and loads a + b 16-bit operands: a·b/(a+b)
// FLOP per byte. It runs at I/(I + half) of the math rate when loading takes half/I of the math
// time (the roofline of one SM against its L2 bandwidth, NVIDIA "Matrix Multiplication
// Background" user guide, with the loads partly hidden behind the math).
double tile_rate(std::int64_t a, std::int64_t b, double half) {
  const double intensity = static_cast<double>(a * b) / static_cast<double>(a + b);
  return intensity / (intensity + half);
}

double bandwidth(const hw::GpuSpec& gpu) { return gpu.memory_bytes_per_s * gpu.memory_efficiency; }

// Roofline time of one phase, seconds, at `rate` FLOP/s.
double roofline(double flops, double rate, double bytes, const hw::GpuSpec& gpu) {
  return std::max(rate > 0 ? flops / rate : 0.0, bytes / bandwidth(gpu));
}

std::int64_t to_ps(double seconds, int kernels, const hw::GpuSpec& gpu) {
  if (seconds <= 0) return 0;
  return static_cast<std::int64_t>(std::ceil(seconds * 1e12)) + kernels * gpu.launch_overhead_ps;
}

// Backward GEMM shapes of C[m×n] = A[m×k]·B[k×n]: dA[m×k] = dC·Bᵀ (inner n) and
// dB[k×n] = Aᵀ·dC (inner m). For a weight matmul dA is B (input grad), dB is W.
GemmShape grad_a(const GemmShape& g) { return {g.batch, g.m, g.k, g.n}; }
GemmShape grad_b(const GemmShape& g) { return {g.batch, g.k, g.n, g.m}; }

}  // namespace

double peak_flops(const hw::GpuSpec& gpu, hw::Dtype dtype) {
  switch (dtype) {
    case hw::Dtype::bf16: return gpu.peak.bf16;
    case hw::Dtype::fp16: return gpu.peak.fp16;
    case hw::Dtype::tf32: return gpu.peak.tf32;
    case hw::Dtype::fp32: return gpu.peak.fp32;
    case hw::Dtype::fp8: return gpu.peak.fp8;
  }
  return 0;
}

double gemm_efficiency(const GemmShape& g, const hw::GpuSpec& gpu, hw::Dtype dtype) {
  if (g.batch <= 0 || g.m <= 0 || g.n <= 0 || g.k <= 0) return 1.0;
  const int sms = std::max(1, gpu.sm_count);
  const std::int64_t tm = std::max(1, gpu.matmul_tile_m), tn = std::max(1, gpu.matmul_tile_n);
  auto shape = [&](std::int64_t a, std::int64_t b) {
    return std::max(orientation_efficiency(g, sms, a, b), orientation_efficiency(g, sms, b, a));
  };
  double best = shape(tm, tn);
  if (gpu.matmul_tile_half_intensity > 0) {
    // cuBLAS also has kernels with half and quarter tiles, which fill the SMs in finer waves but
    // move more operand bytes per FLOP; it picks the fastest for the shape.
    const double largest = tile_rate(tm, tn, gpu.matmul_tile_half_intensity);
    for (const auto& [a, b] : {std::pair{tm, tn / 2}, std::pair{tm / 2, tn / 2}, std::pair{tm / 2, tn / 4}})
      if (a >= 1 && b >= 1)
        best = std::max(best, tile_rate(a, b, gpu.matmul_tile_half_intensity) / largest * shape(a, b));
  }
  const double k = static_cast<double>(g.k);
  const double fp8 = dtype == hw::Dtype::fp8 ? gpu.fp8_matmul_ratio : 1.0;
  return gpu.matmul_efficiency * fp8 * best * (k / (k + gpu.matmul_k_half));
}

double gemm_seconds(const GemmShape& g, double bytes, const hw::GpuSpec& gpu, hw::Dtype dtype) {
  return roofline(g.flops(), peak_flops(gpu, dtype) * gemm_efficiency(g, gpu, dtype), bytes, gpu);
}

OpTime time_op(const OpCost& op, const hw::GpuSpec& gpu, hw::Dtype dtype) {
  const double peak = peak_flops(gpu, dtype);
  if (peak <= 0 || gpu.memory_bytes_per_s <= 0)
    throw std::invalid_argument("GPU " + gpu.name + " has no peak FLOP/s for this dtype or no memory bandwidth");
  const bool has_weight_phase = op.bwd_weight_flops > 0 || op.bwd_weight_bytes > 0;
  const int w_kernels = has_weight_phase ? 1 : 0;
  const int b_kernels = std::max(1, op.bwd_kernels - w_kernels);
  double fwd = 0, bwd_input = 0, bwd_weight = 0;
  const hw::Dtype gemm_dtype = op.fp8 ? hw::Dtype::fp8 : dtype;
  if (op.fp8 && peak_flops(gpu, gemm_dtype) <= 0)
    throw std::invalid_argument("GPU " + gpu.name + " has no FP8 peak for the FP8 GEMM " + op.name);
  switch (op.kind) {
    case OpKind::matmul:
      fwd = gemm_seconds(op.gemm, op.fwd_bytes, gpu, gemm_dtype);
      bwd_input = gemm_seconds(grad_a(op.gemm), op.bwd_input_bytes, gpu, gemm_dtype);
      bwd_weight = gemm_seconds(grad_b(op.gemm), op.bwd_weight_bytes, gpu, gemm_dtype);
      break;
    case OpKind::batched_matmul:  // both operands are activations: both gradients are B
      fwd = gemm_seconds(op.gemm, op.fwd_bytes, gpu, dtype);
      bwd_input = gemm_seconds(grad_a(op.gemm), op.bwd_input_bytes / 2, gpu, dtype) +
                  gemm_seconds(grad_b(op.gemm), op.bwd_input_bytes / 2, gpu, dtype);
      break;
    case OpKind::flash_attention:
      fwd = roofline(op.fwd_flops, peak * gpu.attention_efficiency, op.fwd_bytes, gpu);
      bwd_input = roofline(op.bwd_input_flops, peak * gpu.attention_backward(), op.bwd_input_bytes, gpu);
      break;
    case OpKind::cudnn_attention:
      fwd = roofline(op.fwd_flops, peak * gpu.cudnn_attention_forward(), op.fwd_bytes, gpu);
      bwd_input = roofline(op.bwd_input_flops, peak * gpu.cudnn_attention_backward(), op.bwd_input_bytes, gpu);
      break;
    case OpKind::memory:
      fwd = roofline(op.fwd_flops, peak, op.fwd_bytes, gpu);
      bwd_input = roofline(op.bwd_input_flops, peak, op.bwd_input_bytes, gpu);
      bwd_weight = roofline(op.bwd_weight_flops, peak, op.bwd_weight_bytes, gpu);
      break;
  }
  OpTime t;
  t.fwd_ps = to_ps(fwd, op.fwd_kernels, gpu);
  t.bwd_input_ps = to_ps(bwd_input, b_kernels, gpu);
  t.bwd_weight_ps = to_ps(bwd_weight, w_kernels, gpu);
  t.recompute_ps = op.recompute ? std::llround(static_cast<double>(t.fwd_ps) * op.recompute_share) : 0;
  return t;
}

OpsTime time_ops(const std::vector<OpCost>& ops, const hw::GpuSpec& gpu, hw::Dtype dtype) {
  OpsTime sum;
  for (const auto& op : ops) {
    const OpTime t = time_op(op, gpu, dtype);
    sum.fwd_ps += t.fwd_ps;
    sum.bwd_input_ps += t.bwd_input_ps;
    sum.bwd_weight_ps += t.bwd_weight_ps;
    sum.recompute_ps += t.recompute_ps;
  }
  return sum;
}

}  // namespace stepsim::models
