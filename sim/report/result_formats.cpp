#include "sim/report/result_formats.hpp"

#include <charconv>

#include "sim/report/comparison.hpp"
#include "sim/report/json_writer.hpp"

namespace stepsim::report {

namespace {

void write_memory(JsonWriter& w, const plan::MemoryBreakdown& m) {
  w.begin_object().key("parameters").value(m.parameters).key("gradients").value(m.gradients);
  w.key("optimizer_states").value(m.optimizer_states).key("activations").value(m.activations);
  w.key("gathered_parameters").value(m.gathered_parameters).key("buffers").value(m.buffers);
  w.key("reserve").value(m.reserve).end_object();
}

void write_result(JsonWriter& w, const plan::StepResult& r, bool best) {
  w.begin_object().key("name").value(r.name).key("best").value(best).key("gpus").value(r.gpus);
  w.key("tp").value(r.tp).key("pp").value(r.pp).key("dp").value(r.dp).key("zero_stage").value(r.zero_stage);
  w.key("micro_batch").value(r.micro_batch).key("microbatches").value(r.microbatches).key("v").value(r.v);
  w.key("schedule").value(r.schedule).key("recompute").value(r.recompute);
  w.key("sequence_parallel").value(r.sequence_parallel);
  w.key("step_time_s").value(r.step_time_s).key("tokens_per_s").value(r.tokens_per_s);
  w.key("tflops_per_gpu").value(r.tflops_per_gpu).key("mfu").value(r.mfu).key("hfu").value(r.hfu);
  w.key("bubble_fraction").value(r.bubble_fraction);
  w.key("exposed_comm_s").begin_object().key("tp").value(r.exposed_comm_s.tp).key("pp").value(r.exposed_comm_s.pp);
  w.key("dp").value(r.exposed_comm_s.dp).key("zero").value(r.exposed_comm_s.zero).end_object();
  w.key("sync_stall_s").value(r.sync_stall_s).key("host_bound_s").value(r.host_bound_s);
  w.key("peak_memory_bytes").value(r.peak_memory_bytes).key("memory_capacity_bytes").value(r.memory_capacity_bytes);
  w.key("fits").value(r.fits).key("memory_note").value(r.memory_note);
  w.key("memory_at_peak");
  write_memory(w, r.memory_at_peak);
  w.key("events").value(static_cast<std::int64_t>(r.events)).key("symmetric").value(r.symmetric);
  w.end_object();
}

std::string csv_text(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_number(double v) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;  // shortest exact form
  return std::string(buf, end);
}

}  // namespace

void write_results_json(const std::vector<plan::StepResult>& results, std::ostream& out, const std::string& scenario) {
  const auto best = best_index(results);
  JsonWriter w(out);
  w.begin_object().key("format_version").value(kResultFormatVersion);
  if (!scenario.empty()) w.key("scenario").value(scenario);
  w.key("best");
  if (best) w.value(results[*best].name);
  else w.null();
  w.key("results").begin_array();
  for (std::size_t i = 0; i < results.size(); ++i) write_result(w.line_break(), results[i], best == i);
  w.line_break().end_array().end_object();
  out << "\n";
}

std::string csv_header() {
  return "name,gpus,tp,pp,dp,zero_stage,micro_batch,microbatches,v,schedule,recompute,sequence_parallel,"
         "step_time_s,tokens_per_s,tflops_per_gpu,mfu,hfu,bubble_fraction,exposed_tp_s,exposed_pp_s,exposed_dp_s,"
         "exposed_zero_s,sync_stall_s,peak_memory_bytes,memory_capacity_bytes,fits,memory_note";
}

std::string csv_row(const plan::StepResult& r) {
  const auto i = [](std::int64_t v) { return std::to_string(v); };
  std::string row = csv_text(r.name) + "," + i(r.gpus) + "," + i(r.tp) + "," + i(r.pp) + "," + i(r.dp) + "," +
                    i(r.zero_stage) + "," + i(r.micro_batch) + "," + i(r.microbatches) + "," + i(r.v) + "," +
                    csv_text(r.schedule) + "," + csv_text(r.recompute) + "," + (r.sequence_parallel ? "true" : "false");
  for (const double d : {r.step_time_s, r.tokens_per_s, r.tflops_per_gpu, r.mfu, r.hfu, r.bubble_fraction,
                         r.exposed_comm_s.tp, r.exposed_comm_s.pp, r.exposed_comm_s.dp, r.exposed_comm_s.zero, r.sync_stall_s})
    row += "," + csv_number(d);
  return row + "," + i(r.peak_memory_bytes) + "," + i(r.memory_capacity_bytes) + "," + (r.fits ? "true" : "false") + "," +
         csv_text(r.memory_note);
}

void write_results_csv(const std::vector<plan::StepResult>& results, std::ostream& out) {
  out << csv_header() << "\n";
  for (const auto& r : results) out << csv_row(r) << "\n";
}

}  // namespace stepsim::report
