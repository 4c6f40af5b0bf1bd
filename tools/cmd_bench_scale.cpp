// `stepsim bench scale [--cases LIST|all] [--json]`: what the cases of issue 20's table cost to
// simulate on this machine — CPU seconds, wall seconds, peak resident memory, engine events and
// events per CPU second — each case in a child process of its own, so that its CPU time and peak
// memory (wait4's rusage) are its own and not the sum of the cases before it.
//
// Times are CPU time (user + system of the child): on a shared machine wall time includes waiting
// for a core. Cases that take minutes today are listed but run only when named (or with all).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <sstream>

#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"
#include "sim/comm/calibration.hpp"
#include "sim/comm/perf_table.hpp"
#include "sim/config/yaml_field.hpp"
#include "sim/plan/simulate.hpp"
#include "sim/report/json_writer.hpp"
#include "sim/sweep/sweep_runner.hpp"
#include "sim/sweep/sweep_space.hpp"
#include "sim/sweep/sweep_yaml.hpp"
#include "tools/cli_allocator.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"

namespace stepsim::cli {
namespace {

/// What a case reports from inside its child: engine events and its own figure of merit.
struct CaseOutput {
  std::uint64_t events = 0;
  double result = 0;          ///< step seconds, or plans simulated, or sizes timed
  std::string result_unit;    ///< "s step", "plans", "sizes"
};

struct ScaleCase {
  std::string name;
  std::string what;
  int gpus;
  bool slow_today;  ///< minutes on this kind of machine today: run only when named
  std::function<CaseOutput()> run;
  std::string family{};  ///< a growth curve's ("gpus", "microbatches", "layers"), else empty
  double x = 0;          ///< its point on that curve
};

CaseOutput run_plan(const std::string& yaml, plan::Fidelity fidelity) {
  const auto sc = plan::read_scenario(config::YamlDocument::load_string(yaml, "bench scale"));
  plan::SimOptions opt;
  opt.fidelity = fidelity;
  const auto r = plan::simulate(sc, sc.strategies.front(), opt);
  return {r.events, r.step_time_s, "s step"};
}

std::string plan_yaml(const std::string& hardware, const std::string& model, const std::string& training,
                      const std::string& strategy) {
  return "name: bench\nhardware: " + hardware + "\nmodel: " + model + "\ntraining: " + training +
         "\nstrategies:\n  - " + strategy + "\n";
}

CaseOutput run_collective(int nodes) {
  const hw::Cluster cluster = hw::load_cluster("dgx-h100", {.nodes = nodes, .gpus_per_node = std::nullopt});
  const hw::Router router(cluster);
  std::vector<int> gpus;
  for (int g = 0; g < cluster.gpu_count(); ++g) gpus.push_back(g);
  const auto sizes = comm::size_sweep(std::int64_t{1} << 20, std::int64_t{8} << 30, 2);
  const auto table = comm::simulate_sweep(router, comm::Op::all_reduce, gpus, sizes, comm::Algorithm::automatic);
  return {0, static_cast<double>(table.rows.size()), "sizes"};
}

// The 16-rank calibration the reliability issue times: dgx-h100 x 2 fitted to the GCP A3 Mega log
// of tests/sim/comm/data (31 sizes, the slowest of the shipped logs to fit).
CaseOutput run_calibration_case() {
  const auto log = comm::read_nccl_log(std::string(STEPSIM_DATA_DIR) +
                                       "/tests/sim/comm/data/nccl_all_reduce_2node_16xh100_gcp_a3mega_8B-8G_quoted_cmd.txt");
  const auto result = comm::calibrate(hw::load_cluster("dgx-h100", comm::shape_for(log)), log);
  return {0, static_cast<double>(result.after_us.size()), "sizes"};
}

CaseOutput run_sweep_case() {
  keep_freed_memory_for_reuse();  // as stepsim sweep runs
  const std::string path = std::string(STEPSIM_DATA_DIR) + "/scenarios/sweep_llama2_7b_dgx_a100.yaml";
  const auto sc = plan::load_scenario(path);
  const auto candidates = sweep::enumerate_plans(sc, sweep::load_scenario_sweep(path));
  sweep::RunOptions run;
  run.threads = 1;
  std::uint64_t events = 0;
  const plan::SimOptions options = sweep::sweep_sim_options(sc);  // as stepsim sweep runs them
  const auto outcome = sweep::run_sweep(sc, candidates, run, [&](const plan::Scenario& s, const plan::Strategy& st) {
    auto r = plan::simulate(s, st, options);
    events += r.events;
    return r;
  });
  return {events, static_cast<double>(outcome.results.size()), "plans"};
}

// The cases of issue 20's table, as it states them, and its 16,384-GPU plan without the distributed
// optimizer, where timing the DP groups' buckets together was most of the cost.
std::vector<ScaleCase> cases() {
  const std::string fp16_2048 = "{seq_len: 2048, global_batch: 1536, precision: bf16}";
  return {
      {"llama2-13b-64", "Llama-2 13B on 64 A100 (dgx-a100 x 8, tp8 pp2 dp4, m 16), full fidelity", 64, false,
       [] {
         return run_plan(plan_yaml("{preset: dgx-a100, nodes: 8}", "llama-2-13b", "{seq_len: 4096, global_batch: 64}",
                                   "{name: p, tp: 8, pp: 2, dp: 4, micro_batch: 1}"),
                         plan::Fidelity::full);
       }},
      {"gpt3-175b-1024-1f1b", "GPT-3 175B on 1,024 A100 (dgx-a100 x 128, tp8 pp16 dp8, gb 1536), full fidelity, 1f1b", 1024,
       false,
       [fp16_2048] {
         return run_plan(plan_yaml("{preset: dgx-a100, nodes: 128}", "gpt3-175b", fp16_2048,
                                   "{name: p, tp: 8, pp: 16, dp: 8, micro_batch: 1, recompute: full}"),
                         plan::Fidelity::full);
       }},
      {"gpt3-175b-1024-interleaved", "the same, interleaved v2", 1024, false,
       [fp16_2048] {
         return run_plan(plan_yaml("{preset: dgx-a100, nodes: 128}", "gpt3-175b", fp16_2048,
                                   "{name: p, tp: 8, pp: 16, dp: 8, micro_batch: 1, recompute: full, schedule: interleaved, v: 2}"),
                         plan::Fidelity::full);
       }},
      {"llama3-405b-4096", "Llama 3 405B on 4,096 H100 (dgx-h100 x 512, tp8 pp16 dp32, 512 x 8192 tokens)", 4096, false,
       [] {
         return run_plan(plan_yaml("{preset: dgx-h100, nodes: 512}", "llama-3-405b", "{seq_len: 8192, global_batch: 512}",
                                   "{name: p, tp: 8, pp: 16, dp: 32, micro_batch: 1, recompute: selective, "
                                   "sequence_parallel: true, distributed_optimizer: true}"),
                         plan::Fidelity::automatic);
       }},
      {"llama3-405b-16384", "Llama 3 405B on 16,384 H100 (dgx-h100 x 2,048, tp8 pp16 dp128, 2,048 x 8192 tokens)", 16384,
       false,
       [] {
         return run_plan(plan_yaml("{preset: dgx-h100, nodes: 2048}", "llama-3-405b", "{seq_len: 8192, global_batch: 2048}",
                                   "{name: p, tp: 8, pp: 16, dp: 128, micro_batch: 1, recompute: selective, "
                                   "sequence_parallel: true, distributed_optimizer: true}"),
                         plan::Fidelity::automatic);
       }},
      {"llama3-405b-16384-ddp", "the same without the distributed optimizer: 8 rails' DP groups reduce each bucket at once",
       16384, false,
       [] {
         return run_plan(plan_yaml("{preset: dgx-h100, nodes: 2048}", "llama-3-405b", "{seq_len: 8192, global_batch: 2048}",
                                   "{name: p, tp: 8, pp: 16, dp: 128, micro_batch: 1, recompute: selective, "
                                   "sequence_parallel: true}"),
                         plan::Fidelity::automatic);
       }},
      {"collective-128-nodes", "collective --hardware dgx-h100 --nodes 128 --op all_reduce -b 1M -e 8G", 1024, false,
       [] { return run_collective(128); }},
      {"collective-1024-nodes", "collective --hardware dgx-h100 --nodes 1024 --op all_reduce -b 1M -e 8G", 8192, true,
       [] { return run_collective(1024); }},
      {"sweep-7b", "sweep of scenarios/sweep_llama2_7b_dgx_a100.yaml, one thread", 8, false, run_sweep_case},
      {"calibrate-16", "collective --calibrate on the 16-rank GCP H100 log (dgx-h100 x 2, 31 sizes)", 16, false,
       run_calibration_case},
  };
}

struct Measured {
  CaseOutput out;
  double cpu_s = 0, wall_s = 0;
  std::int64_t peak_rss_bytes = 0;
  std::string error;
};

// Runs `c` in a child; the child writes its CaseOutput (or its error) to a pipe.
Measured measure(const ScaleCase& c) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("bench scale: pipe: ") + std::strerror(errno));
  const auto began = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error(std::string("bench scale: fork: ") + std::strerror(errno));
  if (child == 0) {
    close(fds[0]);
    std::string line;
    try {
      const CaseOutput o = c.run();
      line = "ok " + std::to_string(o.events) + " " + std::to_string(o.result) + " " + o.result_unit + "\n";
    } catch (const std::exception& e) {
      line = std::string("error ") + e.what() + "\n";
    }
    const ssize_t written = write(fds[1], line.data(), line.size());
    _exit(written == static_cast<ssize_t>(line.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  Measured m;
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  m.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
            static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  m.peak_rss_bytes = static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
  std::istringstream in(text);
  std::string tag;
  in >> tag;
  if (tag == "ok") {
    in >> m.out.events >> m.out.result;
    std::getline(in >> std::ws, m.out.result_unit);
  } else {
    std::getline(in >> std::ws, m.error);
    if (m.error.empty()) m.error = "the case's process ended without a result (signal " + std::to_string(WTERMSIG(status)) + ")";
  }
  return m;
}

// The growth curves issue 20 asks for: one plan made larger along one axis at a time, so that the
// exponent of CPU time and memory in that axis can be read off (growth_exponents()).
std::vector<ScaleCase> growth_cases() {
  std::vector<ScaleCase> out;
  // GPUs 1,024 -> 16,384, the range issue 20 states its exponent over: the Llama 3 405B plan of
  // the table (tp8 pp16 on dgx-h100 nodes), data parallel over the rest with 16 sequences per
  // replica, so the work per GPU stays the same; its 16,384-GPU point is the table's
  // llama3-405b-16384. (A DP-only growth, Llama-2 13B at tp8 and dp 512 on 4,096 GPUs, ran past 10
  // CPU minutes: 512-rank gradient rings.)
  for (const int gpus : {1024, 2048, 4096, 8192, 16384}) {
    const int dp = gpus / 128;
    out.push_back({"growth-gpus-" + std::to_string(gpus), "Llama 3 405B tp8 pp16 dp" + std::to_string(dp) + " on dgx-h100 x " +
                       std::to_string(gpus / 8) + ", 16 sequences per replica", gpus, false,
                   [gpus, dp] {
                     return run_plan(plan_yaml("{preset: dgx-h100, nodes: " + std::to_string(gpus / 8) + "}", "llama-3-405b",
                                               "{seq_len: 8192, global_batch: " + std::to_string(16 * dp) + "}",
                                               "{name: p, tp: 8, pp: 16, dp: " + std::to_string(dp) +
                                                   ", micro_batch: 1, recompute: selective, sequence_parallel: true, "
                                                   "distributed_optimizer: true}"),
                                     plan::Fidelity::automatic);
                   },
                   "gpus", static_cast<double>(gpus)});
  }
  // Microbatches 8 -> 512: Llama-2 13B tp8 pp2 on 2 dgx-a100, full fidelity.
  for (const int m : {8, 32, 128, 512})
    out.push_back({"growth-microbatches-" + std::to_string(m), "Llama-2 13B tp8 pp2 on dgx-a100 x 2, m " + std::to_string(m), 16,
                   false,
                   [m] {
                     return run_plan(plan_yaml("{preset: dgx-a100, nodes: 2}", "llama-2-13b",
                                               "{seq_len: 4096, global_batch: " + std::to_string(m) + "}",
                                               "{name: p, tp: 8, pp: 2, dp: 1, micro_batch: 1}"),
                                     plan::Fidelity::full);
                   },
                   "microbatches", static_cast<double>(m)});
  // Layers 24 -> 96: a GPT of hidden 4096 on 8 dgx-a100, tp8 pp4 dp2, m 16, full fidelity.
  for (const int layers : {24, 48, 96})
    out.push_back({"growth-layers-" + std::to_string(layers), "GPT h4096 L" + std::to_string(layers) +
                       " tp8 pp4 dp2 on dgx-a100 x 8, m 16", 64, false,
                   [layers] {
                     return run_plan(plan_yaml("{preset: dgx-a100, nodes: 8}",
                                               "{name: gpt, layers: " + std::to_string(layers) +
                                                   ", hidden: 4096, heads: 32, vocab: 50257, max_seq: 2048}",
                                               "{seq_len: 2048, global_batch: 32}",
                                               "{name: p, tp: 8, pp: 4, dp: 2, micro_batch: 1}"),
                                     plan::Fidelity::full);
                   },
                   "layers", static_cast<double>(layers)});
  return out;
}

std::vector<ScaleCase> selected(const std::string& list) {
  auto all = cases();
  std::vector<ScaleCase> out;
  if (list == "default") {
    for (auto& c : all)
      if (!c.slow_today) out.push_back(c);
    return out;
  }
  const auto growth = growth_cases();
  if (list == "growth") return growth;
  all.insert(all.end(), growth.begin(), growth.end());
  if (list == "all") return all;
  std::stringstream names(list);
  for (std::string name; std::getline(names, name, ',');) {
    bool found = false;
    for (auto& c : all)
      if (name == c.name) out.push_back(c), found = true;
    if (!found) {
      std::string known;
      for (const auto& c : all) known += std::string(known.empty() ? "" : ", ") + c.name;
      throw UsageError("--cases: no case '" + name + "'; expected default, growth, all or a comma-separated list of " + known);
    }
  }
  return out;
}

struct Exponent {
  std::string family;
  double from = 0, to = 0, cpu = 0, rss = 0;
};

// Per growth curve that ran: CPU ∝ x^cpu and peak RSS ∝ x^rss between its first and last
// successful points (the slope in log-log).
std::vector<Exponent> growth_exponents(const std::vector<ScaleCase>& todo, const std::vector<Measured>& results) {
  std::vector<Exponent> out;
  for (const char* family : {"gpus", "microbatches", "layers"}) {
    std::optional<std::size_t> first, last;
    for (std::size_t i = 0; i < todo.size(); ++i)
      if (todo[i].family == family && results[i].error.empty() && results[i].cpu_s > 0) (first ? last : first) = i;
    if (!first || !last) continue;
    const double dx = std::log(todo[*last].x / todo[*first].x);
    out.push_back({family, todo[*first].x, todo[*last].x, std::log(results[*last].cpu_s / results[*first].cpu_s) / dx,
                   std::log(static_cast<double>(results[*last].peak_rss_bytes) / static_cast<double>(results[*first].peak_rss_bytes)) / dx});
  }
  return out;
}

// A growth point is the fastest of this many runs.
constexpr int kGrowthRuns = 3;

}  // namespace

int run_bench_scale(bool json, const std::string& list) {
  const auto todo = selected(list);
  std::vector<Measured> results;
  const bool progress = isatty(STDERR_FILENO) != 0;
  for (std::size_t i = 0; i < todo.size(); ++i) {
    if (progress) std::fprintf(stderr, "\rbench scale: case %zu of %zu, %s ...\033[K", i + 1, todo.size(), todo[i].name.c_str());
    // A growth curve's exponent is a ratio of two short runs, so each point is the fastest of
    // three (issue 20's table is "minimum of 3 runs"); the table's cases run once.
    Measured m = measure(todo[i]);
    for (int again = 1; again < (todo[i].family.empty() ? 1 : kGrowthRuns) && m.error.empty(); ++again) {
      const Measured next = measure(todo[i]);
      if (next.error.empty() && next.cpu_s < m.cpu_s) m = next;
    }
    results.push_back(std::move(m));
  }
  if (progress) std::fprintf(stderr, "\r\033[K");
  if (json) {
    report::JsonWriter w(std::cout);
    w.begin_object().key("time_basis").value("child process CPU time (user + system)").key("cases").begin_array();
    for (std::size_t i = 0; i < todo.size(); ++i) {
      const auto& m = results[i];
      w.line_break().begin_object();
      w.key("case").value(todo[i].name).key("gpus").value(todo[i].gpus);
      if (!todo[i].family.empty()) w.key("family").value(todo[i].family).key("x").value(todo[i].x);
      w.key("cpu_s").value(m.cpu_s).key("wall_s").value(m.wall_s).key("peak_rss_bytes").value(m.peak_rss_bytes);
      w.key("events").value(static_cast<std::int64_t>(m.out.events));
      w.key("events_per_cpu_s").value(m.cpu_s > 0 ? static_cast<double>(m.out.events) / m.cpu_s : 0.0);
      w.key("result").value(m.out.result).key("result_unit").value(m.out.result_unit);
      w.key("error");
      if (m.error.empty()) w.null();
      else w.value(m.error);
      w.end_object();
    }
    w.end_array().key("growth").begin_array();
    for (const auto& e : growth_exponents(todo, results))
      w.line_break().begin_object().key("family").value(e.family).key("from").value(e.from).key("to").value(e.to)
          .key("cpu_exponent").value(e.cpu).key("rss_exponent").value(e.rss).end_object();
    w.end_array().end_object();
    std::cout << "\n";
    return 0;
  }
  std::printf("%-27s %7s %10s %10s %10s %12s %12s  %s\n", "case", "GPUs", "CPU", "wall", "peak RSS", "events",
              "events/CPU s", "result");
  for (std::size_t i = 0; i < todo.size(); ++i) {
    const auto& m = results[i];
    if (!m.error.empty()) {
      std::printf("%-27s %7d  failed: %s\n", todo[i].name.c_str(), todo[i].gpus, m.error.c_str());
      continue;
    }
    std::printf("%-27s %7d %8.2f s %8.2f s %6.0f MiB %12llu %10.2f M  %.4g %s\n", todo[i].name.c_str(), todo[i].gpus, m.cpu_s,
                m.wall_s, static_cast<double>(m.peak_rss_bytes) / (1024.0 * 1024.0),
                static_cast<unsigned long long>(m.out.events),
                m.cpu_s > 0 ? static_cast<double>(m.out.events) / m.cpu_s / 1e6 : 0.0, m.out.result, m.out.result_unit.c_str());
    if (m.out.result_unit == "plans" && m.cpu_s > 0) std::printf("%-27s %57s(%.0f plans per CPU minute)\n", "", "", m.out.result * 60 / m.cpu_s);
  }
  std::printf("\n");
  for (const auto& e : growth_exponents(todo, results))
    std::printf("growth over %s %.0f -> %.0f: CPU ~ x^%.2f, peak RSS ~ x^%.2f\n", e.family.c_str(), e.from, e.to, e.cpu, e.rss);
  for (const auto& c : todo) std::printf("  %-27s %s\n", c.name.c_str(), c.what.c_str());
  std::printf("CPU is the case's own process (user + system); wall includes waiting for a core.\n");
  return 0;
}

}  // namespace stepsim::cli
