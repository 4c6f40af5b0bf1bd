// The A100 GpuSpec the models tests use until hardware/gpus.yaml is read here. Peak and bandwidth
// from the NVIDIA A100 datasheet (data README §9: 312 TFLOP/s dense bf16/fp16, 2,039 GB/s for the
// 80GB SXM4, 108 SMs). The efficiency parameters are the ones fitted in compute_time_test.cpp to
// Zero Bubble's profiled per-stage times (data README §7a); matmul_efficiency is
// stas00's MAMF 271.2 / 312 = 0.869.
#pragma once

#include "hardware/gpu_spec.hpp"

namespace stepsim::models::testing {

inline hw::GpuSpec a100_sxm4_80gb() {
  hw::GpuSpec g;
  g.name = "A100-SXM4-80GB";
  g.peak.bf16 = g.peak.fp16 = 312e12;
  g.peak.tf32 = 156e12;
  g.peak.fp32 = 19.5e12;
  g.memory_bytes = 80LL * 1024 * 1024 * 1024;
  g.memory_bytes_per_s = 2039e9;
  g.sm_count = 108;
  g.matmul_efficiency = 0.869;  // MAMF 271.2 / 312
  g.matmul_tile_m = 128;
  g.matmul_tile_n = 256;
  g.matmul_k_half = 128;
  g.matmul_tile_half_intensity = 20;  // hardware/gpus.yaml defaults (fitted on the vTrain slice)
  g.attention_efficiency = 0.4;            // hardware/gpus.yaml A100 entries
  g.attention_backward_efficiency = 0.28;
  g.memory_efficiency = 0.55;  // ≈1.1 TB/s: Megatron-era dropout, LayerNorm, softmax kernels (fit)
  g.launch_overhead_ps = 4'000'000;  // 4 us
  return g;
}

}  // namespace stepsim::models::testing
