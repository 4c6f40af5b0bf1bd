// Shared by the models tests: an op of a layer's list by its name.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "models/layer_ops.hpp"

namespace stepsim::models::testing {

inline const OpCost& op_named(const std::vector<OpCost>& ops, const std::string& name) {
  for (const auto& op : ops)
    if (op.name == name) return op;
  FAIL("no op " << name);
  return ops.front();
}

}  // namespace stepsim::models::testing
