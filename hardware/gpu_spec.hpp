// What one GPU kind can do: peak rates, memory, and the few parameters of its achievable-efficiency
// model. One set per GPU kind (never per model or per run); presets live in hardware/gpus.yaml
// with each figure cited. `models/` reads this struct to time an op; it never sees the graph.
#pragma once

#include <cstdint>
#include <string>

namespace stepsim::hw {

enum class Dtype { bf16, fp16, tf32, fp32, fp8 };

/// Peak dense tensor-core FLOP/s per dtype; 0 where the GPU has none (V100 bf16, A100 fp8).
struct PeakFlops {
  double bf16 = 0, fp16 = 0, tf32 = 0, fp32 = 0, fp8 = 0;
  double of(Dtype d) const;
  /// The 16-bit tensor type to train in: bf16 where the GPU has it, else fp16 (V100).
  Dtype half() const { return bf16 > 0 ? Dtype::bf16 : Dtype::fp16; }
};

struct GpuSpec {
  std::string name;                      ///< "A100-SXM4-80GB"
  PeakFlops peak;                        ///< FLOP/s
  std::int64_t memory_bytes = 0;         ///< HBM/GDDR capacity
  double memory_bytes_per_s = 0;         ///< peak memory bandwidth
  int sm_count = 0;                      ///< streaming multiprocessors, for wave quantization
  /// FP8 tensor cores take only the TN layout (Hopper, Ada), so FP8 training keeps transposed
  /// FP8 copies of each GEMM input and weight; Blackwell's take any layout (Transformer Engine
  /// makes no transposes there).
  bool fp8_transposes = true;
  // Achievable-efficiency model (models/compute_time.* says how each is used):
  double matmul_efficiency = 0.8;        ///< best large-GEMM fraction of peak (MAMF / peak)
  /// An FP8 GEMM's fraction of the FP8 peak over a 16-bit GEMM's fraction of its peak (FP8 kernels
  /// halve the math time but not their scaling and epilogue work).
  double fp8_matmul_ratio = 1.0;
  int matmul_tile_m = 128;               ///< output tile rows of the typical GEMM kernel
  int matmul_tile_n = 256;               ///< output tile columns
  double matmul_k_half = 256;            ///< inner dimension at which a GEMM reaches half its k-efficiency
  /// FLOP per operand byte at which a GEMM tile runs at half its math rate; smaller tiles
  /// (half, quarter) are considered only when > 0.
  double matmul_tile_half_intensity = 0;
  double attention_efficiency = 0.6;     ///< flash-attention fraction of matmul peak (forward)
  double attention_backward_efficiency = 0;  ///< its backward; 0 = the forward's
  /// cuDNN's fused attention (TransformerEngine's FusedAttention, which it prefers on Hopper and
  /// later), forward and backward fractions of peak; 0 = none published: the flash ones apply.
  double cudnn_attention_efficiency = 0;
  double cudnn_attention_backward_efficiency = 0;
  double memory_efficiency = 0.8;        ///< achievable fraction of memory bandwidth
  std::int64_t launch_overhead_ps = 0;   ///< per kernel, added to each op's time
  double comm_slowdown = 0.0;            ///< compute runs (1 + x) slower while communication runs
  double price_per_hour = 0.0;           ///< USD per GPU-hour; 0 = unknown
  /// What this GPU's efficiency parameters were fitted to (gpus.yaml `fitted_to`); empty = not
  /// fitted to any measurement of it: the defaults fitted on A100 and Hopper apply, and
  /// `stepsim run` says so beside its results.
  std::string fitted_to;
  // The GPU's own links, for building servers and importing `nvidia-smi topo -m` (added by issue 4):
  int nvlink_links = 0;                  ///< NVLink links per GPU (bridge links on PCIe cards); 0 = none
  double nvlink_bytes_per_s = 0;         ///< all of them together, per direction; 0 = none
  int pcie_generation = 0;               ///< host interface, x16
  double pcie_bytes_per_s = 0;           ///< x16 link, per direction

  /// Flash attention's backward fraction of peak: its own where given, else the forward's.
  double attention_backward() const {
    return attention_backward_efficiency > 0 ? attention_backward_efficiency : attention_efficiency;
  }
  /// cuDNN fused attention's forward / backward fraction of peak, or flash attention's where no
  /// figure is given.
  double cudnn_attention_forward() const {
    return cudnn_attention_efficiency > 0 ? cudnn_attention_efficiency : attention_efficiency;
  }
  double cudnn_attention_backward() const {
    return cudnn_attention_backward_efficiency > 0 ? cudnn_attention_backward_efficiency : attention_backward();
  }
  /// Per-direction bandwidth of one NVLink link; 0 when the GPU has none.
  double nvlink_link_bytes_per_s() const {
    return nvlink_links > 0 ? nvlink_bytes_per_s / nvlink_links : 0.0;
  }
};

}  // namespace stepsim::hw
