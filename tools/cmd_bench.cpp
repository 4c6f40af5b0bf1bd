// `stepsim bench engine [--json]` (and `bench scale`, cmd_bench_scale.cpp): how fast the simulation core is, on synthetic inputs sized like
// a large run, so a slowdown in sim/core shows up as a number rather than as a slow sweep.
//
// (a) 2,000,000 compute tasks on 1,024 streams, each task depending on up to two random earlier
//     tasks (fixed seed): build time and run time; tasks_per_s = tasks / run CPU time.
// (b) 100,000 flows of random sizes on a 1,024-host two-level fat tree with full bisection
//     (32 leaves x 32 hosts, 32 spines, 25 GB/s links, 1 us latency, the spine picked per flow by a
//     hash as ECMP would), 1,000 chains of 100 flows so that at most 1,000 are active and a new one
//     starts when one finishes: seconds to run them all.
// (c) peak resident memory of the process (getrusage ru_maxrss).
// Target on one core, Release build: (a) >= 5 million tasks/s, (b) <= 10 s.
// Times are CPU time of this process (CLOCK_PROCESS_CPUTIME_ID) as well as wall time: on a shared
// machine wall time includes waiting for a core, so CPU time is the honest one-core figure, and the
// JSON keys tasks_per_s and flow_churn_s use it. --tasks and --flows shrink the inputs (profiling).
#include <sys/resource.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "sim/core/engine.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"

