#include "models/memory.hpp"

#include <stdexcept>

namespace stepsim::models {
namespace {

std::int64_t shard(std::int64_t bytes, int dp) { return (bytes + dp - 1) / dp; }

}  // namespace

ModelStateBytes model_state_bytes(std::int64_t n_params, int zero_stage, int dp, GradPrecision grads,
                                  OptimizerStates states) {
  if (zero_stage < 0 || zero_stage > 3 || dp < 1)
    throw std::invalid_argument("model_state_bytes: zero_stage must be 0..3 and dp >= 1");
  ModelStateBytes m;
  m.params = 2 * n_params;
  switch (grads) {
    case GradPrecision::bf16: m.grads = 2 * n_params; break;
    case GradPrecision::fp32: m.grads = 4 * n_params; break;
    case GradPrecision::bf16_and_fp32: m.grads = 6 * n_params; break;
  }
  m.optimizer = states.total() * n_params;  // master weights, Adam m and v
  if (zero_stage >= 1) m.optimizer = shard(m.optimizer, dp);
  if (zero_stage >= 2) m.grads = shard(m.grads, dp);
  if (zero_stage >= 3) m.params = shard(m.params, dp);
  return m;
}

double korthikanti_activation_bytes(double s, double b, double h, double a, double t,
                                    bool sequence_parallel, Recompute recompute) {
  const double sbh = s * b * h;
  switch (recompute) {
    case Recompute::full:
      return 2 * sbh;  // Korthikanti §4.4: only the layer input
    case Recompute::selective:
      return sequence_parallel ? 34 * sbh / t : sbh * (10 + 24 / t);  // §5: drops 5as/h
    case Recompute::none:
      if (sequence_parallel) return sbh * (34 / t + 5 * a * s / (h * t));  // §4.2.2
      return sbh * (10 + 24 / t + 5 * a * s / (h * t));                    // §4.2.1
  }
  return 0;
}

}  // namespace stepsim::models
