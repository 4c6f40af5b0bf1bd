// Per-rank facts for reports, and (when detail is asked for) one TaskRecord per compute task and
// collective member, with the dependencies that shaped its start: the previous task on its stream
// and the explicit cross-stream dependencies the builders added. Strings are built only here.
#include <unordered_map>

#include "sim/plan/metrics.hpp"

namespace stepsim::plan {
namespace {

const std::vector<std::string>& stream_names() {
  static const std::vector<std::string> kNames{"compute", "dp", "zero", "pp_send_next", "pp_send_prev",
                                               "pp_recv_prev", "pp_recv_next", "tp"};
  return kNames;
}

void fill_tasks(const Build& b, StepResult& r) {
  std::unordered_map<std::uint32_t, std::uint32_t> index;
  std::unordered_map<std::uint64_t, std::uint32_t> last_on_stream;
  r.tasks.reserve(b.meta.size());
  for (const TaskMeta& m : b.meta) {
    TaskRecord t;
    t.rank = b.global_of[m.rank];
    t.stream = static_cast<int>(m.slot);
    t.category = m.category;
    t.op = m.member ? comm::to_string(static_cast<comm::Op>(m.op)) : to_string(m.category);
    t.layer = m.layer;
    t.microbatch = m.microbatch;
    t.chunk = m.chunk;
    t.start_ps = b.engine.start_of(m.id).ps;
    t.end_ps = b.engine.finish_of(m.id).ps;
    t.sync_wait_ps = m.member ? b.engine.sync_wait(m.id).ps : 0;
    t.bytes = static_cast<double>(m.bytes);
    t.peer_rank = m.peer;
    const std::uint64_t key = static_cast<std::uint64_t>(m.rank) * 16 + static_cast<std::uint64_t>(m.slot);
    if (auto it = last_on_stream.find(key); it != last_on_stream.end()) t.deps.push_back(it->second);
    const auto me = static_cast<std::uint32_t>(r.tasks.size());
    last_on_stream[key] = me;
    index[m.id.value] = me;
    r.tasks.push_back(std::move(t));
  }
  for (const auto& [before, after] : b.dep_log) {
    auto a = index.find(before.value), c = index.find(after.value);
    if (a != index.end() && c != index.end()) r.tasks[c->second].deps.push_back(a->second);
  }
}

}  // namespace

void fill_detail(const Build& b, const RankTimes& t, StepResult& r) {
  for (std::size_t k = 0; k < b.global_of.size(); ++k) {
    RankInfo& info = r.ranks[k];
    const int g = b.global_of[k];
    const Coord c = b.grid.coord(g);
    info.rank = info.gpu = g;
    info.server = b.sc.cluster.server_of(g);
    info.tp = c.tp;
    info.dp = c.dp;
    info.pp = c.pp;
    info.streams = stream_names();
    info.layers = static_cast<int>(b.grad_ready[k].size());
    info.busy_s = static_cast<double>(t.busy_ps[k]) * 1e-12;
  }
  if (b.opt.detail) fill_tasks(b, r);
}

}  // namespace stepsim::plan
