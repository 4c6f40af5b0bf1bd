// Reading a scenario's `sweep:` section into a SweepSpace (sweep_space.hpp). Each key narrows one
// field to a list of values (a single value is a list of one); unknown keys are errors with
// "did you mean". Only this file sees the YAML of the section.
//
//   sweep:
//     tp: [1, 2, 4]
//     pp: [1, 2]
//     zero_stage: [0, 3]
//     micro_batch: [1, 2, 4]          # or max_micro_batch: 8 (powers of two up to it)
//     schedule: [1f1b, interleaved]
//     v: [2]
//     recompute: [none, selective]
//     sequence_parallel: [true]
//     allow_tp_across_servers: true   # also TP groups spanning servers (default: within one)
#pragma once

#include <string>

#include "sim/config/yaml_fwd.hpp"
#include "sim/sweep/sweep_space.hpp"

namespace stepsim::sweep {

/// The `sweep:` mapping itself (`null` or `{}` = the default space).
SweepSpace read_sweep_space(const config::Field& section);
/// The `sweep:` section of a scenario document; the default space when it has none.
SweepSpace read_scenario_sweep(const config::YamlDocument& doc);
SweepSpace load_scenario_sweep(const std::string& scenario_path);

}  // namespace stepsim::sweep
