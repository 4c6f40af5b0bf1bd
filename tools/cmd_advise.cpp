// stepsim advise --hardware HW --model M --seq S --global-batch B: sweep every sensible plan on
// this box and say in plain words which to run, by how much it beats plain data parallel / ZeRO
// and the best 3D plan, why, what would change the answer, and whether tensor parallelism pays
// (sim/sweep/advise.hpp). With --nccl-log, the box's collectives are first fitted to the user's
// own nccl-tests log (comm::calibrate), so the TP verdict rests on the bandwidth they measured.
#include <unistd.h>

#include <iostream>
#include <thread>

#include "hardware/hardware_yaml.hpp"
#include "models/model_yaml.hpp"
#include "sim/comm/calibration.hpp"
#include "sim/plan/simulate.hpp"
#include "sim/sweep/advise.hpp"
#include "tools/cli_common.hpp"
#include "tools/cli_log.hpp"
#include "tools/cli_nccl_log.hpp"
#include "tools/cli_sweep_progress.hpp"
#include "tools/commands.hpp"

namespace stepsim::cli {
namespace {

struct Box {
  std::string hardware;
  hw::ClusterShape shape;
};

plan::Scenario make_scenario(const Box& box, const models::ModelSpec& model, std::int64_t seq, std::int64_t batch) {
  plan::Scenario sc;
  sc.cluster = hw::load_cluster(box.hardware, box.shape);
  sc.model = model;
  sc.training.seq_len = seq;
  sc.training.global_batch = batch;
  // The 16-bit type the GPU has: bf16, or fp16 on GPUs without it (V100).
  if (sc.cluster.gpu.peak.half() == hw::Dtype::fp16) sc.training.precision = plan::Precision::fp16;
  sc.name = model.name + " on " + sc.cluster.name;
  sc.file = "stepsim advise";
  return sc;
}

plan::StepResult simulate_plan(const plan::Scenario& sc, const plan::Strategy& s) {
  plan::SimOptions opt;
  opt.log = cli_log();
  return plan::simulate(sc, s, opt);
}

// Twice the GPUs: fill the server up to the preset's size first, else add as many servers.
std::optional<plan::Scenario> doubled(const Box& box, const plan::Scenario& sc) {
  const hw::Cluster preset = hw::load_cluster(box.hardware, {box.shape.nodes, std::nullopt});
  Box more = box;
  if (sc.cluster.gpus_per_server * 2 <= preset.gpus_per_server) more.shape.gpus_per_node = sc.cluster.gpus_per_server * 2;
  else more.shape.nodes = sc.cluster.servers * 2;
  try {
    return make_scenario(more, sc.model, sc.training.seq_len, sc.training.global_batch);
  } catch (const config::ConfigError&) {
    return std::nullopt;  // the preset cannot grow that way (e.g. no network for more servers)
  }
}

std::vector<sweep::WhatIf> what_ifs(const Box& box, const plan::Scenario& sc, const sweep::SweepOutcome& o,
                                    const sweep::Advice& a) {
  std::vector<sweep::WhatIf> out;
  if (auto more = doubled(box, sc)) {
    more->cluster.comm = sc.cluster.comm;  // collectives fitted to a log stay fitted
    const std::string change = "With " + std::to_string(more->cluster.gpu_count()) + " GPUs (" +
                               std::to_string(more->cluster.servers) + " server" + (more->cluster.servers > 1 ? "s" : "") +
                               ", same global batch)";
    out.push_back(sweep::simulate_what_if(change, *more, o, a, simulate_plan));
  }
  plan::Scenario longer = sc;
  longer.training.seq_len *= 2;
  out.push_back(sweep::simulate_what_if("At seq " + std::to_string(longer.training.seq_len) + " (same global batch)",
                                        longer, o, a, simulate_plan));
  return out;
}

// Fits the cluster's collectives to the log (the cluster has the log's GPUs) and says what the
// fit rests on: the log's largest size, measured and simulated before and after.
sweep::MeasuredComm fit_to_log(plan::Scenario& sc, const comm::NcclLog& log) {
  const auto result = comm::calibrate(sc.cluster, log);
  sc.cluster.comm = result.after;
  std::size_t largest = 0;
  for (std::size_t i = 1; i < log.rows.size(); ++i)
    if (log.rows[i].size_bytes > log.rows[largest].size_bytes) largest = i;
  const comm::NcclLogRow& row = log.rows[largest];
  // Bus bandwidth scales as 1 / time for a fixed size (nccl-tests' busBw = size·factor / time).
  const auto simulated = [&](double us) { return row.busbw_gbps * row.time_us / us; };
  return {log.file, comm::to_string(log.op), log.ranks, row.size_bytes, row.busbw_gbps,
          simulated(result.before_us[largest]), simulated(result.after_us[largest])};
}

}  // namespace

int run_advise(const Args& args) {
  po::options_description options("Options");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.add_options()("hardware", po::value<std::string>()->required(), "hardware preset or YAML file")(
      "model", po::value<std::string>()->required(), "model preset, YAML file or config.json")(
      "seq", po::value<std::int64_t>()->required(), "sequence length (tokens)")(
      "global-batch", po::value<std::int64_t>()->required(), "sequences per optimizer step")(
      "gpus", po::value<int>(), "GPUs per server (default: the preset's)")(
      "nodes", po::value<int>(), "servers (default: the preset's)")(
      "threads", po::value<int>()->default_value(cores), "worker threads (default: the CPU cores)")(
      "nccl-log", po::value<std::string>(),
      "this box's nccl-tests output (all_reduce_perf ...): fit its collectives first, so the TP verdict rests on it")(
      "op", po::value<std::string>(), "with --nccl-log: the collective the log measured, where the file does not say")(
      "json", "print {best, best_zero3, best_3d, tried, fits} as JSON instead of words");
  auto vm = parse_command_line("advise", "--hardware HW --model M --seq S --global-batch B [--gpus N] [--nodes N] [--nccl-log LOG [--op OP]] [--json]",
                               "Sweep every sensible parallel plan on this box and say which to run and why.", options,
                               {}, args);
  if (!vm) return 0;
  const auto positive = [&](const char* key) {
    if (vm->count(key) && (*vm)[key].as<int>() < 1) throw UsageError(std::string("--") + key + ": expected at least 1");
  };
  for (const char* key : {"gpus", "nodes", "threads"}) positive(key);
  if ((*vm)["seq"].as<std::int64_t>() < 1 || (*vm)["global-batch"].as<std::int64_t>() < 1)
    throw UsageError("--seq and --global-batch: expected positive integers");
  Box box{(*vm)["hardware"].as<std::string>(), {}};
  if (vm->count("gpus")) box.shape.gpus_per_node = (*vm)["gpus"].as<int>();
  if (vm->count("nodes")) box.shape.nodes = (*vm)["nodes"].as<int>();
  std::optional<comm::NcclLog> log;
  if (vm->count("nccl-log")) {
    log = comm::read_nccl_log((*vm)["nccl-log"].as<std::string>());
    complete_nccl_log(*vm, *log);
    box.shape = comm::shape_for(*log);  // the box is the one the log was measured on
  }
  const models::ModelSpec model = models::load_model((*vm)["model"].as<std::string>());
  warn_unmodelled(model);
  auto sc = make_scenario(box, model, (*vm)["seq"].as<std::int64_t>(),
                                (*vm)["global-batch"].as<std::int64_t>());

  std::optional<sweep::MeasuredComm> measured;
  if (log) measured = fit_to_log(sc, *log);

  sweep::RunOptions run;
  run.threads = (*vm)["threads"].as<int>();
  SweepProgress progress(isatty(STDERR_FILENO) != 0, run.threads);
  run.on_progress = [&progress](const sweep::Progress& p) { progress.update(p); };
  InterruptFlag interrupt;
  run.stop = &interrupt.flag();
  const auto outcome = sweep::run_sweep(sc, sweep::enumerate_plans(sc, {}), run, simulate_plan);
  progress.finish(outcome.results.size());
  const auto advice = sweep::choose_plans(outcome);
  // Nothing fits on the GPUs alone: try moving the optimizer to the host (DeepSpeed ZeRO-Offload).
  std::optional<sweep::OffloadAdvice> offload;
  if (!advice.best && !outcome.interrupted) {
    SweepProgress second(isatty(STDERR_FILENO) != 0, run.threads);
    run.on_progress = [&second](const sweep::Progress& p) { second.update(p); };
    offload = sweep::OffloadAdvice{sweep::run_sweep(sc, sweep::enumerate_plans(sc, sweep::offload_space()), run, simulate_plan), {}};
    second.finish(offload->outcome.results.size());
    offload->best = sweep::choose_plans(offload->outcome).best;
    if (offload->outcome.interrupted) return 130;
  }
  if (vm->count("json")) sweep::write_advice_json(std::cout, outcome, advice, measured, offload);
  else
    std::cout << sweep::advise_text(sc, outcome, advice,
                                    outcome.interrupted ? std::vector<sweep::WhatIf>{} : what_ifs(box, sc, outcome, advice), measured,
                                    offload);
  return outcome.interrupted ? 130 : 0;
}

}  // namespace stepsim::cli
