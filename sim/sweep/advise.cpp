// choose_plans, simulate_what_if and the advice JSON (advise.hpp); the text is advise_text.cpp.
#include "sim/sweep/advise.hpp"

#include <algorithm>

#include "sim/report/json_writer.hpp"
#include "sim/report/result_json.hpp"
#include "sim/sweep/sweep_json.hpp"

namespace stepsim::sweep {
namespace {

// The first position of `order` whose plan satisfies `keep`.
template <typename Pred>
std::optional<std::size_t> first_of(const SweepOutcome& o, const std::vector<std::size_t>& order, Pred keep) {
  for (std::size_t i : order)
    if (keep(o.results[i].result)) return i;
  return std::nullopt;
}

// The strategy a result was simulated with, dp left to follow the GPU count.
plan::Strategy strategy_of(const plan::StepResult& r) {
  plan::Strategy s;
  s.tp = r.tp;
  s.pp = r.pp;
  s.ep = r.ep;  // check_strategy refuses it where the changed dp no longer divides
  s.etp = r.etp < r.tp ? r.etp : 0;
  s.cp = r.cp;
  s.zero_stage = r.zero_stage;
  s.micro_batch = r.micro_batch;
  s.schedule = plan::schedule_named(r.schedule).value_or(plan::ScheduleKind::one_f_one_b);
  s.v = r.v;
  s.recompute = plan::recompute_named(r.recompute).value_or(plan::Recompute::none);
  s.sequence_parallel = r.sequence_parallel;
  return s;
}

// The plan simulated on `changed`, or nullopt when check_strategy rejects it there.
std::optional<plan::StepResult> try_plan(const plan::Scenario& changed, plan::Strategy s, const SimulateFn& simulate) {
  try {
    s.dp = 0;
    plan::Strategy checked = plan::check_strategy(changed, s);
    checked.name = plan_name(checked);
    plan::StepResult r = simulate(changed, checked);
    r.name = checked.name;
    return r;
  } catch (const config::LimitError&) {
    throw;  // a plan too costly to simulate is not an invalid one: say so, do not drop it
  } catch (const config::ConfigError&) {
    return std::nullopt;
  }
}

// The picked plan on `changed`, its micro-batch halved until it is valid and fits; if it does not
// fit even with micro-batch 1, once more with full recompute. The last valid try when none fits.
std::optional<plan::StepResult> rerun(const plan::Scenario& changed, const SweepOutcome& o,
                                      std::optional<std::size_t> pick, const SimulateFn& simulate) {
  if (!pick) return std::nullopt;
  plan::Strategy s = strategy_of(o.results[*pick].result);
  std::optional<plan::StepResult> last;
  for (; s.micro_batch >= 1; s.micro_batch /= 2) {
    if (auto r = try_plan(changed, s, simulate)) {
      if (r->fits) return r;
      last = std::move(r);
    }
  }
  if (s.recompute == plan::Recompute::full) return last;
  s.micro_batch = 1;
  s.recompute = plan::Recompute::full;
  auto r = try_plan(changed, s, simulate);
  return r ? r : last;
}

void write_pick(report::JsonWriter& w, const char* key, const SweepOutcome& o, std::optional<std::size_t> pick) {
  w.key(key);
  if (!pick) {
    w.null();
    return;
  }
  w.begin_object();
  report::write_result_fields(w, o.results[*pick].result);
  w.end_object();
}

}  // namespace

Advice choose_plans(const SweepOutcome& outcome) {
  const auto order = ranking(outcome);
  Advice a;
  a.best = first_of(outcome, order, [](const plan::StepResult&) { return true; });
  a.best_zero3 = first_of(outcome, order, [](const plan::StepResult& r) { return r.tp == 1 && r.pp == 1 && r.ep == 1 && r.cp == 1; });
  a.best_3d = first_of(outcome, order, [](const plan::StepResult& r) { return r.tp > 1 && r.pp > 1; });
  a.best_3d_uses_both = a.best_3d.has_value();
  if (!a.best_3d) a.best_3d = first_of(outcome, order, [](const plan::StepResult& r) { return r.tp > 1 || r.pp > 1; });
  for (std::size_t i : order) {
    const int tp = outcome.results[i].result.tp;
    const bool seen = std::any_of(a.best_by_tp.begin(), a.best_by_tp.end(), [tp](const auto& e) { return e.first == tp; });
    if (!seen) a.best_by_tp.emplace_back(tp, i);
  }
  std::sort(a.best_by_tp.begin(), a.best_by_tp.end());
  return a;
}

WhatIf simulate_what_if(const std::string& change, const plan::Scenario& changed, const SweepOutcome& outcome,
                        const Advice& advice, const SimulateFn& simulate) {
  WhatIf w;
  w.change = change;
  w.best = rerun(changed, outcome, advice.best, simulate);
  w.best_zero3 = rerun(changed, outcome, advice.best_zero3, simulate);
  w.best_3d = rerun(changed, outcome, advice.best_3d, simulate);
  return w;
}

SweepSpace offload_space() {
  SweepSpace space;
  space.framework = {plan::Framework::deepspeed};
  space.zero_stage = {1, 2, 3};
  space.offload_optimizer = {true};
  space.schedule = {plan::ScheduleKind::one_f_one_b};  // DeepSpeed's pipeline engine runs 1F1B only
  return space;
}

void write_advice_json(std::ostream& out, const SweepOutcome& outcome, const Advice& advice,
                       const std::optional<MeasuredComm>& measured, const std::optional<OffloadAdvice>& offload) {
  report::JsonWriter w(out);
  w.begin_object();
  write_pick(w, "best", outcome, advice.best);
  w.line_break();
  write_pick(w, "best_zero3", outcome, advice.best_zero3);
  w.line_break();
  write_pick(w, "best_3d", outcome, advice.best_3d);
  w.line_break();
  if (offload) {
    write_pick(w, "best_offload", offload->outcome, offload->best);
    w.line_break();
  }
  const double no_tp = advice.best_by_tp.empty() || advice.best_by_tp.front().first != 1
                           ? 0
                           : outcome.results[advice.best_by_tp.front().second].result.tokens_per_s;
  w.key("best_by_tp").begin_array();
  for (const auto& [tp, i] : advice.best_by_tp) {
    const plan::StepResult& r = outcome.results[i].result;
    w.begin_object();
    w.key("tp").value(static_cast<std::int64_t>(tp));
    w.key("name").value(r.name);
    w.key("tokens_per_s").value(r.tokens_per_s);
    w.key("vs_no_tp");
    if (no_tp > 0) w.value(r.tokens_per_s / no_tp - 1);
    else w.null();
    w.end_object();
  }
  w.end_array();
  w.line_break();
  if (measured) {
    w.key("measured_comm").begin_object();
    w.key("file").value(measured->file);
    w.key("op").value(measured->op);
    w.key("ranks").value(static_cast<std::int64_t>(measured->ranks));
    w.key("size_bytes").value(measured->size_bytes);
    w.key("measured_busbw_gbps").value(measured->measured_busbw_gbps);
    w.key("preset_busbw_gbps").value(measured->preset_busbw_gbps);
    w.key("fitted_busbw_gbps").value(measured->fitted_busbw_gbps);
    w.end_object();
    w.line_break();
  }
  w.key("tried").value(static_cast<std::int64_t>(outcome.tried));
  w.key("fits").value(static_cast<std::int64_t>(outcome.fits()));
  w.end_object();
  out << "\n";
}

std::string describe_gpu_link(const hw::Cluster& c) {
  const hw::Link* best = nullptr;
  for (const hw::Link& l : c.links) {
    if (c.nodes[l.from].kind != hw::NodeKind::gpu || c.nodes[l.from].server != 0) continue;
    if (l.kind != hw::LinkKind::nvlink && l.kind != hw::LinkKind::pcie) continue;
    if (!best || (l.kind == hw::LinkKind::nvlink && best->kind != hw::LinkKind::nvlink) ||
        (l.kind == best->kind && l.bytes_per_s > best->bytes_per_s))
      best = &l;
  }
  if (!best) return "no GPU-to-GPU link";
  const std::string kind = best->kind == hw::LinkKind::nvlink ? "NVLink" : "PCIe";
  std::string text = (best->label.empty() ? kind : best->label) + " (" +
                     std::to_string(static_cast<long long>(best->bytes_per_s / 1e9 + 0.5)) + " GB/s per direction)";
  if (best->kind == hw::LinkKind::pcie && !c.gpu_p2p) text += ", no GPU peer-to-peer: traffic is staged in host memory";
  return text;
}

}  // namespace stepsim::sweep
