#include "sim/plan/megatron_optimizer_args.hpp"

#include <algorithm>
#include <initializer_list>
#include <string>

namespace stepsim::plan {

// Megatron-Core's precision-aware optimizer (megatron/core/optimizer/optimizer_config.py): the
// master parameters and Adam's moments in the dtypes named, which without
// --use-precision-aware-optimizer do nothing. --main-grads-dtype bf16 reduces the gradients in
// bf16 as --grad-reduce-in-bf16 does (megatron/training/arguments.py validate_args), with or
// without it; fp32 leaves --grad-reduce-in-bf16 in force.
void read_megatron_optimizer_dtypes(MegatronArgTable& args, Strategy& s) {
  const bool aware = args.has("use-precision-aware-optimizer");
  if (aware && !s.distributed_optimizer)
    args.fail(args.at("use-precision-aware-optimizer").pos, "use-precision-aware-optimizer",
              "Megatron-Core's precision-aware optimizer needs --use-distributed-optimizer");
  auto bytes = [&](const char* flag, std::initializer_list<const char*> allowed) {
    const MegatronArg& a = args.at(flag);
    const std::string d = args.text(a);
    if (std::find_if(allowed.begin(), allowed.end(), [&](const char* x) { return d == x; }) == allowed.end()) {
      std::string list;
      for (const char* x : allowed) list += (list.empty() ? "" : ", ") + std::string(x);
      args.fail(a.value->pos(), a.name, "expected one of " + list + ", found '" + d + "'");
    }
    return d == "fp32" ? 4 : d == "fp8" ? 1 : 2;
  };
  if (args.has("main-grads-dtype") && bytes("main-grads-dtype", {"fp32", "bf16"}) == 2) s.grad_reduce_in_bf16 = true;
  for (const char* flag : {"main-params-dtype", "exp-avg-dtype", "exp-avg-sq-dtype"}) {
    if (!args.has(flag)) continue;
    const int b = std::string(flag) == "main-params-dtype" ? bytes(flag, {"fp32", "fp16"})
                                                           : bytes(flag, {"fp32", "fp16", "bf16", "fp8"});
    if (!aware) {
      if (b != 4)
        args.note(args.at(flag), "has effect only with --use-precision-aware-optimizer; fp32 as Megatron-Core keeps it");
      continue;
    }
    if (std::string(flag) == "main-params-dtype") s.optimizer_states.master = b;
    if (std::string(flag) == "exp-avg-dtype") s.optimizer_states.exp_avg = b;
    if (std::string(flag) == "exp-avg-sq-dtype") s.optimizer_states.exp_avg_sq = b;
  }
}

}  // namespace stepsim::plan
