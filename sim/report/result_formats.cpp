#include "sim/report/result_formats.hpp"

#include <charconv>

#include "sim/report/comparison.hpp"
#include "sim/report/json_writer.hpp"
#include "sim/report/result_json.hpp"

namespace stepsim::report {

namespace {

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
  for (std::size_t i = 0; i < results.size(); ++i) {
    w.line_break().begin_object();
    write_result_fields(w, results[i]);
    w.key("best").value(best == i).end_object();
  }
  w.line_break().end_array().end_object();
  out << "\n";
}

std::string csv_header() {
  return "name,gpus,tp,pp,dp,zero_stage,micro_batch,microbatches,v,schedule,recompute,sequence_parallel,"
         "step_time_s,tokens_per_s,tflops_per_gpu,mfu,hfu,bubble_fraction,exposed_tp_s,exposed_pp_s,exposed_dp_s,"
         "exposed_zero_s,sync_stall_s,peak_memory_bytes,memory_capacity_bytes,fits,memory_note,host_bound_s,ep,exposed_ep_s,cp,exposed_cp_s,"
         "offload_optimizer,offload_s";
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
         csv_text(r.memory_note) + "," + csv_number(r.host_bound_s) + "," + i(r.ep) + "," + csv_number(r.exposed_comm_s.ep) +
         "," + i(r.cp) + "," + csv_number(r.exposed_comm_s.cp) + "," + (r.offload_optimizer ? "true" : "false") + "," +
         csv_number(r.offload_s);
}

void write_results_csv(const std::vector<plan::StepResult>& results, std::ostream& out) {
  out << csv_header() << "\n";
  for (const auto& r : results) out << csv_row(r) << "\n";
}

}  // namespace stepsim::report
