#include "sim/sweep/sweep_table.hpp"

#include <algorithm>
#include <cmath>

#include "sim/report/format.hpp"
#include "sim/report/result_formats.hpp"
#include "sim/report/text_table.hpp"

namespace stepsim::sweep {
namespace {

using report::Align;

std::string share(double seconds, const plan::StepResult& r) {
  return report::percent(r.step_time_s > 0 ? seconds / r.step_time_s : 0);
}

std::string memory(const plan::StepResult& r) {
  return report::fixed(static_cast<double>(r.peak_memory_bytes) / (1 << 30), 1) + " / " +
         report::gibibytes(static_cast<double>(r.memory_capacity_bytes));
}

std::vector<std::string> row(std::size_t rank, const plan::StepResult& r, bool with_ep, bool with_cp, bool with_offload) {
  std::vector<std::string> cells{std::to_string(rank),
          r.name,
          report::with_thousands(r.tokens_per_s),
          report::milliseconds(r.step_time_s),
          report::fixed(r.tflops_per_gpu, 1),
          report::percent(r.mfu),
          report::percent(r.hfu),
          std::to_string(r.microbatches),
          report::percent(r.bubble_fraction),
          share(r.exposed_comm_s.tp, r),
          share(r.exposed_comm_s.pp, r),
          share(r.exposed_comm_s.dp, r),
          share(r.exposed_comm_s.zero, r),
          share(r.sync_stall_s, r),
          share(r.host_bound_s, r),
          memory(r)};
  if (with_offload) cells.insert(cells.begin() + 15, share(r.offload_s, r));
  if (with_cp) cells.insert(cells.begin() + 13, share(r.exposed_comm_s.cp, r));
  if (with_ep) cells.insert(cells.begin() + 13, share(r.exposed_comm_s.ep, r));
  return cells;
}

std::string shard_text(const SweepOutcome& o) {
  // All slices merged is the whole sweep: print it as a single run would.
  if (o.shard_count == 1 || static_cast<int>(o.shards.size()) == o.shard_count) return "";
  std::string list;
  for (int k : o.shards) list += (list.empty() ? "" : ",") + std::to_string(k);
  return " (shard" + std::string(o.shards.size() > 1 ? "s " : " ") + list + " of " + std::to_string(o.shard_count) + ")";
}

std::string clock(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  if (s < 60) return std::to_string(s) + " s";
  return std::to_string(s / 60) + " min " + (s % 60 < 10 ? "0" : "") + std::to_string(s % 60) + " s";
}

}  // namespace

std::string format_ranking(const SweepOutcome& outcome, std::size_t top) {
  const auto order = ranking(outcome);
  if (order.empty()) return "no plan fits in memory\n";
  // The EP, CP and offload columns only when a plan has that dimension, as in the comparison table.
  const bool with_ep = std::any_of(outcome.results.begin(), outcome.results.end(),
                                   [](const PlanResult& p) { return p.result.ep > 1; });
  const bool with_cp = std::any_of(outcome.results.begin(), outcome.results.end(),
                                   [](const PlanResult& p) { return p.result.cp > 1; });
  const bool with_offload = std::any_of(outcome.results.begin(), outcome.results.end(),
                                        [](const PlanResult& p) { return p.result.offload_optimizer; });
  std::vector<std::string> header{"#",       "plan",    "tokens/s", "step",      "TFLOP/s/GPU", "MFU",  "HFU", "m",
                                  "bubble",  "TP comm", "PP comm",  "DP comm",   "ZeRO comm",   "stalls", "host",
                                  "peak memory"};
  if (with_offload) header.insert(header.begin() + 15, "offload");
  if (with_cp) header.insert(header.begin() + 13, "CP comm");
  if (with_ep) header.insert(header.begin() + 13, "EP comm");
  std::vector<Align> align(header.size(), Align::right);
  align[1] = Align::left;
  report::TextTable table(header, align);
  for (std::size_t i = 0; i < order.size() && i < top; ++i) table.add_row(row(i + 1, outcome.results[order[i]].result, with_ep, with_cp, with_offload));
  return table.render() +
         "comm and stalls: exposed time as a share of the step; host: GPU idle while its host thread issues "
         "kernels;" + std::string(with_offload ? " offload: GPU idle while ZeRO-Offload copies or the CPU steps;" : "") +
         " m: microbatches per step; ranked by tokens/s\n";
}

std::string format_counts(const SweepOutcome& o) {
  std::string out = report::with_thousands(static_cast<double>(o.tried)) + " plans tried" + shard_text(o) + ": " +
                    report::with_thousands(static_cast<double>(o.invalid)) + " invalid, " +
                    report::with_thousands(static_cast<double>(o.results.size())) + " simulated (" +
                    report::with_thousands(static_cast<double>(o.out_of_memory())) + " out of memory, " +
                    report::with_thousands(static_cast<double>(o.fits())) + " fit)";
  if (o.not_run > 0)
    out += "; interrupted: " + report::with_thousands(static_cast<double>(o.not_run)) + " not run";
  return out + "\n";
}

void write_ranking_csv(std::ostream& out, const SweepOutcome& outcome) {
  out << "rank," << report::csv_header() << "\n";
  const auto order = ranking(outcome);
  for (std::size_t i = 0; i < order.size(); ++i)
    out << i + 1 << "," << report::csv_row(outcome.results[order[i]].result) << "\n";
  for (const PlanResult& p : outcome.results)
    if (!p.result.fits) out << "," << report::csv_row(p.result) << "\n";
}

std::string format_progress(std::size_t done, std::size_t total, double elapsed_s, std::size_t width,
                            const std::string& unit) {
  const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const auto filled = static_cast<std::size_t>(fraction * static_cast<double>(width));
  std::string bar = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0;
  std::string eta = "ETA --";
  if (rate > 0) eta = "ETA " + clock(static_cast<double>(total - done) / rate);
  return bar + "  " + std::to_string(done) + "/" + std::to_string(total) + "  " + report::fixed(rate, 1) + " " + unit +
         "/s  " + eta;
}

}  // namespace stepsim::sweep
