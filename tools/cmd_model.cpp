// `stepsim model show MODEL`: a model's shape, parameters, FLOPs per token, its per-layer ops with
// FLOPs, bytes and time on a GPU, and memory per GPU by ZeRO stage. `stepsim model list`: presets.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "hardware/hardware_yaml.hpp"
#include "models/compute_time.hpp"
#include "models/flops.hpp"
#include "models/memory.hpp"
#include "models/model_yaml.hpp"
#include "sim/config/units.hpp"
#include "tools/cli_common.hpp"
#include "tools/cli_log.hpp"
#include "tools/commands.hpp"

namespace stepsim::cli {
namespace {

using models::ModelSpec;

struct ShowOptions {
  models::LayerShape shape;
  std::string gpu_name;
  int dp = 8;
  bool json = false;
};

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

double ms(std::int64_t ps) { return static_cast<double>(ps) / 1e9; }

const char* half_name(const hw::GpuSpec& gpu) { return gpu.peak.half() == hw::Dtype::bf16 ? "bf16" : "fp16"; }

void print_ops_table(const std::vector<models::OpCost>& ops, const hw::GpuSpec& gpu) {
  int width = 15;  // FP8's cast ops ("mlp_down_grad_fp8_cast") are longer than the rest
  for (const auto& op : ops) width = std::max(width, static_cast<int>(op.name.size()));
  std::printf("  %-*s %10s %10s %10s %10s %10s %10s %9s %9s %9s\n", width, "op", "fwd GFLOP", "B GFLOP", "W GFLOP",
              "fwd MB", "bwd MB", "act MiB", "fwd ms", "B ms", "W ms");
  models::OpsTime sum;
  for (const auto& op : ops) {
    const auto t = models::time_op(op, gpu, gpu.peak.half());
    std::printf("  %-*s %10.2f %10.2f %10.2f %10.1f %10.1f %10.1f %9.3f %9.3f %9.3f%s\n", width, op.name.c_str(),
                op.fwd_flops / 1e9, op.bwd_input_flops / 1e9, op.bwd_weight_flops / 1e9, op.fwd_bytes / 1e6,
                (op.bwd_input_bytes + op.bwd_weight_bytes) / 1e6, static_cast<double>(op.activation_bytes) / 1048576.0,
                ms(t.fwd_ps), ms(t.bwd_input_ps), ms(t.bwd_weight_ps),
                op.recompute ? "  (recomputed)" : op.fp8 ? "  (FP8)" : "");
    sum.fwd_ps += t.fwd_ps;
    sum.bwd_input_ps += t.bwd_input_ps;
    sum.bwd_weight_ps += t.bwd_weight_ps;
  }
  const auto total = models::sum_ops(ops);
  std::printf("  %-*s %10.2f %10.2f %10.2f %10.1f %10.1f %10.1f %9.3f %9.3f %9.3f\n", width, "layer total",
              total.fwd_flops / 1e9, total.bwd_input_flops / 1e9, total.bwd_weight_flops / 1e9, total.fwd_bytes / 1e6,
              total.bwd_bytes / 1e6, static_cast<double>(total.activation_bytes) / 1048576.0, ms(sum.fwd_ps),
              ms(sum.bwd_input_ps), ms(sum.bwd_weight_ps));
}

// Model states of this TP rank's share of the whole model (all layers, embedding, head, and the
// multi-token-prediction depths).
std::int64_t params_per_rank(const ModelSpec& m, int tp) {
  std::int64_t layers = 0;
  for (int l = 0; l < m.layers; ++l) layers += models::params_per_layer_per_rank(m, l, tp);
  return layers + models::mtp_params_per_rank(m, tp) + (models::embedding_params(m) + models::head_params(m)) / tp;
}

void print_text(const ModelSpec& m, const ShowOptions& o, const hw::GpuSpec& gpu) {
  const auto& s = o.shape;
  std::printf("model %s\n  source: %s\n", m.name.c_str(), m.source.c_str());
  std::printf("  %d layers, hidden %lld, %d heads (%d KV, head dim %lld), FFN %lld %s, vocab %lld, %s positions, %s, %s\n",
              m.layers, static_cast<long long>(m.hidden), m.heads, m.kv_heads, static_cast<long long>(m.head_dim),
              static_cast<long long>(m.ffn_hidden), models::to_string(m.activation), static_cast<long long>(m.vocab),
              models::to_string(m.position), models::to_string(m.norm), m.tied_embeddings ? "tied embeddings" : "untied embeddings");
  std::printf("  parameters %.3f B (per layer %.1f M, embedding %.1f M, head %.1f M)\n",
              static_cast<double>(models::total_params(m)) / 1e9, static_cast<double>(models::params_per_layer(m)) / 1e6,
              static_cast<double>(models::embedding_params(m)) / 1e6, static_cast<double>(models::head_params(m)) / 1e6);
  if (m.mtp_layers > 0)
    std::printf("  multi-token prediction: %d depth%s, %.3f B parameters of its own (beside the total), on the last "
                "pipeline stage\n",
                m.mtp_layers, m.mtp_layers == 1 ? "" : "s", static_cast<double>(models::mtp_params(m)) / 1e9);
  if (m.mla.enabled()) {
    std::printf("  latent attention: KV latent %lld", static_cast<long long>(m.mla.kv_lora_rank));
    if (m.mla.q_lora_rank > 0) std::printf(", query latent %lld", static_cast<long long>(m.mla.q_lora_rank));
    std::printf(", query/key dims %lld + %lld rotary, value dims %lld\n", static_cast<long long>(m.mla.qk_nope_head_dim),
                static_cast<long long>(m.mla.qk_rope_head_dim), static_cast<long long>(m.mla.v_head_dim));
  }
  if (m.moe.enabled()) {
    std::printf("  mixture of experts: %d experts of FFN %lld, top %d per token", m.moe.experts,
                static_cast<long long>(m.moe.expert_ffn), m.moe.top_k);
    if (m.moe.shared_ffn > 0)
      std::printf(", shared expert FFN %lld%s", static_cast<long long>(m.moe.shared_ffn), m.moe.shared_gate ? " (gated)" : "");
    if (m.moe.capacity_factor > 0) std::printf(", capacity factor %.2f", m.moe.capacity_factor);
    else std::printf(", dropless");
    if (m.moe.dense_layers > 0)
      std::printf(", the first %d layer%s dense (FFN %lld)", m.moe.dense_layers, m.moe.dense_layers == 1 ? "" : "s",
                  static_cast<long long>(m.ffn_hidden));
    std::printf("\n  active parameters per token %.3f B (of %.3f B)\n", static_cast<double>(models::active_params(m)) / 1e9,
                static_cast<double>(models::total_params(m)) / 1e9);
  }
  const bool windowed = m.attention_window > 0 && m.attention_window < s.seq;
  if (m.attention_window > 0) {
    std::printf("  sliding-window attention over the last %lld tokens", static_cast<long long>(m.attention_window));
    if (m.global_attention_every > 0) std::printf(", every %d%s layer global", m.global_attention_every,
                                                  m.global_attention_every == 2 ? "nd" : "th");
    std::printf("%s\n", windowed ? "" : " (no shorter than the sequence here: every layer sees all of it)");
  }
  std::printf("  model FLOPs per token (6N + 12·L·h·s%s, N active, s = %lld): %.1f GFLOP\n\n", windowed ? ", w for s in local layers" : "",
              static_cast<long long>(s.seq), models::model_flops_per_token(m, s.seq) / 1e9);
  // The first layer's ops (a local one where windows alternate), then what a global layer changes.
  models::LayerShape first = s;
  first.attention_window = windowed ? models::attention_window(m, 0) : 0;
  std::printf("One %slayer on one rank of %s (%s%s): micro-batch %lld, seq %lld, tp %d%s, recompute %s, %s\n",
              windowed ? "local " : "", gpu.name.c_str(), half_name(gpu),
              s.fp8 != models::Fp8Recipe::none ? ", linear GEMMs in FP8 with their casts" : "", static_cast<long long>(s.micro_batch),
              static_cast<long long>(s.seq), s.tp, s.sequence_parallel ? " + SP" : "", models::to_string(s.recompute),
              s.flash_attention ? "flash attention" : "unfused attention");
  print_ops_table(models::layer_ops(m, first), gpu);
  if (windowed && m.global_attention_every > 0) {
    const auto global = models::layer_ops(m, s);
    const auto total = models::sum_ops(global);
    std::printf("  a global layer: %.2f fwd GFLOP, %.2f B GFLOP in all (attention over the whole sequence)\n",
                total.fwd_flops / 1e9, total.bwd_input_flops / 1e9);
  }
  const std::int64_t n = params_per_rank(m, s.tp);
  std::printf("\nModel states per GPU, dp %d (bf16 Adam: 2 + 2 + 12 bytes per parameter; %.3f B parameters per TP rank):\n",
              o.dp, static_cast<double>(n) / 1e9);
  for (int stage = 0; stage <= 3; ++stage) {
    const auto b = models::model_state_bytes(n, stage, o.dp);
    std::printf("  ZeRO-%d  %12s  (params %s, grads %s, optimizer %s)\n", stage, config::format_bytes(static_cast<double>(b.total())).c_str(),
                config::format_bytes(static_cast<double>(b.params)).c_str(), config::format_bytes(static_cast<double>(b.grads)).c_str(),
                config::format_bytes(static_cast<double>(b.optimizer)).c_str());
  }
  // Megatron-LM forces fp32 gradient accumulation and reduction for bf16 (arguments.py); the
  // table above is DeepSpeed's and FSDP's 2-byte gradient.
  std::printf("  (Megatron-LM and Megatron-Core, frameworks generic and megatron-core, keep a bf16 model's\n"
              "   gradients in fp32: 2 bytes more per parameter at ZeRO-0 and ZeRO-1, 2/dp more at ZeRO-2.)\n");
}

void print_json(const ModelSpec& m, const ShowOptions& o, const hw::GpuSpec& gpu) {
  std::ostringstream out;
  out << "{\"name\": \"" << json_escape(m.name) << "\", \"params\": " << models::total_params(m)
      << ", \"active_params\": " << models::active_params(m) << ", \"mtp_layers\": " << m.mtp_layers
      << ", \"mtp_params\": " << models::mtp_params(m) << ", \"experts\": " << m.moe.experts
      << ", \"top_k\": " << m.moe.top_k << ", \"layers\": " << m.layers << ", \"hidden\": " << m.hidden << ", \"heads\": " << m.heads
      << ", \"kv_heads\": " << m.kv_heads << ", \"ffn_hidden\": " << m.ffn_hidden << ", \"vocab\": " << m.vocab
      << ", \"attention_window\": " << m.attention_window << ", \"global_attention_every\": " << m.global_attention_every
      << ", \"flops_per_token\": " << models::model_flops_per_token(m, o.shape.seq) << ", \"gpu\": \""
      << json_escape(gpu.name) << "\", \"layer_ops\": [";
  const auto ops = models::layer_ops(m, o.shape);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    const auto t = models::time_op(op, gpu, gpu.peak.half());
    out << (i ? ", " : "") << "{\"name\": \"" << op.name << "\", \"kind\": \"" << models::to_string(op.kind)
        << "\", \"fwd_flops\": " << op.fwd_flops << ", \"bwd_input_flops\": " << op.bwd_input_flops
        << ", \"bwd_weight_flops\": " << op.bwd_weight_flops << ", \"fwd_bytes\": " << op.fwd_bytes
        << ", \"bwd_bytes\": " << op.bwd_input_bytes + op.bwd_weight_bytes << ", \"activation_bytes\": "
        << op.activation_bytes << ", \"fwd_ps\": " << t.fwd_ps << ", \"bwd_input_ps\": " << t.bwd_input_ps
        << ", \"bwd_weight_ps\": " << t.bwd_weight_ps << "}";
  }
  out << "], \"model_state_bytes\": {";
  const std::int64_t n = params_per_rank(m, o.shape.tp);
  for (int stage = 0; stage <= 3; ++stage)
    out << (stage ? ", " : "") << "\"zero" << stage << "\": " << models::model_state_bytes(n, stage, o.dp).total();
  out << "}, \"dp\": " << o.dp << "}\n";
  std::cout << out.str();
}

models::Recompute parse_recompute(const std::string& text) {
  if (text == "none") return models::Recompute::none;
  if (text == "selective") return models::Recompute::selective;
  if (text == "full") return models::Recompute::full;
  throw UsageError("--recompute: expected none, selective or full, found '" + text + "'");
}

int run_list() {
  for (const auto& name : models::model_preset_names()) {
    const auto m = models::load_model(name);
    std::printf("  %-18s %9.3f B  %s\n", name.c_str(), static_cast<double>(models::total_params(m)) / 1e9, m.source.c_str());
  }
  return 0;
}

}  // namespace

