// What one simulate() call may cost: the engine events of its step (config::kMaxEvents) and the
// memory the process holds while the plan is built and run (config::kMaxMemoryGib). Past either,
// the call stops with a ConfigError at the strategy — the value, the limit, the flag that moves
// it, and the fidelity that needs less — instead of running for hours or out of memory.
#pragma once

#include "sim/config/config_error.hpp"
#include "sim/config/resident_memory.hpp"
#include "sim/core/engine.hpp"
#include "sim/plan/plan_inputs.hpp"

namespace stepsim::plan {

/// The engine limits of every plan: the event limit, and a checkpoint that reads the process's
/// resident memory every EngineLimits::kCheckpointEvery tasks and events (config::check_memory;
/// the router checks as its route cache grows).
core::EngineLimits resource_limits();

/// The error at the strategy for a plan stopped by the memory limit while built or run.
config::LimitError memory_over_limit(const PlanInputs& in, const config::MemoryLimitExceeded& e);

/// The error for a step stopped by its event limit (the engine's SimulationError).
config::LimitError events_over_limit(const PlanInputs& in);

}  // namespace stepsim::plan
