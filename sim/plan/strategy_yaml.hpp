// Reading one entry of a scenario's `strategies:` list, and the field readers the scenario's other
// sections share with it (scenario_yaml.cpp). Only sim/plan's YAML readers include this.
#pragma once

#include <cstdint>

#include "sim/config/yaml_field.hpp"
#include "sim/plan/strategy.hpp"

namespace stepsim::plan {

/// The `index`-th strategy (0-based; its default name is "strategy<index+1>").
Strategy read_strategy(const config::Field& f, int index);
Precision read_precision(const config::Field& f);
models::Fp8Recipe read_fp8_recipe(const config::Field& f);
/// An integer from low to high, else an error at the field.
int read_int(const config::Field& f, std::int64_t low, std::int64_t high);

}  // namespace stepsim::plan
