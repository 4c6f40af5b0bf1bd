#include "sim/report/comparison.hpp"

#include <algorithm>
#include <functional>

#include "sim/report/format.hpp"
#include "sim/report/text_table.hpp"

namespace stepsim::report {

std::optional<std::size_t> best_index(const std::vector<plan::StepResult>& results) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].fits) continue;
    if (!best || results[i].tokens_per_s > results[*best].tokens_per_s) best = i;
  }
  return best;
}

namespace {

double share(double seconds, const plan::StepResult& r) { return r.step_time_s > 0 ? seconds / r.step_time_s : 0; }

// "31.2 ms (7.6 %)": a time and its share of the step.
std::string time_and_share(double seconds, const plan::StepResult& r) {
  return milliseconds(seconds) + " (" + percent(share(seconds, r)) + ")";
}

std::string layout(const plan::StepResult& r) {
  return "tp" + std::to_string(r.tp) + " pp" + std::to_string(r.pp) + " dp" + std::to_string(r.dp) +
         (r.ep > 1 ? " ep" + std::to_string(r.ep) + (r.etp < r.tp ? " etp" + std::to_string(r.etp) : "") : "") + (r.cp > 1 ? " cp" + std::to_string(r.cp) : "") + " z" + std::to_string(r.zero_stage) +
         (r.offload_optimizer ? (r.offload_param ? " offload+params" : " offload") : "");
}

// "1f1b, m=64", and where the stages hold different numbers of layers, each stage's:
// "1f1b, m=64, layers 3/4/4/4/4/4/4/5".
std::string schedule_text(const plan::StepResult& r) {
  std::string s = r.schedule.empty() ? "-" : r.schedule;
  if (r.v > 1) s += " v" + std::to_string(r.v);
  s += ", m=" + std::to_string(r.microbatches);
  if (std::adjacent_find(r.stage_layers.begin(), r.stage_layers.end(), std::not_equal_to<>()) != r.stage_layers.end()) {
    s += ", layers ";
    for (std::size_t i = 0; i < r.stage_layers.size(); ++i) s += (i ? "/" : "") + std::to_string(r.stage_layers[i]);
  }
  return s;
}

std::string fits_text(const plan::StepResult& r) {
  if (r.fits) return "yes";
  // Short by: peak plus the plan's documented reserve (CUDA context, fragmentation) over capacity.
  const auto needed = r.peak_memory_bytes + r.memory_at_peak.reserve - r.memory_capacity_bytes;
  if (needed > 0) return "NO, short " + gibibytes(static_cast<double>(needed));
  return "NO, host RAM short " + gibibytes(static_cast<double>(r.host_memory_bytes - r.host_ram_bytes));
}

using Cell = std::string (*)(const plan::StepResult&);
struct MetricRow {
  const char* label;
  Cell cell;
  /// Shown only when some plan has this dimension (EP, CP).
  enum class Only { always, expert_parallel, context_parallel, fp8, offload, grad_accumulation } only = Only::always;
};

const std::vector<MetricRow>& metric_rows() {
  static const std::vector<MetricRow> kRows{
      {"parallelism", [](const plan::StepResult& r) { return layout(r); }},
      {"schedule", [](const plan::StepResult& r) { return schedule_text(r); }},
      {"GPUs", [](const plan::StepResult& r) { return std::to_string(r.gpus); }},
      {"step time", [](const plan::StepResult& r) { return milliseconds(r.step_time_s); }},
      {"throughput", [](const plan::StepResult& r) { return with_thousands(r.tokens_per_s) + " tokens/s"; }},
      {"model FLOP/s per GPU", [](const plan::StepResult& r) { return fixed(r.tflops_per_gpu, 1) + " TFLOP/s"; }},
      {"MFU", [](const plan::StepResult& r) { return percent(r.mfu); }},
      {"HFU", [](const plan::StepResult& r) { return percent(r.hfu); }},
      {"MFU of the FP8 peak", [](const plan::StepResult& r) { return r.mfu_fp8_peak > 0 ? percent(r.mfu_fp8_peak) : "-"; },
       MetricRow::Only::fp8},
      {"FP8 casts and amax", [](const plan::StepResult& r) { return r.mfu_fp8_peak > 0 ? time_and_share(r.fp8_cast_s, r) : "-"; },
       MetricRow::Only::fp8},
      {"gradient accumulation", [](const plan::StepResult& r) { return time_and_share(r.grad_accumulation_s, r); },
       MetricRow::Only::grad_accumulation},
      {"pipeline bubble", [](const plan::StepResult& r) { return percent(r.bubble_fraction); }},
      {"exposed TP comm", [](const plan::StepResult& r) { return time_and_share(r.exposed_comm_s.tp, r); }},
      {"exposed PP comm", [](const plan::StepResult& r) { return time_and_share(r.exposed_comm_s.pp, r); }},
      {"exposed DP comm", [](const plan::StepResult& r) { return time_and_share(r.exposed_comm_s.dp, r); }},
      {"exposed ZeRO comm", [](const plan::StepResult& r) { return time_and_share(r.exposed_comm_s.zero, r); }},
      {"exposed EP comm", [](const plan::StepResult& r) { return time_and_share(r.exposed_comm_s.ep, r); },
       MetricRow::Only::expert_parallel},
      {"exposed CP comm", [](const plan::StepResult& r) { return time_and_share(r.exposed_comm_s.cp, r); },
       MetricRow::Only::context_parallel},
      {"sync stalls", [](const plan::StepResult& r) { return time_and_share(r.sync_stall_s, r); }},
      {"GPU waiting for host", [](const plan::StepResult& r) { return time_and_share(r.host_bound_s, r); }},
      {"GPU waiting for offload", [](const plan::StepResult& r) { return time_and_share(r.offload_s, r); },
       MetricRow::Only::offload},
      {"peak memory / capacity", [](const plan::StepResult& r) {
         return fixed(static_cast<double>(r.peak_memory_bytes) / (1 << 30), 1) + " / " +
                gibibytes(static_cast<double>(r.memory_capacity_bytes));
       }},
      {"fits", [](const plan::StepResult& r) { return fits_text(r); }},
      {"host memory per server", [](const plan::StepResult& r) {
         if (!r.offload_optimizer) return std::string("-");
         const std::string need = gibibytes(static_cast<double>(r.host_memory_bytes));
         return r.host_ram_bytes > 0 ? need + " / " + gibibytes(static_cast<double>(r.host_ram_bytes)) : need + " (RAM not stated)";
       },
       MetricRow::Only::offload},
  };
  return kRows;
}

}  // namespace

