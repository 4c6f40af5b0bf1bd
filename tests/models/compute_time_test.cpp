#include <doctest/doctest.h>

#include <algorithm>

#include <cmath>
#include <cstdio>

#include "hardware/hardware_yaml.hpp"
#include "models/compute_time.hpp"
#include "models/model_yaml.hpp"
#include "tests/models/a100_spec.hpp"

namespace stepsim::models {
namespace {

using testing::a100_sxm4_80gb;

double ms(std::int64_t ps) { return static_cast<double>(ps) / 1e9; }

// Zero Bubble (Qi et al. 2024) Table 6, profiled per-stage times on A100-SXM 80GB, ms, m = 24.
// Reading of the setup (data README §7a, Table 3): pure pipeline (TP = DP = 1), s = 1024, fp16
// (the authors' scripts pass --fp16), Megatron-LM's unfused attention (the paper's memory model
// M_B = sb(34h + 5as) keeps the s² softmax, so no flash attention and no recompute), dropout on
// (Megatron GPT defaults). First and last stages have one layer fewer, so with p stages and L
// layers the middle stages hold k with p·k − 2 = L: 1.5B 22 L / 8 → 3; 6.2B 30 / 8 → 4;
// 14.6B 46 / 16 → 3; 28.3B 62 / 32 → 2. T_F, T_B (input gradients) and T_W (weight gradients)
// of a middle stage are k times one layer's.
struct ZeroBubbleRow {
  const char* preset;
  int micro_batch, layers_per_stage;
  double f_ms, b_ms, w_ms;
};
constexpr ZeroBubbleRow kZeroBubble[] = {
    {"zb-1.5b", 6, 3, 18.52, 18.09, 9.34},
    {"zb-6.2b", 3, 4, 29.72, 29.44, 19.93},
    {"zb-14.6b", 1, 3, 11.35, 11.25, 8.13},
    {"zb-28.3b", 1, 2, 10.42, 10.21, 7.72},
};

TEST_CASE("Zero Bubble Table 6 per-stage F/B/W times on A100 are reproduced within 15%") {
  const hw::GpuSpec gpu = a100_sxm4_80gb();
  std::printf("Zero Bubble Table 6 (A100, fp16, s=1024, middle stage)   model vs paper, ms\n");
  for (const auto& row : kZeroBubble) {
    const ModelSpec m = load_model(row.preset);
    LayerShape shape{.micro_batch = row.micro_batch, .seq = 1024, .flash_attention = false};
    const OpsTime t = time_ops(layer_ops(m, shape), gpu, hw::Dtype::fp16);
    const double f = row.layers_per_stage * ms(t.fwd_ps), b = row.layers_per_stage * ms(t.bwd_input_ps),
                 w = row.layers_per_stage * ms(t.bwd_weight_ps);
    auto err = [](double model, double paper) { return (model - paper) / paper; };
    std::printf("  %-9s F %6.2f vs %6.2f (%+5.1f%%)  B %6.2f vs %6.2f (%+5.1f%%)  W %6.2f vs %6.2f (%+5.1f%%)\n",
                row.preset, f, row.f_ms, 100 * err(f, row.f_ms), b, row.b_ms, 100 * err(b, row.b_ms), w,
                row.w_ms, 100 * err(w, row.w_ms));
    CHECK(std::abs(err(f, row.f_ms)) < 0.15);
    CHECK(std::abs(err(b, row.b_ms)) < 0.15);
    CHECK(std::abs(err(w, row.w_ms)) < 0.15);
  }
}


TEST_CASE("Korthikanti Table 4: one 22B layer's compute stays below the measured layer time") {
  // Korthikanti et al. 2022 Table 4 (data README §2): one layer of the 22B model (h 6144, 64
  // heads, s 2048, b 4, TP 8, A100, no recompute, no SP) takes 7.7 ms forward, 11.9 ms backward
  // including its TP all-reduces. Our compute-only time (Megatron's unfused attention, bf16)
  // must be below both; the rest is communication that sim/plan adds.
  const ModelSpec m = load_model("korthikanti-22b");
  LayerShape shape{.micro_batch = 4, .seq = 2048, .tp = 8, .flash_attention = false};
  const OpsTime t = time_ops(layer_ops(m, shape), a100_sxm4_80gb(), hw::Dtype::bf16);
  const double fwd = ms(t.fwd_ps), bwd = ms(t.bwd_input_ps + t.bwd_weight_ps);
  std::printf("Korthikanti 22B layer (TP 8): compute fwd %.2f ms (paper 7.7 with comm), bwd %.2f ms (11.9)\n",
              fwd, bwd);
  CHECK(fwd < 7.7);
  CHECK(bwd < 11.9);
}

TEST_CASE("hardware/gpus.yaml carries the fitted A100 parameters these tests use") {
  const hw::GpuSpec yaml = hw::load_gpu_spec("A100-SXM4-80GB"), fitted = a100_sxm4_80gb();
  CHECK(yaml.matmul_efficiency == doctest::Approx(fitted.matmul_efficiency));
  CHECK(yaml.matmul_tile_m == fitted.matmul_tile_m);
  CHECK(yaml.matmul_tile_n == fitted.matmul_tile_n);
  CHECK(yaml.matmul_k_half == doctest::Approx(fitted.matmul_k_half));
  CHECK(yaml.matmul_tile_half_intensity == doctest::Approx(fitted.matmul_tile_half_intensity));
  CHECK(yaml.memory_efficiency == doctest::Approx(fitted.memory_efficiency));
  CHECK(yaml.attention_efficiency == doctest::Approx(fitted.attention_efficiency));
  CHECK(yaml.attention_backward() == doctest::Approx(fitted.attention_backward()));
  CHECK(yaml.launch_overhead_ps == fitted.launch_overhead_ps);
  CHECK(yaml.sm_count == fitted.sm_count);
  CHECK(yaml.memory_bytes_per_s == doctest::Approx(fitted.memory_bytes_per_s));
}

TEST_CASE("GEMM efficiency: wave quantization and short inner dimensions") {
  const hw::GpuSpec gpu = a100_sxm4_80gb();
  // 108 tiles of 128×256 fill the 108 SMs once: shape factor 1; k = 8192 → 8192/(8192+128).
  CHECK(gemm_efficiency({1, 128 * 12, 256 * 9, 8192}, gpu) == doctest::Approx(0.869 * 8192.0 / 8320));
  // 109 tiles need two waves: 109 / 216 of the machine is busy (with only the largest tile).
  hw::GpuSpec one_tile = gpu;
  one_tile.matmul_tile_half_intensity = 0;
  CHECK(gemm_efficiency({1, 128 * 109, 256, 8192}, one_tile) == doctest::Approx(0.869 * 109.0 / 216 * 8192.0 / 8320));
  // k = 128 halves the k-factor.
  CHECK(gemm_efficiency({1, 128 * 12, 256 * 9, 128}, gpu) == doctest::Approx(0.869 * 0.5));
}

TEST_CASE("GEMM tiles: one full wave keeps the largest tile, one tile more takes the smallest") {
  // Tile of a×b outputs: a·b/(a+b) FLOP per operand byte, rate I/(I + 20) (half intensity 20),
  // relative to the largest tile 128×256 (I = 85.3).
  auto rate = [](double a, double b) { const double i = a * b / (a + b); return i / (i + 20); };
  const double largest = rate(128, 256), k = 8192.0 / (8192 + 128);
  const hw::GpuSpec gpu = a100_sxm4_80gb();
  // 108 tiles of 128×256 fill the 108 SMs exactly once: no smaller tile beats shape factor 1
  // (216 half tiles also fill two waves exactly, at 0.94 of the rate).
  CHECK(gemm_efficiency({1, 128 * 12, 256 * 9, 8192}, gpu) == doctest::Approx(0.869 * k));
  // 109 × 256 rows, 256 columns: 109 large tiles need 2 waves (109/216 busy); 218 of 128×128
  // need 3 (218/324); 436 of 64×128 need 5 (436/540); 872 of 64×64 need 9 (872/972), and that
  // finest tiling wins despite its lower rate.
  const double large = 109.0 / 216, half = 218.0 / 324 * rate(128, 128) / largest,
               quarter = 436.0 / 540 * rate(64, 128) / largest, smallest = 872.0 / 972 * rate(64, 64) / largest;
  CHECK(smallest > std::max({large, half, quarter}));
  CHECK(gemm_efficiency({1, 128 * 109, 256, 8192}, gpu) == doctest::Approx(0.869 * smallest * k));
}

TEST_CASE("op time is the roofline plus launches; recompute repeats the forward") {
  const hw::GpuSpec gpu = a100_sxm4_80gb();
  OpCost op;
  op.fwd_bytes = 2039e9 * 0.55 * 1e-3;  // one millisecond at 0.55 of 2,039 GB/s
  op.recompute = true;
  const OpTime t = time_op(op, gpu, hw::Dtype::bf16);
  CHECK(t.fwd_ps == doctest::Approx(1e9 + 4e6).epsilon(1e-6));  // + one 4 us launch
  CHECK(t.recompute_ps == t.fwd_ps);
  CHECK(t.bwd_input_ps == 0);
}

TEST_CASE("flash attention: forward and backward run at their own fractions of peak") {
  hw::GpuSpec gpu = a100_sxm4_80gb();
  gpu.launch_overhead_ps = 0;
  OpCost op;
  op.kind = OpKind::flash_attention;
  op.fwd_flops = 312e12 * 0.4 * 1e-3;          // one millisecond forward at 0.40 of 312 TFLOP/s
  op.bwd_input_flops = 2.5 * op.fwd_flops;     // FlashAttention's backward: 2.5x the forward FLOPs
  const OpTime t = time_op(op, gpu, hw::Dtype::bf16);
  CHECK(t.fwd_ps == doctest::Approx(1e9).epsilon(1e-6));
  CHECK(t.bwd_input_ps == doctest::Approx(2.5e9 * 0.4 / 0.28).epsilon(1e-6));
  gpu.attention_backward_efficiency = 0;       // not given: the backward runs at the forward's rate
  CHECK(time_op(op, gpu, hw::Dtype::bf16).bwd_input_ps == doctest::Approx(2.5e9).epsilon(1e-6));
}

TEST_CASE("cuDNN attention runs at the GPU's cuDNN figures, and at flash attention's where it has none") {
  hw::GpuSpec gpu = a100_sxm4_80gb();
  gpu.launch_overhead_ps = 0;
  OpCost op;
  op.kind = OpKind::cudnn_attention;
  op.fwd_flops = 312e12 * 0.4 * 1e-3;  // one millisecond at flash attention's 0.40
  op.bwd_input_flops = 2.5 * op.fwd_flops;
  // The A100 has no cuDNN figure (TransformerEngine runs FlashAttention there): flash's times.
  CHECK(time_op(op, gpu, hw::Dtype::bf16).fwd_ps == doctest::Approx(1e9).epsilon(1e-6));
  CHECK(time_op(op, gpu, hw::Dtype::bf16).bwd_input_ps == doctest::Approx(2.5e9 * 0.4 / 0.28).epsilon(1e-6));
  gpu.cudnn_attention_efficiency = 0.8;
  gpu.cudnn_attention_backward_efficiency = 0.5;
  const OpTime t = time_op(op, gpu, hw::Dtype::bf16);
  CHECK(t.fwd_ps == doctest::Approx(1e9 * 0.4 / 0.8).epsilon(1e-6));
  CHECK(t.bwd_input_ps == doctest::Approx(2.5e9 * 0.4 / 0.5).epsilon(1e-6));
}

}  // namespace
}  // namespace stepsim::models
