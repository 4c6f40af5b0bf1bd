#include "sim/report/result_json.hpp"

#include <limits>

#include "sim/config/yaml_field.hpp"

namespace stepsim::report {
namespace {

using config::Field;

void write_memory(JsonWriter& w, const plan::MemoryBreakdown& m) {
  w.begin_object().key("parameters").value(m.parameters).key("gradients").value(m.gradients);
  w.key("optimizer_states").value(m.optimizer_states).key("activations").value(m.activations);
  w.key("gathered_parameters").value(m.gathered_parameters).key("buffers").value(m.buffers);
  w.key("fp8_weights").value(m.fp8_weights).key("reserve").value(m.reserve).end_object();
}

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
  if (auto fp8 = f.optional("fp8_weights")) m.fp8_weights = fp8->as_int();  // absent in files from before FP8
  return m;
}

}  // namespace

void write_result_fields(JsonWriter& w, const plan::StepResult& r) {
  w.key("name").value(r.name).key("gpus").value(r.gpus);
  w.key("tp").value(r.tp).key("pp").value(r.pp).key("dp").value(r.dp).key("ep").value(r.ep).key("etp").value(r.etp).key("cp").value(r.cp).key("zero_stage").value(r.zero_stage);
  w.key("micro_batch").value(r.micro_batch).key("microbatches").value(r.microbatches).key("v").value(r.v);
  w.key("schedule").value(r.schedule).key("recompute").value(r.recompute);
  w.key("stage_layers").begin_array();
  for (int layers : r.stage_layers) w.value(layers);
  w.end_array();
  w.key("sequence_parallel").value(r.sequence_parallel);
  w.key("step_time_s").value(r.step_time_s).key("tokens_per_s").value(r.tokens_per_s);
  w.key("tflops_per_gpu").value(r.tflops_per_gpu).key("mfu").value(r.mfu).key("hfu").value(r.hfu);
  w.key("bubble_fraction").value(r.bubble_fraction);
  w.key("mfu_fp8_peak").value(r.mfu_fp8_peak).key("fp8_cast_s").value(r.fp8_cast_s);
  w.key("grad_accumulation_s").value(r.grad_accumulation_s);
  w.key("exposed_comm_s").begin_object().key("tp").value(r.exposed_comm_s.tp).key("pp").value(r.exposed_comm_s.pp);
  w.key("dp").value(r.exposed_comm_s.dp).key("zero").value(r.exposed_comm_s.zero).key("ep").value(r.exposed_comm_s.ep);
  w.key("cp").value(r.exposed_comm_s.cp).end_object();
  w.key("sync_stall_s").value(r.sync_stall_s).key("host_bound_s").value(r.host_bound_s);
  w.key("offload_optimizer").value(r.offload_optimizer).key("offload_param").value(r.offload_param);
  w.key("offload_s").value(r.offload_s);
  w.key("host_memory_bytes").value(r.host_memory_bytes).key("host_ram_bytes").value(r.host_ram_bytes);
  w.key("peak_memory_bytes").value(r.peak_memory_bytes).key("memory_capacity_bytes").value(r.memory_capacity_bytes);
  w.key("fits").value(r.fits).key("memory_note").value(r.memory_note);
  w.key("memory_at_peak");
  write_memory(w, r.memory_at_peak);
  w.key("events").value(static_cast<std::int64_t>(r.events)).key("symmetric").value(r.symmetric);
}

plan::StepResult read_result_fields(const Field& f) {
  plan::StepResult r;
  r.name = f.required("name").as_string();
  r.gpus = read_small(f.required("gpus"));
  r.tp = read_small(f.required("tp"));
  r.pp = read_small(f.required("pp"));
  r.dp = read_small(f.required("dp"));
  r.ep = read_small(f.required("ep"));
  r.etp = f.has("etp") ? read_small(f.required("etp")) : r.tp;  // written since etp was added
  r.cp = read_small(f.required("cp"));
  r.zero_stage = read_small(f.required("zero_stage"));
  r.micro_batch = read_small(f.required("micro_batch"));
  r.microbatches = read_small(f.required("microbatches"));
  r.v = read_small(f.required("v"));
  r.schedule = f.required("schedule").as_string();
  r.recompute = f.required("recompute").as_string();
  if (auto stages = f.optional("stage_layers"))  // written since uneven stages
    for (const Field& layers : stages->items()) r.stage_layers.push_back(read_small(layers));
  r.sequence_parallel = f.required("sequence_parallel").as_bool();
  r.step_time_s = read_number(f.required("step_time_s"));
  r.tokens_per_s = read_number(f.required("tokens_per_s"));
  r.tflops_per_gpu = read_number(f.required("tflops_per_gpu"));
  r.mfu = read_number(f.required("mfu"));
  r.hfu = read_number(f.required("hfu"));
  r.bubble_fraction = read_number(f.required("bubble_fraction"));
  if (f.has("mfu_fp8_peak")) r.mfu_fp8_peak = read_number(f.required("mfu_fp8_peak"));  // written since FP8
  if (f.has("fp8_cast_s")) r.fp8_cast_s = read_number(f.required("fp8_cast_s"));
  if (f.has("grad_accumulation_s")) r.grad_accumulation_s = read_number(f.required("grad_accumulation_s"));
  const Field exposed = f.required("exposed_comm_s");
  r.exposed_comm_s = {read_number(exposed.required("tp")), read_number(exposed.required("pp")),
                      read_number(exposed.required("dp")), read_number(exposed.required("zero")),
                      read_number(exposed.required("ep")), read_number(exposed.required("cp"))};
  r.sync_stall_s = read_number(f.required("sync_stall_s"));
  r.host_bound_s = read_number(f.required("host_bound_s"));
  if (f.has("offload_s")) {  // written since ZeRO-Offload
    r.offload_optimizer = f.required("offload_optimizer").as_bool();
    r.offload_param = f.required("offload_param").as_bool();
    r.offload_s = read_number(f.required("offload_s"));
    r.host_memory_bytes = f.required("host_memory_bytes").as_int();
    r.host_ram_bytes = f.required("host_ram_bytes").as_int();
  }
  r.peak_memory_bytes = f.required("peak_memory_bytes").as_int();
  r.memory_capacity_bytes = f.required("memory_capacity_bytes").as_int();
  r.fits = f.required("fits").as_bool();
  r.memory_note = f.required("memory_note").as_string();
  r.memory_at_peak = read_memory(f.required("memory_at_peak"));
  r.events = static_cast<std::uint64_t>(f.required("events").as_int());
  r.symmetric = f.required("symmetric").as_bool();
  return r;
}

}  // namespace stepsim::report