std::string format_comparison(const std::vector<plan::StepResult>& results, const ComparisonOptions& options) {
  const auto best = options.mark_best ? best_index(results) : std::nullopt;
  std::vector<std::string> header{"strategy"};
  std::vector<Align> align{Align::left};
  for (std::size_t i = 0; i < results.size(); ++i) {
    header.push_back((best == i ? "*" : "") + results[i].name);
    align.push_back(Align::right);
  }
  TextTable table(header, align);
  const bool any_ep = std::any_of(results.begin(), results.end(), [](const plan::StepResult& r) { return r.ep > 1; });
  const bool any_cp = std::any_of(results.begin(), results.end(), [](const plan::StepResult& r) { return r.cp > 1; });
  const bool any_fp8 = std::any_of(results.begin(), results.end(), [](const plan::StepResult& r) { return r.mfu_fp8_peak > 0; });
  const bool any_offload = std::any_of(results.begin(), results.end(), [](const plan::StepResult& r) { return r.offload_optimizer; });
  const bool any_accumulation =
      std::any_of(results.begin(), results.end(), [](const plan::StepResult& r) { return r.grad_accumulation_s > 0; });
  for (const auto& row : metric_rows()) {
    if ((row.only == MetricRow::Only::expert_parallel && !any_ep) || (row.only == MetricRow::Only::context_parallel && !any_cp) ||
        (row.only == MetricRow::Only::fp8 && !any_fp8) || (row.only == MetricRow::Only::offload && !any_offload) ||
        (row.only == MetricRow::Only::grad_accumulation && !any_accumulation))
      continue;
    std::vector<std::string> cells{row.label};
    for (const auto& r : results) cells.push_back(row.cell(r));
    table.add_row(std::move(cells));
  }
  std::string out = table.render();
  if (best) out += "* best: highest tokens/s among the plans that fit in memory\n";
  else if (options.mark_best && !results.empty()) out += "no plan fits in memory\n";
  return out;
}

std::vector<Loss> losses_of(const plan::StepResult& r) {
  std::vector<Loss> losses{
      {"pipeline bubbles", r.bubble_fraction},
      {"exposed TP communication", share(r.exposed_comm_s.tp, r)},
      {"exposed pipeline send/recv", share(r.exposed_comm_s.pp, r)},
      {"exposed DP gradient reduction", share(r.exposed_comm_s.dp, r)},
      {"exposed ZeRO gathers and scatters", share(r.exposed_comm_s.zero, r)},
      {"exposed expert all-to-all", share(r.exposed_comm_s.ep, r)},
      {"exposed ring-attention K/V exchange", share(r.exposed_comm_s.cp, r)},
      {"sync stalls waiting for slower peers", share(r.sync_stall_s, r)},
      {"GPU idle while the host issues kernels", share(r.host_bound_s, r)},
      {"GPU idle while the optimizer is offloaded (PCIe copies, CPU step)", share(r.offload_s, r)},
  };
  std::stable_sort(losses.begin(), losses.end(), [](const Loss& a, const Loss& b) { return a.fraction > b.fraction; });
  return losses;
}

}  // namespace stepsim::report
