#include "tools/commands.hpp"

namespace stepsim::cli {

// One declaration and one row per command; a command that does not work yet is not listed.
int run_version(const Args& args);
int run_run(const Args& args);
int run_report(const Args& args);
int run_model(const Args& args);
int run_bench(const Args& args);
int run_collective(const Args& args);
int run_topo(const Args& args);
int run_bubble(const Args& args);
int run_validate(const Args& args);
int run_sweep(const Args& args);
int run_advise(const Args& args);

const std::vector<Command>& all_commands() {
  static const std::vector<Command> kCommands{
      {"version", "print the version", run_version},
      {"run", "simulate one training step of each strategy in a scenario", run_run},
      {"report", "the same, as one self-contained HTML page with plots (report SCENARIO -o FILE)", run_report},
      {"model", "show a model's parameters, FLOPs, per-layer ops and memory", run_model},
      {"bench", "measure the engine (bench engine) and the large cases (bench scale)", run_bench},
      {"collective", "nccl-tests on simulated hardware; calibrate from a real log", run_collective},
      {"topo", "show a hardware topology, or import nvidia-smi topo -m", run_topo},
      {"bubble", "the pipeline bubble, simulated and drawn, beside the textbook formula", run_bubble},
      {"validate", "simulate published training runs and compare with their measured figures", run_validate},
      {"sweep", "try every sensible parallel plan of a scenario and rank those that fit", run_sweep},
      {"advise", "which plan to run on this box, by how much it wins, and why", run_advise},
  };
  return kCommands;
}

}  // namespace stepsim::cli
