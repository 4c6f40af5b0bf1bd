#include "sim/comm/perf_table.hpp"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cstdio>
#include <optional>
#include <sstream>

#include "sim/comm/algorithm.hpp"
#include "sim/comm/collective.hpp"
#include "sim/comm/paper.hpp"
#include "sim/comm/plan_input.hpp"
#include "sim/comm/plan_dag.hpp"
#include "sim/config/units.hpp"
#include "sim/core/engine.hpp"

namespace stepsim::comm {
namespace {

PerfRow make_row(Op op, int ranks, std::int64_t bytes, core::Duration t, Algorithm algorithm, hw::Protocol protocol) {
  PerfRow row{.size_bytes = bytes, .time_us = static_cast<double>(t.ps) * 1e-6, .algorithm = algorithm, .protocol = protocol};
  if (t.ps > 0) row.algbw_gbps = algorithm_bandwidth(bytes, t.seconds()) * 1e-9;
  row.busbw_gbps = row.algbw_gbps * bus_factor(op, ranks);
  return row;
}

// nccl-tests common.cu: %7.0f from 10 ms, %7.1f from 100 us, else %7.2f.
std::string format_time(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, us >= 10000.0 ? "%7.0f" : us >= 100.0 ? "%7.1f" : "%7.2f", us);
  return buf;
}

std::string redop(Op op) { return op == Op::all_reduce || op == Op::reduce_scatter ? "sum" : "none"; }
int root(Op op) { return op == Op::broadcast ? 0 : -1; }

}  // namespace

PerfRow simulate_size(const hw::Router& router, Op op, const std::vector<int>& gpus, std::int64_t bytes,
                      Algorithm algorithm, bool engine, RingMode rings, std::optional<hw::Protocol> protocol,
                      PaperMemo* memo) {
  const CollectiveRequest req{.op = op, .gpus = gpus, .bytes = bytes, .algorithm = algorithm, .protocol = protocol,
                              .coarse = use_coarse_mode(rings, gpus.size())};
  std::optional<AlgorithmChoice> tuned;
  if (algorithm == Algorithm::automatic || !protocol) tuned = choose_with_estimate(router, req, PlanForm::copies, memo);
  CollectiveRequest fixed = req;
  fixed.algorithm = tuned ? tuned->algorithm : algorithm;
  fixed.protocol = tuned ? tuned->protocol : *protocol;
  const Algorithm chosen = fixed.algorithm;
  const int ranks = static_cast<int>(gpus.size());
  auto row = [&](core::Duration t) { return make_row(op, ranks, bytes, t, chosen, *fixed.protocol); };
  auto on_paper = [&] { return tuned ? tuned->time : estimate(router, fixed); };
  if (!engine) return row(on_paper());
  std::optional<PlannedCollective> planned;
  if (req.coarse) {
    // The plan the tuner timed where it ran (it plans in coarse mode, as here), else a fresh one.
    planned = tuned ? std::move(tuned->coarse_plan) : plan_collective(router, fixed);
    if (!has_folded_form(op, chosen)) {
      const auto solved = step_plan_time(router, gpus, planned->plan);
      return row(solved ? *solved : on_paper());
    }
    // Alone on the machine, a plan whose whole lattice was solved takes the lattice's time, step
    // mode's own; the engine's folded flows end there too, but for phases that overlap member by
    // member (folded_ring.hpp, FoldedTiming).
    if (planned->lattice_end_ps) return row(core::picoseconds(planned->plan.launch_latency_ps + *planned->lattice_end_ps));
  }
  core::Engine sim;
  Network net(sim, router.cluster(), router);
  if (planned) {
    planned = expanded(std::move(*planned));
    net.remember({.op = op, .algorithm = chosen, .protocol = fixed.protocol, .bytes = bytes, .root = req.root,
                  .coarse = true, .gpus = gpus},
                 std::move(*planned));
  }
  std::vector<core::StreamId> streams;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    streams.push_back(sim.add_stream(sim.add_device(), core::StreamKind::communication));
  add_collective(net, fixed, streams);
  const auto stats = sim.run();
  return row(stats.makespan - core::TimePoint{});
}

