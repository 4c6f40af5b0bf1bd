// Measuring the simulated timeline into StepResult's headline numbers (definitions in
// simulate.hpp). Per rank: the compute stream's busy intervals, and for each communication class
// the intervals in which it moves data (group arrival to member end). Everything is O(n log n)
// in the number of tasks of a rank.
#include <algorithm>

#include "models/flops.hpp"
#include "models/compute_time.hpp"
#include "sim/plan/metrics.hpp"

namespace stepsim::plan {
namespace {

using Interval = std::pair<std::int64_t, std::int64_t>;

std::vector<Interval> merged(std::vector<Interval> v) {
  // One stream's tasks run in the order they were added, so most lists come sorted.
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
  std::size_t n = 0;  // v[0, n): merged so far, never past the one being read
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (n > 0 && iv.first <= v[n - 1].second) v[n - 1].second = std::max(v[n - 1].second, iv.second);
    else v[n++] = iv;
  }
  v.resize(n);
  return v;
}

std::int64_t length(const std::vector<Interval>& v) {
  std::int64_t n = 0;
  for (const auto& iv : v) n += iv.second - iv.first;
  return n;
}

// |a \ b| for merged interval lists.
std::int64_t length_minus(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::int64_t total = 0;
  std::size_t j = 0;
  for (const auto& [s, e] : a) {
    std::int64_t covered = 0;
    while (j < b.size() && b[j].second <= s) ++j;
    for (std::size_t k = j; k < b.size() && b[k].first < e; ++k)
      covered += std::min(e, b[k].second) - std::max(s, b[k].first);
    total += (e - s) - covered;
  }
  return total;
}

bool is_compute(TaskCategory c) {
  return c == TaskCategory::forward || c == TaskCategory::backward_input || c == TaskCategory::backward_weight ||
         c == TaskCategory::recompute || c == TaskCategory::optimizer;
}

}  // namespace

RankTimes measure_ranks(const Build& b) {
  const std::size_t n = b.global_of.size();
  std::vector<std::vector<Interval>> compute(n);
  std::vector<std::array<std::vector<Interval>, kCommClasses>> moving(n);
  std::vector<std::vector<Interval>> host(n), offload(n);
  RankTimes out;
  out.stall_ps.assign(n, 0);
  out.busy_ps.assign(n, 0);
  out.exposed_ps.assign(n, {});
  out.idle_ps.assign(n, 0);
  out.host_bound_ps.assign(n, 0);
  out.offload_ps.assign(n, 0);
  for (const TaskMeta& m : b.rec.meta()) {
    const core::TaskTimes times = b.rec.engine().times_of(m.id);
    const std::int64_t start = times.start.ps, end = times.finish.ps;
    if (!m.member) {
      if (is_compute(m.category)) compute[m.rank].emplace_back(start, end);
      if (m.category == TaskCategory::host || m.category == TaskCategory::host_copies) host[m.rank].emplace_back(start, end);
      if (m.category == TaskCategory::host_transfer || m.category == TaskCategory::cpu_optimizer)
        offload[m.rank].emplace_back(start, end);
      // A collective's own GPU work beside its members (TaskRecorder::comm_work) moves its data.
      if (is_communication(m.category)) moving[m.rank][static_cast<int>(class_of(m.category))].emplace_back(start, end);
      continue;
    }
    const std::int64_t wait = times.sync_wait.ps;
    const CommClass cls = class_of(m.category);
    moving[m.rank][static_cast<int>(cls)].emplace_back(start + wait, end);
    if (cls != CommClass::pp) out.stall_ps[m.rank] += wait;
  }
  const std::int64_t step = out.step_ps = b.engine_makespan_ps;
  for (std::size_t r = 0; r < n; ++r) {
    const auto busy = merged(std::move(compute[r]));
    out.busy_ps[r] = length(busy);
    std::vector<Interval> everything = busy;
    for (int c = 0; c < kCommClasses; ++c) {
      const auto mv = merged(std::move(moving[r][c]));
      out.exposed_ps[r][c] = length_minus(mv, busy);
      const auto middle = static_cast<std::ptrdiff_t>(everything.size());
      everything.insert(everything.end(), mv.begin(), mv.end());
      std::inplace_merge(everything.begin(), everything.begin() + middle, everything.end());  // both sorted
    }
    everything = merged(std::move(everything));
    // Offload work the GPU waits for, then host issuing where neither runs: each idle moment
    // is counted once.
    const auto offloading = merged(std::move(offload[r]));
    out.offload_ps[r] = length_minus(offloading, everything);
    const auto middle = static_cast<std::ptrdiff_t>(everything.size());
    everything.insert(everything.end(), offloading.begin(), offloading.end());
    std::inplace_merge(everything.begin(), everything.begin() + middle, everything.end());
    everything = merged(std::move(everything));
    const auto issuing = merged(std::move(host[r]));
    out.host_bound_ps[r] = length_minus(issuing, everything);
    out.idle_ps[r] = step - length(everything) - out.host_bound_ps[r];
  }
  return out;
}