int run_model(const Args& args) {
  po::options_description options("Options");
  std::string action, model, recompute;
  ShowOptions o;
  int tp = 1;
  options.add_options()("action", po::value(&action)->required(), "show | list")(
      "model", po::value(&model), "preset name, model YAML or HuggingFace config.json")(
      "seq", po::value(&o.shape.seq)->default_value(2048), "sequence length")(
      "micro-batch", po::value(&o.shape.micro_batch)->default_value(1), "sequences per microbatch")(
      "tp", po::value(&tp)->default_value(1), "tensor-parallel size")(
      "sp", po::bool_switch(&o.shape.sequence_parallel), "sequence parallelism")(
      "recompute", po::value(&recompute)->default_value("none"), "none | selective | full")(
      "no-flash", "unfused (Megatron) attention instead of flash attention")(
      "fp8", "FP8 training as Transformer Engine runs it (delayed scaling): FP8 GEMMs and their casts")(
      "gpu", po::value(&o.gpu_name)->default_value("A100-SXM4-80GB"), "GPU name from hardware/gpus.yaml")(
      "dp", po::value(&o.dp)->default_value(8), "data-parallel size for the ZeRO memory table")(
      "json", po::bool_switch(&o.json), "machine-readable output");
  po::positional_options_description positional;
  positional.add("action", 1).add("model", 1);
  const auto vm = parse_command_line("model", "show MODEL [options] | list",
                                     "Show a model's parameters, FLOPs, per-layer ops and memory.", options,
                                     positional, args);
  if (!vm) return 0;
  if (action == "list") return run_list();
  if (action != "show") throw UsageError("stepsim model: expected 'show' or 'list', found '" + action + "'");
  if (model.empty()) throw UsageError("stepsim model show: missing MODEL (a preset, model YAML or config.json)");
  if (tp < 1 || o.dp < 1 || o.shape.seq < 1 || o.shape.micro_batch < 1)
    throw UsageError("stepsim model show: --tp, --dp, --seq and --micro-batch must be positive");
  o.shape.tp = tp;
  o.shape.recompute = parse_recompute(recompute);
  o.shape.flash_attention = vm->count("no-flash") == 0;
  const ModelSpec m = models::load_model(model);
  warn_unmodelled(m);
  if (m.heads % tp != 0 || m.ffn_hidden % tp != 0 || m.moe.expert_ffn % tp != 0 || m.moe.shared_ffn % tp != 0)
    throw UsageError("stepsim model show: --tp " + std::to_string(tp) + " must divide the " +
                     std::to_string(m.heads) + " heads and FFN width " + std::to_string(m.ffn_hidden) +
                     (m.moe.enabled() ? " and the experts' " + std::to_string(m.moe.expert_ffn) : std::string()));
  const hw::GpuSpec gpu = hw::load_gpu_spec(o.gpu_name);
  if (vm->count("fp8")) {
    if (gpu.peak.fp8 <= 0) throw UsageError("--fp8: " + gpu.name + " has no FP8 tensor cores");
    o.shape.fp8 = models::Fp8Recipe::delayed;
    o.shape.fp8_transposes = gpu.fp8_transposes;
  }
  if (o.json) print_json(m, o, gpu);
  else print_text(m, o, gpu);
  return 0;
}

}  // namespace stepsim::cli