PerfTable simulate_sweep(const hw::Router& router, Op op, const std::vector<int>& gpus,
                         const std::vector<std::int64_t>& sizes, Algorithm algorithm, bool engine,
                         RingMode rings, const std::function<void(std::size_t)>& on_row,
                         std::optional<hw::Protocol> protocol) {
  PerfTable table{.op = op, .ranks = static_cast<int>(gpus.size()), .gpu_name = router.cluster().gpu.name};
  for (int g : gpus) table.server_of.push_back(router.cluster().server_of(g));
  double sum = 0;
  PaperMemo memo;  // every size asks for the same pairs
  for (std::int64_t s : sizes) {
    table.rows.push_back(simulate_size(router, op, gpus, s, algorithm, engine, rings, protocol, &memo));
    sum += table.rows.back().busbw_gbps;
    if (on_row) on_row(table.rows.size());
  }
  if (!sizes.empty()) table.avg_busbw_gbps = sum / static_cast<double>(sizes.size());
  return table;
}

std::vector<std::int64_t> size_sweep(std::int64_t min_bytes, std::int64_t max_bytes, std::int64_t factor) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t s = min_bytes; s <= max_bytes; s *= factor) {
    sizes.push_back(s);
    if (s > max_bytes / factor) break;  // the next size would pass max (or overflow)
  }
  return sizes;
}

std::optional<std::int64_t> parse_size(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits > 0 && digits + 1 >= text.size()) {
    static const std::string kSuffixes = "KMGT";  // nccl-tests parsesize: powers of 1024
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + digits, value);
    if (error != std::errc{} || end != text.data() + digits || value > kMaxSizeBytes) return std::nullopt;
    if (digits == text.size()) return value;
    const auto p = kSuffixes.find(static_cast<char>(std::toupper(static_cast<unsigned char>(text.back()))));
    if (p == std::string::npos) return std::nullopt;
    for (std::size_t i = 0; i <= p; ++i) {
      if (value > kMaxSizeBytes / 1024) return std::nullopt;
      value *= 1024;
    }
    return value;
  }
  const auto parsed = config::parse_bytes(text);
  if (const auto* bytes = std::get_if<std::int64_t>(&parsed)) return *bytes <= kMaxSizeBytes ? std::optional(*bytes) : std::nullopt;
  return std::nullopt;
}

std::int64_t element_count(Op op, int ranks, std::int64_t size_bytes) {
  const std::int64_t elements = size_bytes / 4;
  const bool per_rank = op == Op::all_gather || op == Op::reduce_scatter || op == Op::all_to_all;
  return per_rank ? elements / ranks : elements;
}

std::string format_table(const PerfTable& table, const std::string& title) {
  std::ostringstream out;
  char buf[256];
  out << "# " << title << "\n#\n# Using devices\n";
  for (std::size_t r = 0; r < table.server_of.size(); ++r) {  // nccl-tests' device lines, so logs round-trip
    std::snprintf(buf, sizeof buf, "#  Rank %2zu Group  0 Pid %6d on    server%d device %2zu [0x00] %s\n", r, 0,
                  table.server_of[r], r, table.gpu_name.c_str());
    out << buf;
  }
  out << "#\n";
  out << "#                                                              out-of-place                       in-place\n"
         "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong  algo  proto\n"
         "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
  for (const auto& r : table.rows) {
    const std::string t = format_time(r.time_us);
    std::snprintf(buf, sizeof buf, "%12lld  %12lld  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %5s  %7s  %6.2f  %6.2f  %5s  %-4s  %s\n",
                  static_cast<long long>(r.size_bytes), static_cast<long long>(element_count(table.op, table.ranks, r.size_bytes)),
                  "float", redop(table.op).c_str(), root(table.op), t.c_str(), r.algbw_gbps, r.busbw_gbps, "0", t.c_str(),
                  r.algbw_gbps, r.busbw_gbps, "0", to_string(r.algorithm).c_str(), to_string(r.protocol).c_str());
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "# Avg bus bandwidth    : %g\n#\n", table.avg_busbw_gbps);
  out << buf;
  return out.str();
}

std::string format_json(const PerfTable& table) {
  std::ostringstream out;
  char buf[256];
  out << "{\"rows\": [";
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const auto& r = table.rows[i];
    std::snprintf(buf, sizeof buf, "%s{\"size_bytes\": %lld, \"time_us\": %.6g, \"algbw_gbps\": %.6g, \"busbw_gbps\": %.6g, \"algo\": \"%s\", \"proto\": \"%s\"}",
                  i ? ", " : "", static_cast<long long>(r.size_bytes), r.time_us, r.algbw_gbps, r.busbw_gbps,
                  to_string(r.algorithm).c_str(), to_string(r.protocol).c_str());
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "], \"avg_busbw_gbps\": %.6g}\n", table.avg_busbw_gbps);
  out << buf;
  return out.str();
}

}  // namespace stepsim::comm