void fill_headline(const Build& b, const RankTimes& t, StepResult& r) {
  const double n = static_cast<double>(b.global_of.size());
  const double step = static_cast<double>(t.step_ps) * 1e-12;
  r.step_time_s = step;
  const double tokens = static_cast<double>(b.in.sc.training.global_batch * b.in.sc.training.seq_len);
  r.tokens_per_s = tokens / step;
  const double gpus = b.in.grid.size();
  const double peak = models::peak_flops(b.in.sc.cluster.gpu, b.in.cost_in.dtype);
  const double model_flops = models::model_flops_per_token(b.in.sc.model, b.in.sc.training.seq_len) * tokens;
  double executed = 0;
  for (double f : b.executed_flops) executed += f;
  // Symmetric: each simulated rank stands for the same number of real ones (every stage has as
  // many representatives).
  executed *= static_cast<double>(b.in.grid.size()) / n;
  r.tflops_per_gpu = model_flops / step / gpus / 1e12;
  r.mfu = model_flops / (step * gpus * peak);
  if (precision_of(b.in.sc.training, b.in.st) == Precision::fp8) {
    r.mfu_fp8_peak = model_flops / (step * gpus * models::peak_flops(b.in.sc.cluster.gpu, hw::Dtype::fp8));
    std::int64_t busiest = 0;
    for (int stage = 0; stage < b.in.grid.pp(); ++stage)
      busiest = std::max(busiest, b.in.schedule.microbatches * b.in.stage_fp8_cast_ps[static_cast<std::size_t>(stage)] +
                                      fp8_weight_cast_ps(b.in, stage));
    r.fp8_cast_s = static_cast<double>(busiest) * 1e-12;
  }
  r.grad_accumulation_s =
      static_cast<double>(*std::max_element(b.accumulate_ps.begin(), b.accumulate_ps.end())) * 1e-12;
  double recomputed = 0;
  for (double f : b.recompute_flops) recomputed += f;
  recomputed *= static_cast<double>(b.in.grid.size()) / n;
  // HFU in MFU's FLOP convention (full s² attention), scaled by the share of executed work that
  // recomputes, so HFU >= MFU always; counting the causal half that FlashAttention executes against
  // MFU's full count would put HFU below MFU with no recompute at all.
  r.hfu = executed > recomputed ? r.mfu * executed / (executed - recomputed) : r.mfu;
  double idle = 0, stall = 0, host = 0, offload = 0;
  std::array<double, kCommClasses> exposed{};
  for (std::size_t k = 0; k < t.idle_ps.size(); ++k) {
    idle += static_cast<double>(t.idle_ps[k]);
    stall += static_cast<double>(t.stall_ps[k]);
    host += static_cast<double>(t.host_bound_ps[k]);
    offload += static_cast<double>(t.offload_ps[k]);
    for (int c = 0; c < kCommClasses; ++c) exposed[c] += static_cast<double>(t.exposed_ps[k][c]);
  }
  r.bubble_fraction = idle / n / static_cast<double>(t.step_ps);
  r.sync_stall_s = stall / n * 1e-12;
  r.host_bound_s = host / n * 1e-12;
  r.offload_s = offload / n * 1e-12;
  auto seconds = [&](CommClass c) { return exposed[static_cast<int>(c)] / n * 1e-12; };
  r.exposed_comm_s = {.tp = seconds(CommClass::tp), .pp = seconds(CommClass::pp), .dp = seconds(CommClass::dp),
                      .zero = seconds(CommClass::zero), .ep = seconds(CommClass::ep),
                      .cp = seconds(CommClass::cp)};
}

}  // namespace stepsim::plan
