// Megatron-Core's optimizer dtype flags in a Megatron-LM arguments file (megatron_args.hpp reads
// the rest of the file).
#pragma once

#include "sim/plan/megatron_arg_table.hpp"
#include "sim/plan/strategy.hpp"

namespace stepsim::plan {

/// --use-precision-aware-optimizer with --main-params-dtype, --exp-avg-dtype, --exp-avg-sq-dtype
/// (Strategy::optimizer_states) and --main-grads-dtype (grad_reduce_in_bf16), applied to `s`,
/// whose distributed_optimizer is already read. Errors and notes at the flags.
void read_megatron_optimizer_dtypes(MegatronArgTable& args, Strategy& s);

}  // namespace stepsim::plan
