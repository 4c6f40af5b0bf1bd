// FP8 training as NVIDIA Transformer Engine runs it under Megatron-Core (TE's Linear,
// LayerNormLinear and GroupedLinear modules; the "FP8 primer" of TE's documentation): every linear
// GEMM of a layer runs in FP8 — forward, data gradient and weight gradient, E4M3 for inputs and
// weights and E5M2 for gradients (the HYBRID format) — and everything else stays in 16-bit: the
// attention core, norms, activations, the router, the embedding and Megatron's output layer,
// which is not a TE module.
//
// Each FP8 GEMM adds two bandwidth-bound kernels:
// - before it, the cast of its 16-bit input to FP8 together with the transpose the weight
//   gradient needs where the GPU's FP8 tensor cores take only the TN layout (Hopper and Ada, not
//   Blackwell: hw::GpuSpec::fp8_transposes; TE's cast_transpose writes both): reads e bytes and
//   writes 1 (+ 1) per element. Where TE fuses the norm before the GEMM (LayerNormLinear: qkv
//   and the MLP's up projection in Megatron-Core's TE layer spec, and the up projections after
//   latent attention's norms), the norm already writes FP8 and only the transpose remains: 1 + 1
//   bytes per element, or no kernel at all without transposes.
// - after it (run in backward, before its gradients), the cast of the output gradient: e + 1
//   (+ 1) bytes per element.
// Delayed scaling takes the amax inside these kernels; current (tensorwise) scaling first reads
// the tensor once more for its amax, a kernel of its own.
// The GEMMs read their operands in FP8 and write 16-bit results; each keeps its input in FP8 for
// the weight gradient (1 byte per element) instead of the 16-bit one.
#include "models/op_builders.hpp"

namespace stepsim::models {

const char* to_string(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::none: return "none";
    case Fp8Recipe::delayed: return "delayed";
    case Fp8Recipe::tensorwise: return "tensorwise";
  }
  return "?";
}

namespace detail {
namespace {

// The GEMMs Megatron-Core's TE spec builds as LayerNormLinear (the norm fused before them).
bool after_fused_norm(const std::string& name) {
  return name == "qkv" || name == "mlp_up" || name == "q_up" || name == "kv_up";
}

// Linear layers with weights; the router (TE's FP8 does not reach the gating GEMM in
// Megatron-Core) and the one-column shared-expert gate stay in 16-bit.
bool runs_in_fp8(const OpCost& op) {
  return op.kind == OpKind::matmul && op.params > 0 && op.name != "router" && op.name != "shared_gate";
}

OpCost cast_op(std::string name, double fwd_bytes, double bwd_bytes, int kernels, bool recompute) {
  OpCost cast = memory_op(std::move(name), fwd_bytes, bwd_bytes, 0, kernels);
  cast.fp8_cast = true;
  cast.recompute = recompute && fwd_bytes > 0;
  // TE issues the cast from inside the module's forward: one host call per kernel; the gradient's
  // cast has no forward at all.
  cast.fwd_kernels = fwd_bytes > 0 ? kernels : 0;
  cast.fwd_host_calls = cast.fwd_kernels;
  cast.bwd_kernels = bwd_bytes > 0 ? kernels : 0;
  return cast;
}

}  // namespace

void apply_fp8(std::vector<OpCost>& ops, double e, Fp8Recipe recipe, bool transposes) {
  if (recipe == Fp8Recipe::none) return;
  const double t = transposes ? 1 : 0;  // the transposed copy's byte per element
  const bool amax_pass = recipe == Fp8Recipe::tensorwise;
  const int kernels = amax_pass ? 2 : 1;
  std::vector<OpCost> out;
  out.reserve(3 * ops.size());
  for (OpCost& op : ops) {
    if (!runs_in_fp8(op)) {
      out.push_back(std::move(op));
      continue;
    }
    const GemmShape& g = op.gemm;
    const double input = static_cast<double>(g.batch * g.m) * static_cast<double>(g.k);
    const double output = static_cast<double>(g.batch * g.m) * static_cast<double>(g.n);
    const double amax_in = amax_pass ? e * input : 0, amax_out = amax_pass ? e * output : 0;
    const double cast_in = (after_fused_norm(op.name) ? 2 * t : e + 1 + t) * input + amax_in;
    if (cast_in > 0) out.push_back(cast_op(op.name + "_fp8_cast", cast_in, 0, kernels, op.recompute));
    const std::string grad_cast = op.name + "_grad_fp8_cast";
    // The GEMMs read FP8 operands (1 byte each) and write 16-bit results.
    const double weights = static_cast<double>(g.batch * g.k) * static_cast<double>(g.n);
    op.fwd_bytes -= (e - 1) * (input + weights);
    op.bwd_input_bytes -= (e - 1) * (output + weights);
    op.bwd_weight_bytes -= (e - 1) * (input + output);
    op.fp8 = true;
    op.activation_bytes = to_bytes(static_cast<double>(op.activation_bytes) / e);
    out.push_back(std::move(op));
    out.push_back(cast_op(grad_cast, 0, (e + 1 + t) * output + amax_out, kernels, false));
  }
  ops = std::move(out);
}

}  // namespace detail
}  // namespace stepsim::models
