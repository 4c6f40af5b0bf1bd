#include "sim/report/validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "models/flops.hpp"
#include "sim/config/yaml_field.hpp"

namespace stepsim::report {

const std::vector<std::string>& validation_metrics() {
  static const std::vector<std::string> kMetrics{"megatron_eq3_tflops_per_gpu", "step_time_s",
                                                 "samples_per_gpu_per_s", "mosaic_mfu", "mfu"};
  return kMetrics;
}

ValidationSpec read_validation(const config::Field& root) {
  const config::Field f = root.required("validation");
  f.check_keys({"source", "metric", "definition", "measured", "tolerance", "group"});
  ValidationSpec spec;
  spec.source = f.required("source").as_string();
  spec.metric = f.required("metric").as_choice(validation_metrics());
  spec.definition = f.required("definition").as_string();
  spec.measured = f.required("measured").as_positive_double();
  if (auto t = f.optional("tolerance")) spec.tolerance = t->as_positive_double();
  if (auto g = f.optional("group")) spec.group = g->as_string();
  return spec;
}

namespace {

// Peak the sources divide by: A100 dense fp16/bf16, 312 TFLOP/s (data README section 9).
double dtype_peak(const plan::Scenario& s) {
  return s.cluster.gpu.peak.of(plan::dtype_of(s.training.precision));
}

// MosaicML llm-foundry scripts/train/benchmarking/README.md: flops_per_seq = 2·N·s,
// attn_flops_per_seq = L·2·2·h·s², MFU = 3·(both)·sequences_per_s / (GPUs · peak), the peak of the
// run's precision as Composer's speed monitor has it: amp_fp8 runs over the FP8 peak
// (composer/callbacks/speed_monitor.py GPU_AVAILABLE_FLOPS, 'amp_fp8': 3.958e15 / 2 on H100).
double mosaic_mfu(const plan::Scenario& s, const plan::StepResult& r) {
  const double n = static_cast<double>(models::total_params(s.model));
  const double seq = static_cast<double>(s.training.seq_len);
  const double per_seq = 3.0 * (2.0 * n * seq + s.model.layers * 4.0 * s.model.hidden * seq * seq);
  const double seqs_per_s = static_cast<double>(s.training.global_batch) / r.step_time_s;
  const double peak = s.training.precision == plan::Precision::fp8 ? s.cluster.gpu.peak.fp8 : dtype_peak(s);
  return per_seq * seqs_per_s / (r.gpus * peak);
}

}  // namespace

double predicted_metric(const std::string& metric, const plan::Scenario& s, const plan::StepResult& r) {
  const double batch = static_cast<double>(s.training.global_batch);
  if (metric == "step_time_s") return r.step_time_s;
  if (metric == "samples_per_gpu_per_s") return batch / (r.step_time_s * r.gpus);
  if (metric == "mfu") {
    // Korthikanti et al. appendix A model FLOPs over 312 TFLOP/s per GPU.
    const double f = models::megatron_model_flops(batch, s.model.layers, s.training.seq_len, s.model.hidden,
                                                  s.model.vocab);
    return f / (r.step_time_s * r.gpus * dtype_peak(s));
  }
  if (metric == "megatron_eq3_tflops_per_gpu") {
    const double f = models::megatron_hardware_flops_full_recompute(batch, s.model.layers, s.training.seq_len,
                                                                    s.model.hidden, s.model.vocab);
    return f / (r.step_time_s * r.gpus) / 1e12;
  }
  if (metric == "mosaic_mfu") return mosaic_mfu(s, r);
  throw std::invalid_argument("unknown validation metric '" + metric + "'");
}

bool ValidationRow::within() const { return std::fabs(error) <= tolerance; }

SourceSummary summarize(const std::string& source, const std::vector<ValidationRow>& rows) {
  std::vector<double> errors;
  for (const auto& r : rows)
    if (source.empty() || r.source == source) errors.push_back(std::fabs(r.error));
  SourceSummary s{source.empty() ? "all" : source, static_cast<int>(errors.size()), 0, 0, 0};
  if (errors.empty()) return s;
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  s.median_abs_error = n % 2 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
  double sum = 0;
  for (double e : errors) sum += e;
  s.mean_abs_error = sum / static_cast<double>(n);
  s.max_abs_error = errors.back();
  return s;
}

std::vector<SourceSummary> summarize_by_source(const std::vector<ValidationRow>& rows) {
  std::vector<std::string> sources;
  for (const auto& r : rows)
    if (std::find(sources.begin(), sources.end(), r.source) == sources.end()) sources.push_back(r.source);
  std::vector<SourceSummary> out;
  for (const auto& source : sources) out.push_back(summarize(source, rows));
  return out;
}

}  // namespace stepsim::report
