#include "sim/sweep/sweep_yaml.hpp"

#include <algorithm>
#include <functional>

#include "sim/config/yaml_field.hpp"

namespace stepsim::sweep {
namespace {

using config::Field;

// A list of values, or one value standing for a list of one.
template <typename T>
std::vector<T> read_list(const Field& f, const std::function<T(const Field&)>& read_one) {
  std::vector<T> out;
  if (!f.is_sequence()) return {read_one(f)};
  const auto items = f.items();
  if (items.empty()) f.fail("expected at least one value, found an empty list");
  for (const Field& item : items) out.push_back(read_one(item));
  return out;
}

std::function<int(const Field&)> int_from(std::int64_t low, std::int64_t high) {
  return [low, high](const Field& f) {
    const std::int64_t v = f.as_int();
    if (v < low || v > high)
      f.fail("expected an integer from " + std::to_string(low) + " to " + std::to_string(high) + ", found " +
             f.found());
    return static_cast<int>(v);
  };
}

}  // namespace

SweepSpace read_sweep_space(const Field& f) {
  SweepSpace s;
  if (f.is_null()) return s;
  f.check_keys({"framework", "tp", "pp", "ep", "cp", "zero_stage", "micro_batch", "max_micro_batch", "schedule", "v", "recompute",
                "sequence_parallel", "offload_optimizer", "allow_tp_across_servers"});
  constexpr std::int64_t kMax = 1 << 20;
  if (auto x = f.optional("framework"))
    s.framework = read_list<plan::Framework>(*x, [](const Field& item) {
      using plan::Framework;
      return *plan::framework_named(item.as_choice({plan::to_string(Framework::generic), plan::to_string(Framework::deepspeed),
                                                    plan::to_string(Framework::megatron_core), plan::to_string(Framework::fsdp)}));
    });
  if (auto x = f.optional("tp")) s.tp = read_list(*x, int_from(1, kMax));
  if (auto x = f.optional("pp")) s.pp = read_list(*x, int_from(1, kMax));
  if (auto x = f.optional("ep")) s.ep = read_list(*x, int_from(1, kMax));
  if (auto x = f.optional("cp")) s.cp = read_list(*x, int_from(1, kMax));
  if (auto x = f.optional("zero_stage")) s.zero_stage = read_list(*x, int_from(0, 3));
  if (auto x = f.optional("micro_batch")) s.micro_batch = read_list(*x, int_from(1, kMax));
  if (auto x = f.optional("max_micro_batch")) s.max_micro_batch = int_from(1, kMax)(*x);
  if (auto x = f.optional("v")) s.v = read_list(*x, int_from(1, 1024));
  if (auto x = f.optional("schedule")) s.schedule = read_list<plan::ScheduleKind>(*x, plan::read_schedule);
  if (auto x = f.optional("recompute")) s.recompute = read_list<plan::Recompute>(*x, plan::read_recompute);
  if (auto x = f.optional("sequence_parallel"))
    s.sequence_parallel = read_list<bool>(*x, [](const Field& item) { return item.as_bool(); });
  if (auto x = f.optional("offload_optimizer")) {
    s.offload_optimizer = read_list<bool>(*x, [](const Field& item) { return item.as_bool(); });
    const bool deepspeed = std::find(s.framework.begin(), s.framework.end(), plan::Framework::deepspeed) != s.framework.end();
    if (!deepspeed && std::find(s.offload_optimizer.begin(), s.offload_optimizer.end(), true) != s.offload_optimizer.end())
      x->fail("ZeRO-Offload is DeepSpeed's: expected framework to list deepspeed, found " +
              (f.has("framework") ? f.required("framework").found() : std::string("no framework (generic only)")));
  }
  if (auto x = f.optional("allow_tp_across_servers")) s.allow_tp_across_servers = x->as_bool();
  return s;
}

SweepSpace read_scenario_sweep(const config::YamlDocument& doc) {
  const Field root = doc.root();
  if (auto section = root.optional("sweep")) return read_sweep_space(*section);
  return {};
}

SweepSpace load_scenario_sweep(const std::string& scenario_path) {
  return read_scenario_sweep(config::YamlDocument::load_file(scenario_path));
}

}  // namespace stepsim::sweep
