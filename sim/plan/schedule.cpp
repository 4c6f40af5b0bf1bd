#include "sim/plan/schedule.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

namespace stepsim::plan {
namespace {

std::vector<Pass> gpipe_order(int m) {
  std::vector<Pass> out;
  for (int j = 0; j < m; ++j) out.push_back({PassKind::forward, j, 0});
  for (int j = 0; j < m; ++j) out.push_back({PassKind::backward, j, 0});
  return out;
}

std::vector<Pass> one_f_one_b_order(int p, int m, int s) {
  const int warmup = std::min(p - s - 1, m);
  std::vector<Pass> out;
  for (int j = 0; j < warmup; ++j) out.push_back({PassKind::forward, j, 0});
  for (int i = 0; i < m - warmup; ++i) {
    out.push_back({PassKind::forward, warmup + i, 0});
    out.push_back({PassKind::backward, i, 0});
  }
  for (int j = m - warmup; j < m; ++j) out.push_back({PassKind::backward, j, 0});
  return out;
}

std::vector<Pass> interleaved_order(int p, int m, int v, int s) {
  const int total = m * v;
  const int warmup = (m == p) ? total : std::min((p - s - 1) * 2 + (v - 1) * p, total);
  auto microbatch_of = [&](int k) { return (k / (p * v)) * p + k % p; };
  auto forward = [&](int k) { return Pass{PassKind::forward, microbatch_of(k), (k / p) % v}; };
  auto backward = [&](int k) { return Pass{PassKind::backward, microbatch_of(k), v - 1 - (k / p) % v}; };
  std::vector<Pass> out;
  for (int k = 0; k < warmup; ++k) out.push_back(forward(k));
  for (int i = 0; i < total - warmup; ++i) {
    out.push_back(forward(warmup + i));
    out.push_back(backward(i));
  }
  for (int k = total - warmup; k < total; ++k) out.push_back(backward(k));
  return out;
}

// ZB-H1: the 1F1B order with W(j) placed after the B that comes s backwards later. With s = 0 on
// the first stage nothing is deferred; the last stage keeps p−1 W passes for the cooldown, which
// fills the gaps 1F1B leaves while backward gradients travel back (derivation: schedule_test.cpp).
std::vector<Pass> zb_h1_order(int p, int m, int s) {
  std::vector<Pass> out;
  int backwards = 0, weights = 0;
  for (const Pass& pass : one_f_one_b_order(p, m, s)) {
    out.push_back(pass);
    if (pass.kind != PassKind::backward) continue;
    if (++backwards > s) out.push_back({PassKind::weight, weights++, 0});
  }
  while (weights < m) out.push_back({PassKind::weight, weights++, 0});
  return out;
}

}  // namespace

PipelineSchedule make_schedule(ScheduleKind kind, int stages, int microbatches, int chunks) {
  if (stages < 1 || microbatches < 1 || chunks < 1) throw std::invalid_argument("make_schedule: p, m, v must be >= 1");
  if (kind == ScheduleKind::interleaved && microbatches % stages != 0)
    throw std::invalid_argument("make_schedule: interleaved needs microbatches divisible by stages");
  PipelineSchedule out;
  out.kind = kind;
  out.stages = stages;
  out.microbatches = microbatches;
  out.chunks = kind == ScheduleKind::interleaved ? chunks : 1;
  out.splits_weight_gradient = kind == ScheduleKind::zb_h1;
  for (int s = 0; s < stages; ++s) {
    switch (kind) {
      case ScheduleKind::gpipe: out.passes.push_back(gpipe_order(microbatches)); break;
      case ScheduleKind::one_f_one_b: out.passes.push_back(one_f_one_b_order(stages, microbatches, s)); break;
      case ScheduleKind::interleaved:
        out.passes.push_back(interleaved_order(stages, microbatches, out.chunks, s));
        break;
      case ScheduleKind::zb_h1: out.passes.push_back(zb_h1_order(stages, microbatches, s)); break;
    }
  }
  return out;
}

std::vector<PassDependency> pass_dependencies(const PipelineSchedule& sch) {
  const int p = sch.stages, stages = p * sch.chunks, last = stages - 1, m = sch.microbatches;
  // Where each (kind, microbatch, virtual stage) sits, in one flat table: every pass is listed once.
  auto key = [&](PassKind k, int j, int u) {
    return (static_cast<std::size_t>(k) * static_cast<std::size_t>(m) + static_cast<std::size_t>(j)) *
               static_cast<std::size_t>(stages) + static_cast<std::size_t>(u);
  };
  constexpr std::size_t kKinds = 3;
  std::vector<std::optional<PassRef>> where(kKinds * static_cast<std::size_t>(m) * static_cast<std::size_t>(stages));
  for (int s = 0; s < p; ++s)
    for (std::size_t i = 0; i < sch.passes[s].size(); ++i) {
      const Pass& pass = sch.passes[s][i];
      where[key(pass.kind, pass.microbatch, pass.chunk * p + s)] = PassRef{s, i};
    }
  auto at = [&](PassKind k, int j, int u) {
    const auto& found = where[key(k, j, u)];
    if (!found) throw std::logic_error("pass_dependencies: a pass the pipeline needs is not scheduled");
    return *found;
  };
  std::vector<PassDependency> out;
  for (int s = 0; s < p; ++s)
    for (std::size_t i = 0; i < sch.passes[s].size(); ++i) {
      const Pass& pass = sch.passes[s][i];
      const PassRef self{s, i};
      const int u = pass.chunk * p + s, j = pass.microbatch;
      auto needs_me = [&](PassRef to) { out.push_back({self, to, to.stage != s}); };
      if (pass.kind == PassKind::forward) {
        if (u < last) needs_me(at(PassKind::forward, j, u + 1));
        needs_me(at(PassKind::backward, j, u));
      }
      if (pass.kind == PassKind::backward) {
        if (u > 0) needs_me(at(PassKind::backward, j, u - 1));
        if (sch.splits_weight_gradient) needs_me(at(PassKind::weight, j, u));
      }
    }
  return out;
}

double textbook_idle(ScheduleKind kind, int p, int v, double t_f, double t_b, double t_w) {
  if (kind == ScheduleKind::zb_h1) return (p - 1) * (t_f + t_b - t_w);
  const double per_microbatch = t_f + t_b + t_w;
  return kind == ScheduleKind::interleaved ? (p - 1) * per_microbatch / v : (p - 1) * per_microbatch;
}

double textbook_bubble(ScheduleKind kind, int p, int m, int v, double t_f, double t_b, double t_w) {
  const double idle = textbook_idle(kind, p, v, t_f, t_b, t_w);
  return idle / (m * (t_f + t_b + t_w) + idle);
}

// List scheduling of the pass orders under pass_dependencies().
std::int64_t ideal_makespan(const PipelineSchedule& sch, std::int64_t t_f, std::int64_t t_b, std::int64_t t_w) {
  const int p = sch.stages;
  std::map<PassRef, std::vector<PassRef>> needs;
  for (const auto& d : pass_dependencies(sch)) needs[d.to].push_back(d.from);
  std::map<PassRef, std::int64_t> finish;
  std::vector<std::size_t> next(p, 0);
  std::vector<std::int64_t> free_at(p, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < p; ++s) {
      while (next[s] < sch.passes[s].size()) {
        const PassRef self{s, next[s]};
        std::int64_t start = free_at[s];
        bool ready = true;
        for (const PassRef& d : needs[self]) {
          const auto it = finish.find(d);
          if (it == finish.end()) {
            ready = false;
            break;
          }
          start = std::max(start, it->second);
        }
        if (!ready) break;
        const PassKind kind = sch.passes[s][next[s]].kind;
        free_at[s] = start + (kind == PassKind::forward ? t_f : kind == PassKind::backward ? t_b : t_w);
        finish[self] = free_at[s];
        ++next[s];
        progress = true;
      }
    }
  }
  for (int s = 0; s < p; ++s)
    if (next[s] != sch.passes[s].size()) throw std::logic_error("ideal_makespan: schedule deadlocks");
  return *std::max_element(free_at.begin(), free_at.end());
}

