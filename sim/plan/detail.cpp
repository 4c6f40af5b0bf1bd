// Per-rank facts for reports, and (when detail is asked for) one TaskRecord per compute task and
// collective member, with the dependencies that shaped its start: the previous task on its stream
// and the explicit cross-stream dependencies the builders added. Dependencies that pass through
// tasks with no record (pass start/end markers, join markers, group arrivals) are resolved to the
// recorded tasks behind them, so a PP receive still leads its pass and a DP bucket still leads
// back to the backward that produced its gradients. Members of one collective carry the group id
// recorded with them (TaskRecorder::record_members).
// Strings are built only here.
#include <algorithm>
#include <unordered_map>

#include "sim/plan/metrics.hpp"

namespace stepsim::plan {
namespace {

const std::vector<std::string>& stream_names() {
  static const std::vector<std::string> kNames{"compute", "dp", "zero", "pp_send_next", "pp_send_prev",
                                               "pp_recv_prev", "pp_recv_next", "tp", "host"};
  return kNames;
}

void fill_tasks(const Build& b, StepResult& r) {
  std::unordered_map<std::uint32_t, std::uint32_t> index;
  std::unordered_map<std::uint64_t, std::uint32_t> last_on_stream;
  // (engine id, record) of each local rank's compute-stream tasks, in stream (= creation) order.
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> compute_of(b.global_of.size());
  r.tasks.reserve(b.rec.meta().size());
  for (std::size_t k = 0; k < b.rec.meta().size(); ++k) {
    const TaskMeta& m = b.rec.meta()[k];
    TaskRecord t;
    t.rank = b.global_of[m.rank];
    t.stream = static_cast<int>(m.slot);
    t.category = m.category;
    t.op = m.member ? comm::to_string(static_cast<comm::Op>(m.op)) : to_string(m.category);
    // A PP transfer's two members are one send/recv collective; which end each is, its stream says.
    if (m.slot == Slot::send_next || m.slot == Slot::send_prev) t.op = "send";
    if (m.slot == Slot::recv_prev || m.slot == Slot::recv_next) t.op = "recv";
    if (m.category == TaskCategory::host_transfer) t.op = m.op == kToHost ? "to host" : "from host";
    if (m.category == TaskCategory::cpu_optimizer) t.op = "Adam";
    t.layer = m.layer;
    t.microbatch = m.microbatch;
    t.chunk = m.chunk;
    const core::TaskTimes times = b.rec.engine().times_of(m.id);
    t.start_ps = times.start.ps;
    t.end_ps = times.finish.ps;
    t.sync_wait_ps = m.member ? times.sync_wait.ps : 0;
    t.bytes = static_cast<double>(m.bytes);
    t.peer_rank = m.peer;
    t.group = m.group;
    const std::uint64_t key = static_cast<std::uint64_t>(m.rank) * 16 + static_cast<std::uint64_t>(m.slot);
    if (auto it = last_on_stream.find(key); it != last_on_stream.end()) t.deps.push_back(it->second), t.stream_pred = it->second;
    const auto me = static_cast<std::uint32_t>(r.tasks.size());
    last_on_stream[key] = me;
    index[m.id.value] = me;
    if (m.slot == Slot::compute) compute_of[m.rank].emplace_back(m.id.value, me);
    r.tasks.push_back(std::move(t));
  }

  // Unrecorded tasks: their explicit predecessors, and for compute-stream markers the rank they
  // sit on (their stream neighbours are then a predecessor and a successor too).
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> before_of;
  for (const auto& [before, after] : b.rec.dependencies())
    if (!index.count(after.value)) before_of[after.value].push_back(before.value);
  std::unordered_map<std::uint32_t, int> marker_rank;
  auto note_marker = [&](core::TaskId id, int local) {
    if (!index.count(id.value)) marker_rank.emplace(id.value, local);
  };
  for (std::size_t local = 0; local < b.passes.size(); ++local)
    for (const PassTasks& p : b.passes[local]) note_marker(p.start, static_cast<int>(local)), note_marker(p.end, static_cast<int>(local));
  for (std::size_t local = 0; local < b.grad_ready.size(); ++local)
    for (core::TaskId id : b.grad_ready[local]) note_marker(id, static_cast<int>(local));
  for (std::size_t local = 0; local < b.backward_end.size(); ++local) note_marker(b.backward_end[local], static_cast<int>(local));

  // Recorded tasks an unrecorded one waited on, through any chain of unrecorded ones.
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> resolved;
  auto resolve = [&](auto&& self, std::uint32_t id) -> const std::vector<std::uint32_t>& {
    if (auto it = resolved.find(id); it != resolved.end()) return it->second;
    std::vector<std::uint32_t> out;
    resolved.emplace(id, out);  // a DAG has no cycles; this only guards against a malformed one
    auto add = [&](std::uint32_t before) {
      if (auto it = index.find(before); it != index.end()) {
        out.push_back(it->second);
      } else {
        const auto& more = self(self, before);
        out.insert(out.end(), more.begin(), more.end());
      }
    };
    if (auto it = before_of.find(id); it != before_of.end())
      for (std::uint32_t before : it->second) add(before);
    if (auto it = marker_rank.find(id); it != marker_rank.end()) {
      const auto& list = compute_of[static_cast<std::size_t>(it->second)];
      auto pos = std::lower_bound(list.begin(), list.end(), std::pair<std::uint32_t, std::uint32_t>(id, 0));
      if (pos != list.begin()) out.push_back(std::prev(pos)->second);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return resolved[id] = std::move(out);
  };
  auto add_deps = [&](std::uint32_t record, const std::vector<std::uint32_t>& deps) {
    auto& list = r.tasks[record].deps;
    for (std::uint32_t d : deps)
      if (d != record && std::find(list.begin(), list.end(), d) == list.end()) list.push_back(d);
  };
  for (const auto& [before, after] : b.rec.dependencies()) {
    auto c = index.find(after.value);
    if (c == index.end()) continue;
    if (auto a = index.find(before.value); a != index.end()) {
      add_deps(c->second, {a->second});
    } else {
      add_deps(c->second, resolve(resolve, before.value));
    }
  }
  // A compute-stream marker holds back the next recorded task on its stream.
  for (const auto& [id, local] : marker_rank) {
    const auto& list = compute_of[static_cast<std::size_t>(local)];
    auto pos = std::upper_bound(list.begin(), list.end(), std::pair<std::uint32_t, std::uint32_t>(id, ~0u));
    if (pos != list.end()) add_deps(pos->second, resolve(resolve, id));
  }
}

}  // namespace
void fill_detail(const Build& b, const RankTimes& t, StepResult& r) {
  for (std::size_t k = 0; k < b.global_of.size(); ++k) {
    RankInfo& info = r.ranks[k];
    const int g = b.global_of[k];
    const Coord c = b.in.grid.coord(g);
    info.rank = info.gpu = g;
    info.server = b.in.sc.cluster.server_of(g);
    info.tp = c.tp;
    info.dp = c.dp;
    info.pp = c.pp;
    info.streams = stream_names();
    info.layers = static_cast<int>(b.grad_ready[k].size());
    info.busy_s = static_cast<double>(t.busy_ps[k]) * 1e-12;
  }
  if (b.in.opt.detail) fill_tasks(b, r);
}

}  // namespace stepsim::plan
