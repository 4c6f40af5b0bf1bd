// Chrome trace JSON (the "Trace Event Format") of one simulated step, for ui.perfetto.dev and
// chrome://tracing. Layout (documented in README.md (Result formats), checked by chrome_trace_test.cpp):
// - one process per GPU (pid = rank), named "rank R: server S GPU G (tp T, pp P, dp D)";
// - one thread per stream (tid = stream index), named by RankInfo::streams;
// - a complete slice ("ph":"X") per task, ts/dur in microseconds (6 decimals = picoseconds),
//   named by op, layer and microbatch ("F mlp L3 mb2"), args: category, layer, microbatch, chunk,
//   bytes, flops, sync_wait_us, peer_rank;
// - a flow arrow ("ph":"s" on the send, "ph":"f" on the task that consumed it) per pipeline send;
// - counters ("ph":"C"): "memory in use" per rank (GiB), and per link "util <name>" (%) in a
//   process named "links" (pid = largest rank + 1).
// Strings are escaped (json_writer.hpp). Output is written in one pass; memory O(tasks).
#pragma once

#include <ostream>
#include <string>

#include "sim/plan/step_result.hpp"
#include "sim/report/rank_filter.hpp"

namespace stepsim::report {

struct TraceOptions {
  RankFilter ranks;           ///< ranks written (default: all); links are written regardless
  bool link_counters = true;  ///< write the per-link utilization counters
};

/// A slice's name: "F mlp L3 mb2", "TP all_reduce L3 mb2", "PP send mb2 -> 5", "optimizer adam".
std::string slice_name(const plan::TaskRecord& task);
/// The TaskCategory as its enumerator name ("backward_input"), the slice's "cat".
const char* category_key(plan::TaskCategory category);

void write_chrome_trace(const plan::StepResult& result, std::ostream& out, const TraceOptions& options = {});

}  // namespace stepsim::report
