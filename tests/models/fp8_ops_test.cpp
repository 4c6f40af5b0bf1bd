#include <doctest/doctest.h>

#include <string>

#include "models/compute_time.hpp"
#include "models/layer_ops.hpp"
#include "models/model_yaml.hpp"
#include "tests/models/a100_spec.hpp"
#include "tests/models/op_lookup.hpp"

namespace stepsim::models {
namespace {

using testing::op_named;

bool has_op(const std::vector<OpCost>& ops, const std::string& name) {
  for (const auto& op : ops)
    if (op.name == name) return true;
  return false;
}

// Llama-3 8B: h 4096, a 32, g 8, d 128, f 14336 (SwiGLU), no biases.
constexpr double kB = 1, kS = 4096, kH = 4096, kKv = 8 * 128, kF = 14336;

TEST_CASE("FP8 training runs exactly the layer's linear GEMMs in FP8, each between its two casts") {
  const ModelSpec m = load_model("llama-3-8b");
  const auto bf16 = layer_ops(m, {.micro_batch = 1, .seq = 4096});
  const auto fp8 = layer_ops(m, {.micro_batch = 1, .seq = 4096, .fp8 = Fp8Recipe::delayed});
  int gemms = 0;
  for (std::size_t i = 0; i < fp8.size(); ++i) {
    if (!fp8[i].fp8) continue;
    ++gemms;
    CHECK(fp8[i - 1].name == fp8[i].name + "_fp8_cast");
    CHECK(fp8[i + 1].name == fp8[i].name + "_grad_fp8_cast");
  }
  CHECK(gemms == 4);
  for (const char* name : {"qkv", "out_proj", "mlp_up", "mlp_down"}) CHECK(op_named(fp8, name).fp8);
  // Everything else is the bf16 layer's, op for op.
  CHECK(fp8.size() == bf16.size() + 2 * 4);
  for (const auto& op : bf16)
    if (op.kind != OpKind::matmul) CHECK(op_named(fp8, op.name).fwd_bytes == op.fwd_bytes);
  // The head and the embedding stay in 16-bit (Megatron's output layer is not a TE module).
  for (const auto& op : logits_ops(m, {.micro_batch = 1, .seq = 4096, .fp8 = Fp8Recipe::delayed})) CHECK_FALSE(op.fp8);
  CHECK_FALSE(has_op(layer_ops(m, {.micro_batch = 1, .seq = 4096}), "qkv_fp8_cast"));
}

TEST_CASE("FP8 cast bytes: cast_transpose of each input (the transpose alone after a fused norm) and of each output gradient") {
  const ModelSpec m = load_model("llama-3-8b");
  const double T = kB * kS, e = 2;
  const auto ops = layer_ops(m, {.micro_batch = 1, .seq = 4096, .fp8 = Fp8Recipe::delayed});
  // LayerNormLinear (qkv, mlp_up): the norm writes FP8, the transpose reads and writes 1 byte each.
  CHECK(op_named(ops, "qkv_fp8_cast").fwd_bytes == doctest::Approx(2 * T * kH));
  CHECK(op_named(ops, "mlp_up_fp8_cast").fwd_bytes == doctest::Approx(2 * T * kH));
  // Plain Linear (out_proj, mlp_down): read e, write the FP8 copy and its transpose.
  CHECK(op_named(ops, "out_proj_fp8_cast").fwd_bytes == doctest::Approx((e + 2) * T * kH));
  CHECK(op_named(ops, "mlp_down_fp8_cast").fwd_bytes == doctest::Approx((e + 2) * T * kF));
  // Backward: cast_transpose of the output gradient, e + 1 + 1 per element of the GEMM's output.
  CHECK(op_named(ops, "qkv_grad_fp8_cast").bwd_input_bytes == doctest::Approx((e + 2) * T * (kH + 2 * kKv)));
  CHECK(op_named(ops, "mlp_up_grad_fp8_cast").bwd_input_bytes == doctest::Approx((e + 2) * T * 2 * kF));
  CHECK(op_named(ops, "mlp_down_grad_fp8_cast").bwd_input_bytes == doctest::Approx((e + 2) * T * kH));
  CHECK(op_named(ops, "qkv_fp8_cast").bwd_input_bytes == 0);
  CHECK(op_named(ops, "qkv_grad_fp8_cast").fwd_bytes == 0);
  // Current scaling reads each tensor once more for its amax first, a kernel of its own.
  const auto tw = layer_ops(m, {.micro_batch = 1, .seq = 4096, .fp8 = Fp8Recipe::tensorwise});
  CHECK(op_named(tw, "out_proj_fp8_cast").fwd_bytes == doctest::Approx((2 * e + 2) * T * kH));
  CHECK(op_named(tw, "mlp_down_grad_fp8_cast").bwd_input_bytes == doctest::Approx((2 * e + 2) * T * kH));
  CHECK(op_named(tw, "out_proj_fp8_cast").fwd_kernels == 2);
}

TEST_CASE("without the TN-only layout (Blackwell) a cast writes no transpose, and a fused norm needs no cast") {
  const ModelSpec m = load_model("llama-3-8b");
  const double T = kB * kS, e = 2;
  const auto ops = layer_ops(m, {.micro_batch = 1, .seq = 4096, .fp8 = Fp8Recipe::delayed, .fp8_transposes = false});
  CHECK_FALSE(has_op(ops, "qkv_fp8_cast"));
  CHECK_FALSE(has_op(ops, "mlp_up_fp8_cast"));
  CHECK(op_named(ops, "out_proj_fp8_cast").fwd_bytes == doctest::Approx((e + 1) * T * kH));
  CHECK(op_named(ops, "mlp_down_grad_fp8_cast").bwd_input_bytes == doctest::Approx((e + 1) * T * kH));
  CHECK(op_named(ops, "qkv").fp8);
}

TEST_CASE("FP8 GEMMs keep their inputs for the weight gradient in 1 byte, and read FP8 operands") {
  const ModelSpec m = load_model("llama-3-8b");
  const auto bf16 = layer_ops(m, {.micro_batch = 1, .seq = 4096, .tp = 2, .sequence_parallel = true});
  const auto fp8 = layer_ops(m, {.micro_batch = 1, .seq = 4096, .tp = 2, .sequence_parallel = true, .fp8 = Fp8Recipe::delayed});
  for (const char* name : {"qkv", "out_proj", "mlp_up", "mlp_down"}) {
    const OpCost &a = op_named(bf16, name), &b = op_named(fp8, name);
    CHECK(b.activation_bytes * 2 == a.activation_bytes);
    const GemmShape& g = a.gemm;
    const double x = static_cast<double>(g.m * g.k), w = static_cast<double>(g.k * g.n), y = static_cast<double>(g.m * g.n);
    CHECK(a.fwd_bytes - b.fwd_bytes == doctest::Approx(x + w));   // X and W read at 1 byte, Y written at 2
    CHECK(a.bwd_input_bytes - b.bwd_input_bytes == doctest::Approx(y + w));
    CHECK(a.bwd_weight_bytes - b.bwd_weight_bytes == doctest::Approx(x + y));
  }
  // Full recompute keeps only the layer input, and the casts re-run with their GEMMs.
  const auto full = layer_ops(m, {.micro_batch = 1, .seq = 4096, .recompute = Recompute::full, .fp8 = Fp8Recipe::delayed});
  CHECK(op_named(full, "qkv_fp8_cast").recompute);
  CHECK_FALSE(op_named(full, "qkv_grad_fp8_cast").recompute);
  CHECK(op_named(full, "qkv").activation_bytes == 0);
}

TEST_CASE("an FP8 GEMM runs at the FP8 peak times fp8_matmul_ratio of the 16-bit efficiency") {
  hw::GpuSpec gpu = testing::a100_sxm4_80gb();
  gpu.peak.fp8 = 2 * gpu.peak.bf16;
  gpu.fp8_matmul_ratio = 0.88;
  // A large compute-bound GEMM: 8192 x 8192 x 8192 fills every wave of 108 SMs evenly enough that
  // the ratio of the two times is the ratio of the rates.
  OpCost op;
  op.kind = OpKind::matmul;
  op.gemm = {1, 8192, 8192, 8192};
  op.fwd_flops = op.gemm.flops();
  op.fwd_bytes = 3.0 * 8192 * 8192;
  const double bf16 = static_cast<double>(time_op(op, gpu, hw::Dtype::bf16).fwd_ps - gpu.launch_overhead_ps);
  op.fp8 = true;
  const double fp8 = static_cast<double>(time_op(op, gpu, hw::Dtype::bf16).fwd_ps - gpu.launch_overhead_ps);
  CHECK(bf16 / fp8 == doctest::Approx(2 * 0.88).epsilon(1e-6));
  gpu.peak.fp8 = 0;
  CHECK_THROWS(time_op(op, gpu, hw::Dtype::bf16));
}

}  // namespace
}  // namespace stepsim::models