std::optional<ScheduleKind> schedule_named(std::string_view name) {
  for (ScheduleKind k : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved, ScheduleKind::zb_h1})
    if (name == to_string(k)) return k;
  return std::nullopt;
}

std::optional<Recompute> recompute_named(std::string_view name) {
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full})
    if (name == models::to_string(r)) return r;
  return std::nullopt;
}

namespace {
const std::vector<std::string> kRefusedModules{"mlp", "moe", "shared_experts"};
}  // namespace

const std::vector<std::string>& megatron_recompute_modules() {
  static const std::vector<std::string> names = [] {
    auto all = models::recompute_module_names();
    all.insert(all.end(), kRefusedModules.begin(), kRefusedModules.end());
    return all;
  }();
  return names;
}

std::string megatron_recompute_module_list() {
  std::string out;
  for (const auto& name : megatron_recompute_modules()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string recompute_module_refused(std::string_view name) {
  if (std::find(kRefusedModules.begin(), kRefusedModules.end(), name) == kRefusedModules.end()) return "";
  return "recomputing " + std::string(name) + " re-runs the communication inside it (" +
         (name == "moe" ? "the token dispatch" : "its tensor-parallel gathers") + "), which is not modelled";
}

std::string recompute_modules_not_costed(const Strategy& s) {
  if (!s.recompute_modules.mla_up_proj || s.tp == 1 || !s.sequence_parallel) return "";
  return "mla_up_proj re-runs the up projections' tensor-parallel gather of the latents inside its checkpoint; "
         "that gather is costed once";
}

std::optional<Framework> framework_named(std::string_view name) {
  for (Framework f : {Framework::generic, Framework::deepspeed, Framework::megatron_core, Framework::fsdp})
    if (name == to_string(f)) return f;
  return std::nullopt;
}

const char* to_string(Framework f) {
  switch (f) {
    case Framework::generic: return "generic";
    case Framework::deepspeed: return "deepspeed";
    case Framework::megatron_core: return "megatron-core";
    case Framework::fsdp: return "fsdp";
  }
  return "?";
}

std::optional<FsdpPrefetch> fsdp_prefetch_named(std::string_view name) {
  for (FsdpPrefetch p : {FsdpPrefetch::backward_pre, FsdpPrefetch::backward_post, FsdpPrefetch::none})
    if (name == to_string(p)) return p;
  return std::nullopt;
}

const char* to_string(FsdpPrefetch p) {
  switch (p) {
    case FsdpPrefetch::backward_pre: return "backward_pre";
    case FsdpPrefetch::backward_post: return "backward_post";
    case FsdpPrefetch::none: return "none";
  }
  return "?";
}

std::optional<GradAccumulation> grad_accumulation_named(std::string_view name) {
  for (GradAccumulation a : {GradAccumulation::fused, GradAccumulation::main_grad, GradAccumulation::autograd})
    if (name == to_string(a)) return a;
  return std::nullopt;
}

const char* to_string(GradAccumulation a) {
  switch (a) {
    case GradAccumulation::fused: return "fused";
    case GradAccumulation::main_grad: return "main_grad";
    case GradAccumulation::autograd: return "autograd";
  }
  return "?";
}

const char* to_string(ScheduleKind s) {
  switch (s) {
    case ScheduleKind::gpipe: return "gpipe";
    case ScheduleKind::one_f_one_b: return "1f1b";
    case ScheduleKind::interleaved: return "interleaved";
    case ScheduleKind::zb_h1: return "zb-h1";
  }
  return "?";
}

std::size_t last_pass_of_chunk(const PipelineSchedule& schedule, int stage, int chunk) {
  const auto& list = schedule.passes[static_cast<std::size_t>(stage)];
  const PassKind k = schedule.splits_weight_gradient ? PassKind::weight : PassKind::backward;
  std::size_t last = 0;
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].kind == k && list[i].chunk == chunk) last = i;
  return last;
}

std::vector<std::array<std::size_t, 2>> first_passes_of_chunks(const PipelineSchedule& schedule, int stage) {
  const auto& list = schedule.passes[static_cast<std::size_t>(stage)];
  std::vector<std::array<std::size_t, 2>> out(static_cast<std::size_t>(schedule.chunks), {list.size(), list.size()});
  for (std::size_t i = list.size(); i-- > 0;)
    if (list[i].kind != PassKind::weight) out[static_cast<std::size_t>(list[i].chunk)][list[i].kind == PassKind::forward ? 0 : 1] = i;
  return out;
}

std::size_t last_backward_index(const PipelineSchedule& schedule, int stage) {
  const auto& list = schedule.passes[static_cast<std::size_t>(stage)];
  std::size_t last = 0;
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].kind != PassKind::forward) last = i;
  return last;
}

}  // namespace stepsim::plan
