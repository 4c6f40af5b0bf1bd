#include "sim/plan/framework_defaults.hpp"

namespace stepsim::plan {

void apply_framework_defaults(Strategy& s) {
  switch (s.framework) {
    case Framework::generic:
      return;
    case Framework::deepspeed:
      s.dp_overlap = s.zero_stage == 3;
      s.dp_bucket_bytes = 2 * std::int64_t{500'000'000};
      s.grad_accumulation = GradAccumulation::autograd;
      return;
    case Framework::megatron_core:
      s.distributed_optimizer = true;
      s.dp_overlap = true;
      s.dp_bucket_from_dp = true;
      s.overlap_param_gather = true;
      s.tp_comm_overlap = true;  // where sequence parallelism is on: check_strategy
      return;
    case Framework::fsdp:
      s.zero_stage = 3;  // FULL_SHARD; the reader refuses another stage written with it
      s.grad_accumulation = GradAccumulation::autograd;
      return;
  }
}

}  // namespace stepsim::plan
