#include "hardware/gpu_spec.hpp"

namespace stepsim::hw {

double PeakFlops::of(Dtype d) const {
  switch (d) {
    case Dtype::bf16: return bf16;
    case Dtype::fp16: return fp16;
    case Dtype::tf32: return tf32;
    case Dtype::fp32: return fp32;
    case Dtype::fp8: return fp8;
  }
  return 0.0;
}

}  // namespace stepsim::hw
