#include "sim/report/chrome_trace.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <optional>
#include <tuple>

#include "sim/report/json_writer.hpp"

namespace stepsim::report {

const char* category_key(plan::TaskCategory c) {
  using C = plan::TaskCategory;
  switch (c) {
    case C::forward: return "forward";
    case C::backward_input: return "backward_input";
    case C::backward_weight: return "backward_weight";
    case C::recompute: return "recompute";
    case C::optimizer: return "optimizer";
    case C::tp_comm: return "tp_comm";
    case C::pp_comm: return "pp_comm";
    case C::dp_comm: return "dp_comm";
    case C::zero_comm: return "zero_comm";
    case C::ep_comm: return "ep_comm";
    case C::cp_comm: return "cp_comm";
    case C::host: return "host";
    case C::host_copies: return "host_copies";
    case C::host_transfer: return "host_transfer";
    case C::cpu_optimizer: return "cpu_optimizer";
    case C::other: return "other";
  }
  return "other";
}

std::string slice_name(const plan::TaskRecord& t) {
  using C = plan::TaskCategory;
  std::string prefix;
  switch (t.category) {
    case C::forward: prefix = "F "; break;
    case C::backward_input: prefix = "B "; break;
    case C::backward_weight: prefix = "W "; break;
    case C::recompute: prefix = "R "; break;
    case C::optimizer: prefix = "optimizer "; break;
    case C::tp_comm: prefix = "TP "; break;
    case C::pp_comm: prefix = "PP "; break;
    case C::dp_comm: prefix = "DP "; break;
    case C::zero_comm: prefix = "ZeRO "; break;
    case C::ep_comm: prefix = "EP "; break;
    case C::cp_comm: prefix = "CP "; break;
    case C::host: prefix = "host "; break;
    case C::host_copies: prefix = "host copies "; break;
    case C::host_transfer: prefix = "offload: "; break;
    case C::cpu_optimizer: prefix = "CPU "; break;
    case C::other: break;
  }
  std::string name = prefix + t.op;
  if (t.layer >= 0) name += " L" + std::to_string(t.layer);
  if (t.microbatch >= 0) name += " mb" + std::to_string(t.microbatch);
  if (t.chunk > 0) name += " c" + std::to_string(t.chunk);
  if (t.peer_rank >= 0) name += " -> " + std::to_string(t.peer_rank);
  return name;
}

namespace {

constexpr int kTsDecimals = 6;  // microseconds with picosecond resolution
double to_us(std::int64_t ps) { return static_cast<double>(ps) * 1e-6; }

void write_metadata(JsonWriter& w, const plan::StepResult& r, const TraceOptions& o) {
  auto meta = [&](const char* what, int pid, std::optional<int> tid, const char* key, auto value) {
    w.line_break().begin_object().key("name").value(what).key("ph").value("M").key("pid").value(pid);
    if (tid) w.key("tid").value(*tid);
    w.key("args").begin_object().key(key).value(value).end_object().end_object();
  };
  // Streams that ran something, per rank: a stream with no slice gets no (empty) track.
  std::set<std::pair<int, int>> used;
  for (const auto& t : r.tasks) used.emplace(t.rank, t.stream);
  for (const auto& info : r.ranks) {
    if (!o.ranks.contains(info.rank)) continue;
    const std::string name = "rank " + std::to_string(info.rank) + ": server " + std::to_string(info.server) + " GPU " +
                             std::to_string(info.gpu) + " (tp " + std::to_string(info.tp) + ", pp " +
                             std::to_string(info.pp) + ", dp " + std::to_string(info.dp) + ")";
    meta("process_name", info.rank, std::nullopt, "name", name);
    meta("process_sort_index", info.rank, std::nullopt, "sort_index", info.rank);
    for (std::size_t s = 0; s < info.streams.size(); ++s) {
      if (!used.count({info.rank, static_cast<int>(s)})) continue;
      meta("thread_name", info.rank, static_cast<int>(s), "name", info.streams[s]);
      meta("thread_sort_index", info.rank, static_cast<int>(s), "sort_index", static_cast<int>(s));
    }
  }
}

void write_slice(JsonWriter& w, const plan::TaskRecord& t) {
  w.line_break().begin_object().key("name").value(slice_name(t)).key("cat").value(category_key(t.category));
  w.key("ph").value("X").key("pid").value(t.rank).key("tid").value(t.stream);
  w.key("ts").fixed(to_us(t.start_ps), kTsDecimals).key("dur").fixed(to_us(t.end_ps - t.start_ps), kTsDecimals);
  w.key("args").begin_object().key("category").value(category_key(t.category)).key("op").value(t.op);
  if (t.layer >= 0) w.key("layer").value(t.layer);
  if (t.microbatch >= 0) w.key("microbatch").value(t.microbatch);
  if (t.chunk > 0) w.key("chunk").value(t.chunk);
  if (t.bytes > 0) w.key("bytes").value(t.bytes);
  if (t.flops > 0) w.key("flops").value(t.flops);
  if (t.sync_wait_ps > 0) w.key("sync_wait_us").fixed(to_us(t.sync_wait_ps), kTsDecimals);
  if (t.peer_rank >= 0) w.key("peer_rank").value(t.peer_rank);
  w.end_object().end_object();
}

bool is_send(const plan::TaskRecord& t) { return t.category == plan::TaskCategory::pp_comm && t.op == "send"; }

// For each send, the task on the peer rank that received it: the first task there that depends on
// it, else the receive recorded as the other member of its transfer (the same group id).
std::map<std::uint32_t, std::uint32_t> match_sends(const std::vector<plan::TaskRecord>& tasks) {
  std::map<std::uint32_t, std::uint32_t> consumer;
  for (std::uint32_t i = 0; i < tasks.size(); ++i)
    for (const auto d : tasks[i].deps)
      if (d < tasks.size() && is_send(tasks[d]) && tasks[d].peer_rank == tasks[i].rank && !consumer.count(d))
        consumer[d] = i;
  std::map<int, std::uint32_t> recv_of_group;
  for (std::uint32_t i = 0; i < tasks.size(); ++i)
    if (tasks[i].category == plan::TaskCategory::pp_comm && tasks[i].op == "recv" && tasks[i].group >= 0)
      recv_of_group.emplace(tasks[i].group, i);
  for (std::uint32_t i = 0; i < tasks.size(); ++i) {
    if (!is_send(tasks[i]) || consumer.count(i)) continue;
    if (const auto it = recv_of_group.find(tasks[i].group); tasks[i].group >= 0 && it != recv_of_group.end()) consumer[i] = it->second;
  }
  return consumer;
}

void write_flows(JsonWriter& w, const plan::StepResult& r, const TraceOptions& o) {
  int id = 0;
  for (const auto& [send, recv] : match_sends(r.tasks)) {
    const auto& s = r.tasks[send];
    const auto& f = r.tasks[recv];
    if (!o.ranks.contains(s.rank) || !o.ranks.contains(f.rank)) continue;
    ++id;
    const std::int64_t f_ts = std::max(f.start_ps, s.start_ps);
    w.line_break().begin_object().key("name").value("pp send").key("cat").value("pp_flow").key("ph").value("s");
    w.key("id").value(id).key("pid").value(s.rank).key("tid").value(s.stream).key("ts").fixed(to_us(s.start_ps), kTsDecimals);
    w.end_object();
    w.line_break().begin_object().key("name").value("pp send").key("cat").value("pp_flow").key("ph").value("f");
    w.key("bp").value("e").key("id").value(id).key("pid").value(f.rank).key("tid").value(f.stream);
    w.key("ts").fixed(to_us(f_ts), kTsDecimals).end_object();
  }
}

void write_counter(JsonWriter& w, const std::string& name, int pid, std::int64_t t_ps, const char* unit, double v) {
  w.line_break().begin_object().key("name").value(name).key("ph").value("C").key("pid").value(pid);
  w.key("ts").fixed(to_us(t_ps), kTsDecimals).key("args").begin_object().key(unit).value(v).end_object().end_object();
}

void write_counters(JsonWriter& w, const plan::StepResult& r, const TraceOptions& o) {
  int links_pid = 0;
  for (const auto& info : r.ranks) {
    links_pid = std::max(links_pid, info.rank + 1);
    if (!o.ranks.contains(info.rank)) continue;
    for (const auto& m : info.memory)
      write_counter(w, "memory in use", info.rank, m.t_ps, "GiB", static_cast<double>(m.bytes) / (1 << 30));
  }
  if (!o.link_counters || r.links.empty()) return;
  w.line_break().begin_object().key("name").value("process_name").key("ph").value("M").key("pid").value(links_pid);
  w.key("args").begin_object().key("name").value("links").end_object().end_object();
  for (const auto& link : r.links)
    for (const auto& s : link.samples) {
      if (link.capacity_bytes_per_s > 0)
        write_counter(w, "util " + link.name, links_pid, s.t_ps, "%", 100.0 * s.bytes_per_s / link.capacity_bytes_per_s);
      else
        write_counter(w, "load " + link.name, links_pid, s.t_ps, "GB/s", s.bytes_per_s / 1e9);
    }
}

}  // namespace

void write_chrome_trace(const plan::StepResult& r, std::ostream& out, const TraceOptions& o) {
  JsonWriter w(out);
  w.begin_object().key("displayTimeUnit").value("ms");
  w.key("otherData").begin_object().key("strategy").value(r.name).key("step_time_s").value(r.step_time_s);
  w.key("generator").value("stepsim").end_object();
  w.key("traceEvents").begin_array();
  write_metadata(w, r, o);
  for (const auto& t : r.tasks)
    if (o.ranks.contains(t.rank)) write_slice(w, t);
  write_flows(w, r, o);
  write_counters(w, r, o);
  w.line_break().end_array().end_object();
  out << '\n';
}

}  // namespace stepsim::report
