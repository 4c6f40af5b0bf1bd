#include "sim/sweep/sweep_json.hpp"

#include <limits>

#include "sim/config/yaml_field.hpp"

namespace stepsim::sweep {
namespace {

using config::Field;

constexpr const char* kFormat = "stepsim-sweep";
constexpr int kVersion = 1;

void write_memory(report::JsonWriter& w, const plan::MemoryBreakdown& m) {
  w.begin_object();
  w.key("parameters").value(m.parameters).key("gradients").value(m.gradients);
  w.key("optimizer_states").value(m.optimizer_states).key("activations").value(m.activations);
  w.key("gathered_parameters").value(m.gathered_parameters).key("buffers").value(m.buffers);
  w.key("reserve").value(m.reserve);
  w.end_object();
}

// JSON null stands for a non-finite number (JsonWriter writes NaN that way).
double read_number(const Field& f) {
  return f.is_null() ? std::numeric_limits<double>::quiet_NaN() : f.as_double();
}
int read_small(const Field& f) { return static_cast<int>(f.as_int()); }

plan::MemoryBreakdown read_memory(const Field& f) {
  plan::MemoryBreakdown m;
  m.parameters = f.required("parameters").as_int();
  m.gradients = f.required("gradients").as_int();
  m.optimizer_states = f.required("optimizer_states").as_int();
  m.activations = f.required("activations").as_int();
  m.gathered_parameters = f.required("gathered_parameters").as_int();
  m.buffers = f.required("buffers").as_int();
  m.reserve = f.required("reserve").as_int();
  return m;
}

void read_metrics(const Field& f, plan::StepResult& r) {
  r.name = f.required("name").as_string();
  r.step_time_s = read_number(f.required("step_time_s"));
  r.tokens_per_s = read_number(f.required("tokens_per_s"));
  r.tflops_per_gpu = read_number(f.required("tflops_per_gpu"));
  r.mfu = read_number(f.required("mfu"));
  r.hfu = read_number(f.required("hfu"));
  r.bubble_fraction = read_number(f.required("bubble_fraction"));
  const Field exposed = f.required("exposed_comm_s");
  r.exposed_comm_s = {read_number(exposed.required("tp")), read_number(exposed.required("pp")),
                      read_number(exposed.required("dp")), read_number(exposed.required("zero"))};
  r.sync_stall_s = read_number(f.required("sync_stall_s"));
  r.host_bound_s = read_number(f.required("host_bound_s"));
  r.peak_memory_bytes = f.required("peak_memory_bytes").as_int();
  r.memory_capacity_bytes = f.required("memory_capacity_bytes").as_int();
  r.fits = f.required("fits").as_bool();
  r.symmetric = f.required("symmetric").as_bool();
  r.events = static_cast<std::uint64_t>(f.required("events").as_int());
}

void read_settings(const Field& f, plan::StepResult& r) {
  r.gpus = read_small(f.required("gpus"));
  r.tp = read_small(f.required("tp"));
  r.pp = read_small(f.required("pp"));
  r.dp = read_small(f.required("dp"));
  r.zero_stage = read_small(f.required("zero_stage"));
  r.micro_batch = read_small(f.required("micro_batch"));
  r.microbatches = read_small(f.required("microbatches"));
  r.v = read_small(f.required("v"));
  r.schedule = f.required("schedule").as_string();
  r.recompute = f.required("recompute").as_string();
  r.sequence_parallel = f.required("sequence_parallel").as_bool();
  r.memory_note = f.required("memory_note").as_string();
  r.memory_at_peak = read_memory(f.required("memory_at_peak"));
}

PlanResult read_plan(const Field& f) {
  PlanResult p;
  p.index = static_cast<std::size_t>(f.required("index").as_non_negative_int());
  read_metrics(f, p.result);
  read_settings(f, p.result);
  return p;
}

std::size_t read_count(const Field& root, const char* key) {
  return static_cast<std::size_t>(root.required(key).as_non_negative_int());
}

SweepOutcome read_outcome(const config::YamlDocument& doc) {
  const Field root = doc.root();
  const Field format = root.required("format");
  if (format.as_string() != kFormat) format.fail(std::string("expected '") + kFormat + "', found " + format.found());
  const Field version = root.required("version");
  if (version.as_int() != kVersion) version.fail("expected version " + std::to_string(kVersion) + ", found " + version.found());
  SweepOutcome out;
  out.scenario = root.required("scenario").as_string();
  out.fingerprint = root.required("fingerprint").as_string();
  out.enumerated = read_count(root, "enumerated");
  out.shard_count = read_small(root.required("shard_count"));
  out.shards.clear();
  for (const Field& k : root.required("shards").items()) out.shards.push_back(read_small(k));
  out.tried = read_count(root, "tried");
  out.invalid = read_count(root, "invalid");
  out.not_run = read_count(root, "not_run");
  out.interrupted = root.required("interrupted").as_bool();
  for (const Field& item : root.required("results").items()) out.results.push_back(read_plan(item));
  return out;
}

}  // namespace

void write_result_fields(report::JsonWriter& w, const plan::StepResult& r) {
  w.key("name").value(r.name).key("step_time_s").value(r.step_time_s).key("tokens_per_s").value(r.tokens_per_s);
  w.key("tflops_per_gpu").value(r.tflops_per_gpu).key("mfu").value(r.mfu).key("hfu").value(r.hfu);
  w.key("bubble_fraction").value(r.bubble_fraction);
  w.key("exposed_comm_s").begin_object();
  w.key("tp").value(r.exposed_comm_s.tp).key("pp").value(r.exposed_comm_s.pp);
  w.key("dp").value(r.exposed_comm_s.dp).key("zero").value(r.exposed_comm_s.zero).end_object();
  w.key("sync_stall_s").value(r.sync_stall_s).key("host_bound_s").value(r.host_bound_s);
  w.key("peak_memory_bytes").value(r.peak_memory_bytes);
  w.key("memory_capacity_bytes").value(r.memory_capacity_bytes).key("fits").value(r.fits);
  w.key("symmetric").value(r.symmetric).key("events").value(static_cast<std::int64_t>(r.events));
  w.key("gpus").value(r.gpus).key("tp").value(r.tp).key("pp").value(r.pp).key("dp").value(r.dp);
  w.key("zero_stage").value(r.zero_stage).key("micro_batch").value(r.micro_batch);
  w.key("microbatches").value(r.microbatches).key("v").value(r.v);
  w.key("schedule").value(r.schedule).key("recompute").value(r.recompute);
  w.key("sequence_parallel").value(r.sequence_parallel).key("memory_note").value(r.memory_note);
  w.key("memory_at_peak");
  write_memory(w, r.memory_at_peak);
}

void write_outcome_json(std::ostream& out, const SweepOutcome& o) {
  report::JsonWriter w(out);
  w.begin_object().key("format").value(kFormat).key("version").value(kVersion);
  w.key("scenario").value(o.scenario).key("fingerprint").value(o.fingerprint);
  w.key("enumerated").value(static_cast<std::int64_t>(o.enumerated)).key("shard_count").value(o.shard_count);
  w.key("shards").begin_array();
  for (int k : o.shards) w.value(k);
  w.end_array();
  w.key("tried").value(static_cast<std::int64_t>(o.tried)).key("invalid").value(static_cast<std::int64_t>(o.invalid));
  w.key("not_run").value(static_cast<std::int64_t>(o.not_run)).key("interrupted").value(o.interrupted);
  w.key("out_of_memory").value(static_cast<std::int64_t>(o.out_of_memory()));
  w.key("fits").value(static_cast<std::int64_t>(o.fits()));
  w.key("results").begin_array();
  for (const PlanResult& p : o.results) {
    w.line_break().begin_object().key("index").value(static_cast<std::int64_t>(p.index));
    write_result_fields(w, p.result);
    w.end_object();
  }
  w.line_break().end_array().end_object();
  out << "\n";
}

SweepOutcome read_outcome_json(const std::string& path) {
  return read_outcome(config::YamlDocument::load_file(path));
}

SweepOutcome read_outcome_json_text(const std::string& text, const std::string& name) {
  return read_outcome(config::YamlDocument::load_string(text, name));
}

}  // namespace stepsim::sweep
