#include "sim/sweep/sweep_space.hpp"

#include "sim/plan/framework_defaults.hpp"

#include <algorithm>
#include <utility>

namespace stepsim::sweep {
namespace {

using plan::Recompute;
using plan::ScheduleKind;
using plan::Strategy;

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

template <typename T>
std::vector<T> or_default(const std::vector<T>& listed, std::vector<T> fallback) {
  return listed.empty() ? std::move(fallback) : listed;
}

// One schedule choice: the kind and its chunks per stage.
struct ScheduleChoice {
  ScheduleKind kind;
  int v;
};

std::vector<ScheduleChoice> schedule_choices(const plan::Scenario& sc, const SweepSpace& space, int pp) {
  if (pp == 1) return {{ScheduleKind::one_f_one_b, 1}};
  const auto kinds = or_default(space.schedule, {ScheduleKind::gpipe, ScheduleKind::one_f_one_b,
                                                 ScheduleKind::interleaved, ScheduleKind::zb_h1});
  std::vector<ScheduleChoice> out;
  for (ScheduleKind kind : kinds) {
    if (kind != ScheduleKind::interleaved) {
      out.push_back({kind, 1});
      continue;
    }
    std::vector<int> chunks = space.v;
    if (chunks.empty())
      for (int v = 2; v <= kMaxChunks; ++v)
        if (sc.model.layers % (pp * v) == 0) chunks.push_back(v);
    for (int v : chunks) out.push_back({kind, v});
  }
  return out;
}

std::vector<int> zero_stages(const SweepSpace& space, plan::Framework framework, int pp, int dp) {
  std::vector<int> out;
  for (int z : or_default(space.zero_stage, {0, 1, 2, 3})) {
    // Nothing to shard over one rank, unless the stage carries ZeRO-Offload (tried where listed).
    const bool offload = std::find(space.offload_optimizer.begin(), space.offload_optimizer.end(), true) !=
                         space.offload_optimizer.end();
    if (z > 0 && dp == 1 && !offload) continue;
    // ZeRO-2/3 beside PP only as FSDP runs it (plan::check_pipeline says why).
    if (z >= 2 && pp > 1 && framework != plan::Framework::fsdp) continue;
    if (framework == plan::Framework::megatron_core && z > 1) continue;  // its distributed optimizer is ZeRO-1
    if (framework == plan::Framework::fsdp && z < 2) continue;           // SHARD_GRAD_OP, FULL_SHARD
    out.push_back(z);
  }
  return out;
}

// A strategy of `framework` at ZeRO stage z, with the framework's defaults (framework_defaults.hpp).
Strategy with_framework(Strategy s, plan::Framework framework, int z) {
  s.framework = framework;
  s.zero_stage = z;
  plan::apply_framework_defaults(s);
  if (framework == plan::Framework::fsdp) s.zero_stage = z;  // SHARD_GRAD_OP or FULL_SHARD, not the default
  if (framework == plan::Framework::megatron_core) {
    s.distributed_optimizer = z == 1;
    s.zero_stage = 0;
  }
  return s;
}

std::vector<int> micro_batches(const plan::Scenario& sc, const SweepSpace& space, int dp) {
  if (!space.micro_batch.empty()) return space.micro_batch;
  std::vector<int> out;
  for (int mb = 1; mb <= space.max_micro_batch && sc.training.global_batch % (static_cast<std::int64_t>(mb) * dp) == 0;
       mb *= 2)
    out.push_back(mb);
  return out;
}

// How a MoE layer's experts are placed: ep ranks of DP splitting them, each expert split over TP
// (etp 0, the default), or, under TP, whole experts with the EP group folded over TP × DP (etp 1);
// under Megatron-Core, where an EP group spans servers, also with DeepEP's dispatch.
struct ExpertChoice {
  int ep = 1, etp = 0;
  bool deepep = false;
};

// GPUs an EP group covers: ep consecutive ranks when folded over TP × DP, else ep DP ranks, each
// a TP group of tp consecutive GPUs (rank order tp-dp-pp).
int ep_group_gpus(const ExpertChoice& c, int tp) { return c.etp == 1 ? c.ep : c.ep * tp; }

std::vector<ExpertChoice> with_deepep(std::vector<ExpertChoice> out, plan::Framework framework, int tp, int per_server) {
  if (framework != plan::Framework::megatron_core) return out;
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i)
    if (out[i].ep > 1 && ep_group_gpus(out[i], tp) > per_server) {
      ExpertChoice c = out[i];
      c.deepep = true;
      out.push_back(c);
    }
  return out;
}

std::vector<ExpertChoice> expert_choices(const plan::Scenario& sc, const SweepSpace& space, int tp, int dp, int z) {
  std::vector<ExpertChoice> out;
  if (!space.ep.empty()) {
    for (int ep : space.ep) out.push_back({ep, 0});
  } else {
    out.push_back({1, 0});
    if (sc.model.moe.enabled() && z < 2)
      for (int ep = 2; ep <= dp; ++ep)
        if (dp % ep == 0 && sc.model.moe.experts % ep == 0) out.push_back({ep, 0});
  }
  if (!sc.model.moe.enabled() || z >= 2 || tp == 1) return out;
  for (int ep = 2; ep <= tp * dp; ++ep)
    if ((tp * dp) % ep == 0 && sc.model.moe.experts % ep == 0 &&
        (space.ep.empty() || std::find(space.ep.begin(), space.ep.end(), ep) != space.ep.end()))
      out.push_back({ep, 1});
  return out;
}

std::vector<bool> sequence_parallel_choices(const SweepSpace& space, int tp) {
  std::vector<bool> out;
  for (bool sp : or_default(space.sequence_parallel, {false, true}))
    if (!sp || tp > 1) out.push_back(sp);
  return out;
}

class Enumerator {
 public:
  Enumerator(const plan::Scenario& sc, const SweepSpace& space) : sc_(sc), space_(space) {}

