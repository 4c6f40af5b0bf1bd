#include "sim/report/critical_path.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "sim/report/chrome_trace.hpp"
#include "sim/report/format.hpp"
#include "sim/report/text_table.hpp"

namespace stepsim::report {

namespace {

// "forward mlp"; just "forward" when the op adds nothing (empty, or the category's own name).
std::string compute_label(const char* phase, const plan::TaskRecord& t) {
  if (t.op.empty() || t.op == phase || t.op == category_key(t.category)) return phase;
  return std::string(phase) + " " + t.op;
}

}  // namespace

std::string critical_path_label(const plan::TaskRecord& t) {
  using C = plan::TaskCategory;
  switch (t.category) {
    case C::forward: return compute_label("forward", t);
    case C::backward_input: return compute_label("backward", t);
    case C::backward_weight: return compute_label("weight-gradient", t);
    case C::recompute: return compute_label("recompute", t);
    case C::optimizer: return "optimizer step";
    case C::tp_comm: return "TP communication";
    case C::pp_comm: return "PP send/recv";
    case C::dp_comm: return "DP communication";
    case C::zero_comm: return "ZeRO communication";
    case C::ep_comm: return "EP all-to-all";
    case C::cp_comm: return "CP K/V exchange";
    case C::host: return "host issuing kernels";
    case C::host_copies: return "host copying per rank";
    case C::host_transfer: return "GPU-host copies (offload)";
    case C::cpu_optimizer: return "optimizer step on the CPU";
    case C::other: return "other";
  }
  return "other";
}

namespace {

constexpr const char* kWaiting = "waiting";
constexpr const char* kSyncStall = "sync stall";

// The predecessor that finished last (only ones that finished by the task's start count, when
// any did); a tie keeps the stream predecessor, then the lower index.
std::int64_t binding_predecessor(const std::vector<plan::TaskRecord>& tasks, std::uint32_t t, std::int64_t stream_pred) {
  std::int64_t best = stream_pred;
  auto better = [&](std::uint32_t d) {
    if (best < 0) return true;
    const auto& b = tasks[static_cast<std::size_t>(best)];
    const bool d_before = tasks[d].end_ps <= tasks[t].start_ps, b_before = b.end_ps <= tasks[t].start_ps;
    if (d_before != b_before) return d_before;
    if (tasks[d].end_ps != b.end_ps) return tasks[d].end_ps > b.end_ps;
    return best != stream_pred && d < best;
  };
  for (const auto d : tasks[t].deps) {
    if (d >= tasks.size() || d == t) continue;
    if (better(d)) best = d;
  }
  return best;
}

// For a collective member that waited for its peers: the member of its collective on another rank
// that arrived last (started latest, after this one), or −1.
std::int64_t last_arrival(const std::vector<plan::TaskRecord>& tasks,
                          const std::map<int, std::vector<std::uint32_t>>& groups, std::uint32_t t) {
  const auto& task = tasks[t];
  if (task.group < 0 || task.sync_wait_ps <= 0) return -1;
  const auto it = groups.find(task.group);
  if (it == groups.end()) return -1;
  std::int64_t best = -1;
  for (const auto m : it->second) {
    if (m == t || tasks[m].rank == task.rank || tasks[m].start_ps <= task.start_ps) continue;
    if (best < 0 || tasks[m].start_ps > tasks[static_cast<std::size_t>(best)].start_ps) best = m;
  }
  return best;
}

std::uint32_t last_finishing(const std::vector<plan::TaskRecord>& tasks) {
  std::uint32_t last = 0;
  for (std::uint32_t i = 1; i < tasks.size(); ++i)
    if (tasks[i].end_ps >= tasks[last].end_ps) last = i;
  return last;
}

}  // namespace

CriticalPath critical_path(const plan::StepResult& result) {
  const auto& tasks = result.tasks;
  CriticalPath path;
  if (tasks.empty()) return path;
  std::map<int, std::vector<std::uint32_t>> groups;
  for (std::uint32_t i = 0; i < tasks.size(); ++i)
    if (tasks[i].group >= 0) groups[tasks[i].group].push_back(i);
  std::map<std::string, std::int64_t> sums;
  std::set<std::uint32_t> visited;
  std::uint32_t t = last_finishing(tasks);
  path.total_ps = tasks[t].end_ps;
  std::int64_t cursor = path.total_ps;  // everything after `cursor` has been attributed
  for (;;) {
    visited.insert(t);
    const auto& task = tasks[t];
    const std::int64_t begin = std::min(task.start_ps, cursor);
    // A member that waited for a later peer: its wait is that peer's path, so follow the peer
    // from the moment the collective arrived (when the peer started) and book only the rest.
    const std::int64_t late = last_arrival(tasks, groups, t);
    if (late >= 0 && visited.count(static_cast<std::uint32_t>(late)) == 0) {
      const std::int64_t arrival = std::clamp<std::int64_t>(tasks[static_cast<std::size_t>(late)].start_ps, begin, cursor);
      if (cursor > arrival) sums[critical_path_label(task)] += cursor - arrival;
      path.chain.push_back({t, 0});
      cursor = arrival;
      ++path.rank_changes;
      t = static_cast<std::uint32_t>(late);
      continue;
    }
    const std::int64_t own = cursor - begin;
    const std::int64_t stall = std::clamp<std::int64_t>(task.sync_wait_ps, 0, own);
    if (stall > 0) sums[kSyncStall] += stall;
    if (own - stall > 0) sums[critical_path_label(task)] += own - stall;
    cursor = begin;
    const std::int64_t p = binding_predecessor(tasks, t, tasks[t].stream_pred);
    const bool stop = p < 0 || visited.count(static_cast<std::uint32_t>(p)) > 0;
    const std::int64_t pred_end = stop ? 0 : std::clamp<std::int64_t>(tasks[static_cast<std::size_t>(p)].end_ps, 0, cursor);
    path.chain.push_back({t, cursor - pred_end});
    if (cursor > pred_end) sums[kWaiting] += cursor - pred_end;
    cursor = pred_end;
    if (stop) break;
    if (tasks[static_cast<std::size_t>(p)].rank != task.rank) ++path.rank_changes;
    t = static_cast<std::uint32_t>(p);
  }
  std::reverse(path.chain.begin(), path.chain.end());
  for (const auto& [label, ps] : sums) path.by_category.push_back({label, ps});
  std::stable_sort(path.by_category.begin(), path.by_category.end(),
                   [](const CategoryTime& a, const CategoryTime& b) { return a.ps > b.ps; });
  return path;
}

std::string format_critical_path(const CriticalPath& path, const plan::StepResult& result) {
  std::string out = "Critical path of " + result.name + ": " + std::to_string(path.chain.size()) + " tasks, " +
                    std::to_string(path.rank_changes) + " hops between ranks, " +
                    milliseconds(static_cast<double>(path.total_ps) * 1e-12) + "\n";
  TextTable table({"where the time went", "time", "share"}, {Align::left, Align::right, Align::right});
  const double total = std::max<double>(static_cast<double>(path.total_ps), 1);
  for (const auto& c : path.by_category)
    table.add_row({c.label, milliseconds(static_cast<double>(c.ps) * 1e-12, 2), percent(static_cast<double>(c.ps) / total)});
  table.add_row({"total", milliseconds(static_cast<double>(path.total_ps) * 1e-12, 2), percent(path.total_ps > 0 ? 1.0 : 0.0)});
  out += table.render();
  if (result.fp8_cast_s > 0)
    out += "FP8 casts and amax (in forward, backward and the optimizer step above): " + milliseconds(result.fp8_cast_s, 2) +
           " per step on the busiest rank, " + percent(result.fp8_cast_s / std::max(result.step_time_s, 1e-12)) + " of its step\n";
  if (result.grad_accumulation_s > 0)
    out += "Gradient accumulation kernels (in the backward and W passes above): " + milliseconds(result.grad_accumulation_s, 2) +
           " per step on the busiest rank, " + percent(result.grad_accumulation_s / std::max(result.step_time_s, 1e-12)) +
           " of its step\n";
  return out;
}

}  // namespace stepsim::report
