#include "sim/plan/step_result.hpp"

namespace stepsim::plan {

const char* to_string(TaskCategory c) {
  switch (c) {
    case TaskCategory::forward: return "forward";
    case TaskCategory::backward_input: return "backward_input";
    case TaskCategory::backward_weight: return "backward_weight";
    case TaskCategory::recompute: return "recompute";
    case TaskCategory::optimizer: return "optimizer";
    case TaskCategory::tp_comm: return "tp_comm";
    case TaskCategory::pp_comm: return "pp_comm";
    case TaskCategory::dp_comm: return "dp_comm";
    case TaskCategory::zero_comm: return "zero_comm";
    case TaskCategory::ep_comm: return "ep_comm";
    case TaskCategory::cp_comm: return "cp_comm";
    case TaskCategory::host: return "host";
    case TaskCategory::host_copies: return "host_copies";
    case TaskCategory::host_transfer: return "host_transfer";
    case TaskCategory::cpu_optimizer: return "cpu_optimizer";
    case TaskCategory::other: return "other";
  }
  return "other";
}

bool is_communication(TaskCategory c) {
  return c == TaskCategory::tp_comm || c == TaskCategory::pp_comm || c == TaskCategory::dp_comm ||
         c == TaskCategory::zero_comm || c == TaskCategory::ep_comm ||
         c == TaskCategory::cp_comm;
}

}  // namespace stepsim::plan
