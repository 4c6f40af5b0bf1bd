#include "sim/plan/resource_guard.hpp"

#include <string>

#include "sim/config/limits.hpp"
#include "sim/config/resident_memory.hpp"

namespace stepsim::plan {
namespace {

config::LimitError at_strategy(const PlanInputs& in, const std::string& message) {
  const auto& w = in.st.where;
  const bool placed = !w.path.empty();
  const std::string hint = in.symmetric || in.grid.dp() == 1 ? ""
                                        : "; this plan runs in full fidelity, and `--fidelity symmetric` "
                                          "simulates one data-parallel replica";
  return config::LimitError({in.sc.file, placed ? w.self.line : 0, placed ? w.self.column : 0},
                             placed ? w.path : in.st.name, "plan '" + in.st.name + "': " + message + hint);
}

}  // namespace

core::EngineLimits resource_limits() {
  core::EngineLimits limits;
  limits.max_events = static_cast<std::uint64_t>(config::limit_value(config::kMaxEvents));
  limits.checkpoint = [](std::uint64_t tasks, std::uint64_t events) {
    config::check_memory(events == 0 ? " after building " + config::with_commas(static_cast<std::int64_t>(tasks)) + " tasks"
                                     : " after " + config::with_commas(static_cast<std::int64_t>(events)) + " events of its step");
  };
  return limits;
}

config::LimitError memory_over_limit(const PlanInputs& in, const config::MemoryLimitExceeded& e) {
  return at_strategy(in, e.message());
}

config::LimitError events_over_limit(const PlanInputs& in) {
  const std::int64_t limit = config::limit_value(config::kMaxEvents);
  return at_strategy(in, config::over_limit(config::kMaxEvents, limit + 1, " (the run stopped there)"));
}

}  // namespace stepsim::plan