  std::vector<Candidate> run() {
    const int gpus = sc_.cluster.gpu_count();
    const int per_server = sc_.cluster.gpus_per_server > 0 ? sc_.cluster.gpus_per_server : gpus;
    const int tp_limit = space_.allow_tp_across_servers ? gpus : std::min(per_server, gpus);
    for (plan::Framework framework : or_default(space_.framework, {plan::Framework::generic}))
      for (int tp : or_default(space_.tp, divisors(tp_limit)))
        for (int pp : or_default(space_.pp, divisors(gpus / tp))) layout(framework, tp, pp, gpus);
    return std::move(out_);
  }

 private:
  void layout(plan::Framework framework, int tp, int pp, int gpus) {
    for (int cp : or_default(space_.cp, {1})) layout(framework, tp, pp, cp, gpus);
  }

  void layout(plan::Framework framework, int tp, int pp, int cp, int gpus) {
    Strategy base;
    base.allow_tp_across_servers = space_.allow_tp_across_servers;
    base.tp = tp;
    base.pp = pp;
    base.cp = cp;
    if (tp < 1 || pp < 1 || cp < 1 || gpus % (tp * pp * cp) != 0)
      return add(with_framework(base, framework, 0));  // one invalid entry per bad layout
    const int dp = gpus / (tp * pp * cp);
    base.dp = dp;
    const int per_server = sc_.cluster.gpus_per_server > 0 ? sc_.cluster.gpus_per_server : gpus;
    for (int z : zero_stages(space_, framework, pp, dp))
      for (bool offload : or_default(space_.offload_optimizer, {false}))
      for (ExpertChoice experts : with_deepep(expert_choices(sc_, space_, tp, dp, z), framework, tp, per_server))
      for (int mb : micro_batches(sc_, space_, dp))
        for (const ScheduleChoice& sched : schedule_choices(sc_, space_, pp))
          for (Recompute rc : or_default(space_.recompute, {Recompute::none, Recompute::selective, Recompute::full}))
            for (bool sp : sequence_parallel_choices(space_, tp)) {
              if (offload && (framework != plan::Framework::deepspeed || z == 0)) continue;
              if (!offload && z > 0 && dp == 1) continue;
              Strategy s = with_framework(base, framework, z);
              s.offload_optimizer = offload;
              s.ep = experts.ep;
              s.etp = experts.etp;
              s.moe_deepep = experts.deepep;
              s.micro_batch = mb;
              s.schedule = sched.kind;
              s.v = sched.v;
              s.recompute = rc;
              s.sequence_parallel = sp;
              add(s);
            }
  }

  void add(Strategy s) {
    Candidate c;
    c.index = out_.size();
    s.name = plan_name(s);
    try {
      c.strategy = plan::check_strategy(sc_, s);
    } catch (const config::ConfigError& e) {
      c.strategy = s;
      c.valid = false;
      c.invalid_reason = e.key_path().empty() ? e.message() : e.key_path() + ": " + e.message();
    }
    out_.push_back(std::move(c));
  }

  const plan::Scenario& sc_;
  const SweepSpace& space_;
  std::vector<Candidate> out_;
};

}  // namespace

std::string plan_name(const Strategy& s) {
  const int dp = s.dp;
  std::string name = s.framework == plan::Framework::generic ? "" : std::string(plan::to_string(s.framework)) + "-";
  name += "tp" + std::to_string(s.tp) + "-pp" + std::to_string(s.pp);
  if (dp > 0) name += "-dp" + std::to_string(dp);
  if (s.ep > 1) name += "-ep" + std::to_string(s.ep) + (s.folds_experts_over_tp() ? "-etp1" : "") + (s.moe_deepep ? "-deepep" : "");
  if (s.cp > 1) name += "-cp" + std::to_string(s.cp);
  name += "-z" + std::to_string(s.effective_zero_stage()) + (s.offload_optimizer ? "-offload" : "") + "-mb" +
          std::to_string(s.micro_batch);
  if (s.pp > 1) name += std::string("-") + plan::to_string(s.schedule);
  if (s.schedule == ScheduleKind::interleaved) name += "-v" + std::to_string(s.v);
  if (s.recompute != Recompute::none) name += std::string("-") + models::to_string(s.recompute);
  if (s.sequence_parallel) name += "-sp";
  return name;
}

std::vector<Candidate> enumerate_plans(const plan::Scenario& scenario, const SweepSpace& space) {
  return Enumerator(scenario, space).run();
}

}  // namespace stepsim::sweep