namespace stepsim::cli {

namespace {

using core::Engine;
using Clock = std::chrono::steady_clock;

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// Wall and CPU seconds since construction.
struct Stopwatch {
  Clock::time_point wall_start = Clock::now();
  double cpu_start = cpu_seconds();
  double wall() const { return std::chrono::duration<double>(Clock::now() - wall_start).count(); }
  double cpu() const { return cpu_seconds() - cpu_start; }
};

struct Phase {
  double wall_s = 0;
  double cpu_s = 0;
  static Phase of(const Stopwatch& w) { return {w.wall(), w.cpu()}; }
};

struct DagResult {
  std::size_t tasks = 0;
  Phase build, run;
};

DagResult bench_task_dag(std::uint32_t kTasks) {
  constexpr std::uint32_t kStreams = 1'024, kStreamsPerDevice = 8;
  const Stopwatch build;
  Engine e;
  std::vector<core::StreamId> streams;
  for (std::uint32_t s = 0; s < kStreams; ++s) {
    static_assert(kStreams % kStreamsPerDevice == 0);
    if (s % kStreamsPerDevice == 0) e.add_device();
    streams.push_back(e.add_stream(core::DeviceId{s / kStreamsPerDevice}, core::StreamKind::compute));
  }
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::uint32_t> stream_of(0, kStreams - 1), deps_of(0, 2), back(1, 50'000);
  std::uniform_int_distribution<std::int64_t> duration_ps(1'000, 1'000'000);
  for (std::uint32_t i = 0; i < kTasks; ++i) {
    const core::TaskId t = e.add_compute(streams[stream_of(rng)], core::Duration{duration_ps(rng)});
    for (std::uint32_t k = deps_of(rng); k > 0 && i > 0; --k) {
      const std::uint32_t distance = std::min(back(rng), i);
      e.add_dependency(core::TaskId{i - distance}, t);
    }
  }
  DagResult r;
  r.tasks = e.task_count();
  r.build = Phase::of(build);
  const Stopwatch run;
  e.run();
  r.run = Phase::of(run);
  return r;
}

// Two-level fat tree: host h is on leaf h / kHosts; every leaf links to every spine. Directed links,
// so a host has an uplink and a downlink, and each leaf-spine pair one link each way.
class FatTree {
 public:
  static constexpr std::uint32_t kLeaves = 32, kHostsPerLeaf = 32, kSpines = 32;
  static constexpr std::uint32_t kHosts = kLeaves * kHostsPerLeaf;

  explicit FatTree(Engine& e) {
    constexpr double kLinkBytesPerS = 25e9;
    for (std::uint32_t h = 0; h < kHosts; ++h) host_up_.push_back(e.add_link(kLinkBytesPerS));
    for (std::uint32_t h = 0; h < kHosts; ++h) host_down_.push_back(e.add_link(kLinkBytesPerS));
    for (std::uint32_t i = 0; i < kLeaves * kSpines; ++i) leaf_up_.push_back(e.add_link(kLinkBytesPerS));
    for (std::uint32_t i = 0; i < kLeaves * kSpines; ++i) spine_down_.push_back(e.add_link(kLinkBytesPerS));
  }

  /// The route from host src to host dst (src != dst) through `spine` when they are on two leaves.
  std::vector<core::LinkId> route(std::uint32_t src, std::uint32_t dst, std::uint32_t spine) const {
    const std::uint32_t leaf_src = src / kHostsPerLeaf, leaf_dst = dst / kHostsPerLeaf;
    if (leaf_src == leaf_dst) return {host_up_[src], host_down_[dst]};
    return {host_up_[src], leaf_up_[leaf_src * kSpines + spine], spine_down_[spine * kLeaves + leaf_dst],
            host_down_[dst]};
  }

 private:
  std::vector<core::LinkId> host_up_, host_down_, leaf_up_, spine_down_;
};

/// ECMP: a switch hashes the flow's 5-tuple (here: source, destination and the flow's number, which
/// stands in for its port) to pick one of the equal-cost spines.
std::uint32_t ecmp_spine(std::uint32_t src, std::uint32_t dst, std::uint32_t flow) {
  std::uint64_t h = (std::uint64_t{src} << 40) ^ (std::uint64_t{dst} << 20) ^ flow;
  h ^= h >> 33;  // splitmix64 finalizer: cheap, and every input bit reaches the low bits
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return static_cast<std::uint32_t>(h % FatTree::kSpines);
}

struct ChurnResult {
  std::size_t flows = 0;
  Phase build, run;
  std::uint64_t rate_updates = 0;
  std::int64_t makespan_ps = 0;  ///< same input, same answer: a speed-up must not move it
};

ChurnResult bench_flow_churn(std::uint32_t kFlows) {
  const std::uint32_t kChains = std::min<std::uint32_t>(1'000, kFlows);
  const Stopwatch build;
  Engine e;
  const FatTree tree(e);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::uint32_t> host(0, FatTree::kHosts - 1);
  std::uniform_int_distribution<std::int64_t> bytes(1'000, 16'000'000);
  std::vector<core::TaskId> last(kChains);
  for (std::uint32_t i = 0; i < kFlows; ++i) {
    const std::uint32_t src = host(rng);
    std::uint32_t dst = host(rng);
    if (dst == src) dst = (dst + 1) % FatTree::kHosts;
    const core::TaskId t = e.add_transfer(tree.route(src, dst, ecmp_spine(src, dst, i)), bytes(rng), core::microseconds(1));
    if (i >= kChains) e.add_dependency(last[i % kChains], t);
    last[i % kChains] = t;
  }
  ChurnResult r;
  r.flows = kFlows;
  r.build = Phase::of(build);
  const Stopwatch run;
  const core::RunStats stats = e.run();
  r.rate_updates = stats.rate_updates;
  r.makespan_ps = stats.makespan.ps;
  r.run = Phase::of(run);
  return r;
}

std::int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

void print_text(const DagResult& dag, const ChurnResult& churn, std::int64_t rss) {
  std::printf("times are CPU / wall seconds; CPU time is the one-core figure (wall includes waiting for a core)\n");
  std::printf("task DAG      %zu compute tasks on 1024 streams (8 per device), 0-2 random dependencies each\n",
              dag.tasks);
  std::printf("  build       %10.3f s cpu %10.3f s wall\n", dag.build.cpu_s, dag.build.wall_s);
  std::printf("  run         %10.3f s cpu %10.3f s wall\n", dag.run.cpu_s, dag.run.wall_s);
  std::printf("  tasks_per_s %10.3f M tasks/s per CPU second (target >= 5); %.3f M per wall second\n",
              static_cast<double>(dag.tasks) / dag.run.cpu_s / 1e6, static_cast<double>(dag.tasks) / dag.run.wall_s / 1e6);
  std::printf("flow churn    %zu flows of 1 kB-16 MB, <= 1000 active; fat tree, full bisection: 32 leaves x 32 hosts,\n"
              "              32 spines, 25 GB/s links, spine by ECMP hash\n", churn.flows);
  std::printf("  build       %10.3f s cpu %10.3f s wall\n", churn.build.cpu_s, churn.build.wall_s);
  std::printf("  run         %10.3f s cpu %10.3f s wall   (target <= 10 s)\n", churn.run.cpu_s, churn.run.wall_s);
  std::printf("  rate solves %10llu\n", static_cast<unsigned long long>(churn.rate_updates));
  std::printf("  makespan    %10lld ps (simulated)\n", static_cast<long long>(churn.makespan_ps));
  std::printf("peak RSS      %10.1f MiB\n", static_cast<double>(rss) / (1024.0 * 1024.0));
}

void print_json(const DagResult& dag, const ChurnResult& churn, std::int64_t rss) {
  std::printf("{\"tasks_per_s\": %.0f, \"tasks_per_wall_s\": %.0f, \"flow_churn_s\": %.3f, "
              "\"flow_churn_wall_s\": %.3f, \"rate_solves\": %llu, \"peak_rss_bytes\": %lld, "
              "\"time_basis\": \"process CPU time\"}\n",
              static_cast<double>(dag.tasks) / dag.run.cpu_s, static_cast<double>(dag.tasks) / dag.run.wall_s,
              churn.run.cpu_s, churn.run.wall_s, static_cast<unsigned long long>(churn.rate_updates),
              static_cast<long long>(rss));
}

}  // namespace

int run_bench_scale(bool json, const std::string& cases);  // cmd_bench_scale.cpp

int run_bench(const Args& args) {
  po::options_description options("Options");
  options.add_options()("json", "print one JSON object instead of a table")(
      "cases", po::value<std::string>()->default_value("default"),
      "scale: default (the cases that finish in about a minute), growth (one plan grown over GPUs, microbatches and layers, each point the fastest of 3 runs), all, or a comma-separated list")(
      "tasks", po::value<std::uint32_t>()->default_value(2'000'000), "compute tasks in the task-DAG benchmark")(
      "flows", po::value<std::uint32_t>()->default_value(100'000), "flows in the flow-churn benchmark")(
      "what", po::value<std::string>()->required(), "what to measure: engine or scale");
  po::positional_options_description positional;
  positional.add("what", 1);
  const auto vm = parse_command_line("bench", "engine|scale [--cases LIST] [--json]",
                                     "engine: the simulation engine's speed on synthetic task graphs and flows.\n"
                                     "scale: CPU time, peak memory and events of the large cases issue 20 measures,\n"
                                     "each in a process of its own.",
                                     options, positional, args);
  if (!vm) return 0;
  const std::string what = (*vm)["what"].as<std::string>();
  if (what == "scale") return run_bench_scale(vm->count("json") > 0, (*vm)["cases"].as<std::string>());
  if (what != "engine")
    throw UsageError("stepsim bench: unknown benchmark '" + what + "'; expected 'engine' or 'scale' (see stepsim bench --help)");
  const DagResult dag = bench_task_dag((*vm)["tasks"].as<std::uint32_t>());
  const ChurnResult churn = bench_flow_churn((*vm)["flows"].as<std::uint32_t>());
  const std::int64_t rss = peak_rss_bytes();
  if (vm->count("json"))
    print_json(dag, churn, rss);
  else
    print_text(dag, churn, rss);
  return 0;
}

}  // namespace stepsim::cli
