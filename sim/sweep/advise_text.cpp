// advise_text (advise.hpp): the answer in plain words, every sentence built from measured numbers.
#include <algorithm>
#include <cmath>

#include "sim/report/comparison.hpp"
#include "sim/report/format.hpp"
#include "sim/sweep/advise.hpp"
#include "sim/sweep/sweep_table.hpp"

namespace stepsim::sweep {
namespace {

using plan::StepResult;
using report::percent;
using report::with_thousands;

constexpr double kNoticeable = 0.01;  // shares of a step below 1 % are not worth a sentence

double gib(std::int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

// "12.3 % faster" / "4.0 % slower": a against b.
std::string faster(double a, double b) {
  if (b <= 0) return "faster";
  const double ratio = a / b - 1;
  return percent(std::fabs(ratio)) + (ratio >= 0 ? " faster" : " slower");
}

std::string headline(const StepResult& r) {
  return with_thousands(r.tokens_per_s) + " tokens/s (step " + report::duration(r.step_time_s) + ", " +
         report::fixed(r.tflops_per_gpu, 1) + " TFLOP/s per GPU, MFU " + percent(r.mfu) + ", peak memory " +
         report::fixed(gib(r.peak_memory_bytes), 1) + " of " + report::gibibytes(static_cast<double>(r.memory_capacity_bytes)) + ")";
}

std::string versus(const char* family, const StepResult& winner, const StepResult* other) {
  std::string s = "  vs the best " + std::string(family) + ": ";
  if (!other) return s + "none fits in memory.\n";
  if (other->name == winner.name) return s + "it is that plan.\n";
  return s + other->name + ", " + with_thousands(other->tokens_per_s) + " tokens/s; the winner is " +
         faster(winner.tokens_per_s, other->tokens_per_s) + ".\n";
}

// "computes 81.0 % of its step; loses 9.1 % to pipeline bubbles and 4.2 % to …"
std::string where_time_goes(const StepResult& r) {
  double lost = 0;
  std::string text;
  std::size_t n = 0;
  for (const auto& loss : report::losses_of(r)) {
    lost += loss.fraction;
    if (loss.fraction < kNoticeable || n == 3) continue;
    text += (n == 0 ? "; loses " : ", ") + percent(loss.fraction) + " to " + loss.what;
    ++n;
  }
  if (n == 0) text = "; loses under 1 % to bubbles, exposed communication and stalls";
  const auto& m = r.memory_at_peak;
  const std::int64_t states = m.parameters + m.fp8_weights + m.gradients + m.optimizer_states;
  return "computes " + percent(std::max(0.0, 1 - lost)) + " of its step" + text + ". Memory at peak: " +
         report::fixed(gib(states), 1) + " GiB model states, " + report::fixed(gib(m.activations), 1) +
         " GiB activations, " + report::fixed(gib(m.gathered_parameters + m.buffers), 1) + " GiB buffers";
}

// The same plan with twice the micro-batch, if the sweep simulated it.
const StepResult* bigger_micro_batch(const SweepOutcome& o, const StepResult& r) {
  for (const PlanResult& p : o.results) {
    const StepResult& x = p.result;
    if (x.micro_batch == 2 * r.micro_batch && x.tp == r.tp && x.pp == r.pp && x.dp == r.dp &&
        x.zero_stage == r.zero_stage && x.schedule == r.schedule && x.v == r.v && x.recompute == r.recompute &&
        x.sequence_parallel == r.sequence_parallel)
      return &x;
  }
  return nullptr;
}

std::string why(const char* role, const StepResult* r, const SweepOutcome& o) {
  if (!r) return "";
  std::string s = "  " + r->name + " (" + role + ") " + where_time_goes(*r);
  if (const StepResult* big = bigger_micro_batch(o, *r); big && !big->fits)
    s += "; with micro-batch " + std::to_string(big->micro_batch) + " it would need " +
         report::fixed(gib(big->peak_memory_bytes), 1) + " GiB and not fit";
  return s + ".\n";
}

// What removing the plan's largest loss would do to the ranking.
std::string largest_loss(const StepResult& r, const StepResult& winner, const std::string& link) {
  const auto losses = report::losses_of(r);
  if (losses.empty() || losses.front().fraction < kNoticeable) return "";
  const auto& loss = losses.front();
  const double without = r.tokens_per_s / std::max(1e-9, 1 - loss.fraction);
  const bool tp = loss.what.find("TP") != std::string::npos;
  std::string s = "  - " + r.name + " loses " + percent(loss.fraction) + " of its step to " + loss.what;
  if (tp) s += " (its TP collectives run over " + link + ")";
  s += "; without that it would reach " + with_thousands(without) + " tokens/s";
  if (&r == &winner) s += " and stay first";
  else if (without > winner.tokens_per_s) s += ", " + faster(without, winner.tokens_per_s) + " than the winner: it would win";
  else s += ", still " + faster(without, winner.tokens_per_s) + " than the winner";
  if (tp && link.find("NVLink") == std::string::npos) s += ". On GPUs joined by NVLink most of it would go";
  return s + ".\n";
}

std::string describe(const char* label, const std::optional<StepResult>& r) {
  if (!r) return std::string(label) + ": no valid variant";
  return std::string(label) + " " + r->name + ": " +
         (r->fits ? with_thousands(r->tokens_per_s) + " tokens/s" : "does not fit (" + report::fixed(gib(r->peak_memory_bytes), 1) + " GiB)");
}

bool same_plan(const std::optional<StepResult>& a, const std::optional<StepResult>& b) {
  return a && b && a->name == b->name;
}

std::string what_if_text(const WhatIf& w) {
  std::vector<std::pair<const char*, const std::optional<StepResult>*>> picks{{"winner", &w.best}};
  if (!same_plan(w.best, w.best_zero3)) picks.push_back({"DP/ZeRO", &w.best_zero3});
  if (!same_plan(w.best, w.best_3d)) picks.push_back({"3D", &w.best_3d});
  std::string s = "  - " + w.change + ", the same plans re-simulated: ";
  const StepResult* top = nullptr;
  const char* top_label = "";
  for (std::size_t i = 0; i < picks.size(); ++i) {
    s += (i ? "; " : "") + describe(picks[i].first, *picks[i].second);
    const auto& r = *picks[i].second;
    if (r && r->fits && (!top || r->tokens_per_s > top->tokens_per_s)) {
      top = &*r;
      top_label = picks[i].first;
    }
  }
  if (!top) return s + ". None of them would fit.\n";
  return s + ". " + (std::string(top_label) == "winner" ? "The winner would still come first"
                                                        : "The " + std::string(top_label) + " plan would win") +
         (picks.size() > 1 ? " of these." : ".") + "\n";
}

// Per TP degree, the best plan against the best without TP, then the verdict in one sentence.
std::string tp_text(const SweepOutcome& o, const Advice& a, const std::string& link) {
  if (a.best_by_tp.size() < 2 && (a.best_by_tp.empty() || a.best_by_tp.front().first == 1)) return "";
  const StepResult* no_tp = a.best_by_tp.front().first == 1 ? &o.results[a.best_by_tp.front().second].result : nullptr;
  std::string s = "\nTensor parallelism on this box (TP collectives over " + link + "):\n";
  const StepResult* best_tp = nullptr;
  for (const auto& [tp, i] : a.best_by_tp) {
    const StepResult& r = o.results[i].result;
    s += "  tp " + std::to_string(tp) + ": " + r.name + ", " + with_thousands(r.tokens_per_s) + " tokens/s";
    if (tp > 1 && no_tp) s += ", " + faster(r.tokens_per_s, no_tp->tokens_per_s) + " than without TP";
    s += ".\n";
    if (tp > 1 && (!best_tp || r.tokens_per_s > best_tp->tokens_per_s)) best_tp = &r;
  }
  if (!no_tp) return s + "  Every plan that fits uses TP: none without it fits in memory.\n";
  if (best_tp->tokens_per_s > no_tp->tokens_per_s)
    return s + "  TP pays here: tp " + std::to_string(best_tp->tp) + " is " + faster(best_tp->tokens_per_s, no_tp->tokens_per_s) +
           " than the best plan without TP.\n";
  return s + "  TP does not pay here: the best plan without TP is " + faster(no_tp->tokens_per_s, best_tp->tokens_per_s) +
         " than the best with it (tp " + std::to_string(best_tp->tp) + ").\n";
}

}  // namespace

namespace {

// Where nothing fits on the GPUs alone: the fastest ZeRO-Offload plan that does, and its price.
std::string offload_text(const std::optional<OffloadAdvice>& offload) {
  const std::string none = "No plan fits in memory: more GPUs, a smaller micro-batch or full recompute would be needed";
  if (!offload) return none + ".\n";
  if (!offload->best) return none + ", and none fits with DeepSpeed's ZeRO-Offload either.\n";
  const StepResult& r = offload->outcome.results[*offload->best].result;
  return "No plan fits in GPU memory alone. With DeepSpeed's ZeRO-Offload (Adam's states and step in host memory), " +
         std::to_string(offload->outcome.fits()) + " of " + std::to_string(offload->outcome.tried) +
         " plans fit; the fastest is " + r.name + ": " + headline(r) + ". It needs " +
         report::gibibytes(static_cast<double>(r.host_memory_bytes)) + " of host memory per server and leaves the GPUs " +
         report::percent(r.step_time_s > 0 ? r.offload_s / r.step_time_s : 0) +
         " of its step waiting for the PCIe copies and the CPU's Adam (comm.cpu_adam_param is one published CPU "
         "rate: measure yours).\n";
}

}  // namespace

std::string advise_text(const plan::Scenario& sc, const SweepOutcome& o, const Advice& a,
                        const std::vector<WhatIf>& what_ifs, const std::optional<MeasuredComm>& measured,
                        const std::optional<OffloadAdvice>& offload) {
  const std::string link = describe_gpu_link(sc.cluster);
  std::string out;
  if (measured)
    out += "Collectives fitted to " + measured->file + " (" + measured->op + " over " + std::to_string(measured->ranks) +
           " GPUs): at " + report::gibibytes(static_cast<double>(measured->size_bytes), measured->size_bytes % (std::int64_t{1} << 30) == 0 ? 0 : 2) + " it measured " +
           report::fixed(measured->measured_busbw_gbps, 1) + " GB/s bus bandwidth, the preset gives " +
           report::fixed(measured->preset_busbw_gbps, 1) + " GB/s, the fit " + report::fixed(measured->fitted_busbw_gbps, 1) +
           " GB/s. Every plan below is simulated with the fitted collectives.\n";
  out += sc.model.name + ", seq " + std::to_string(sc.training.seq_len) + ", global batch " +
                    std::to_string(sc.training.global_batch) + " on " + sc.cluster.name + ": " +
                    std::to_string(sc.cluster.gpu_count()) + " x " + sc.cluster.gpu.name + ", GPUs joined by " + link +
                    ".\n" + format_counts(o) + "\n";
  if (!a.best) return out + offload_text(offload);
  auto at = [&o](std::optional<std::size_t> i) { return i ? &o.results[*i].result : nullptr; };
  const StepResult& best = *at(a.best);
  const char* family_3d = a.best_3d_uses_both ? "3D plan (tp > 1 and pp > 1)" : "plan with tp > 1 or pp > 1";
  out += "Use " + best.name + ": " + headline(best) + ".\n";
  out += versus("plain data-parallel / ZeRO plan (tp = pp = 1)", best, at(a.best_zero3));
  out += versus(family_3d, best, at(a.best_3d)) + "\nWhy:\n" + why("the winner", &best, o);
  if (at(a.best_zero3) && at(a.best_zero3) != &best) out += why("best DP/ZeRO", at(a.best_zero3), o);
  if (at(a.best_3d) && at(a.best_3d) != &best) out += why("best 3D", at(a.best_3d), o);
  out += "\nWhat would change the answer:\n";
  for (const StepResult* r : {at(a.best_zero3), at(a.best_3d)})
    if (r && r != &best) out += largest_loss(*r, best, link);
  out += largest_loss(best, best, link);
  for (const WhatIf& w : what_ifs) out += what_if_text(w);
  return out + tp_text(o, a, link);
}

}  // namespace stepsim::sweep
