#include "sim/plan/megatron_args.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>

#include "sim/plan/framework_defaults.hpp"
#include "sim/plan/megatron_arg_table.hpp"
#include "sim/plan/megatron_optimizer_args.hpp"
#include "sim/plan/megatron_flags.hpp"

namespace stepsim::plan {
namespace {

using config::ShellWord;
using config::SourcePos;

using Arg = MegatronArg;

class MegatronArgsReader : private MegatronArgTable {
 public:
  MegatronArgsReader(const config::ShellScript& script, const models::ModelSpec& model, const Training& training, Strategy& s)
      : MegatronArgTable(script), model_(model), training_(training), s_(s) {}

  void read() {
    s_.framework = Framework::megatron_core;
    apply_framework_defaults(s_);
    // Megatron-LM's own defaults where its flags are absent: every store_true flag off.
    s_.distributed_optimizer = has("use-distributed-optimizer");
    s_.dp_overlap = has("overlap-grad-reduce");
    s_.overlap_param_gather = has("overlap-param-gather");
    s_.tp_comm_overlap = has("tp-comm-overlap");
    s_.grad_reduce_in_bf16 = has("grad-reduce-in-bf16");
    s_.fp8_param_gather = has("fp8-param-gather");
    s_.sequence_parallel = has("sequence-parallel");
    if (has("no-gradient-accumulation-fusion")) s_.grad_accumulation = GradAccumulation::main_grad;
    if (has("overlap-param-gather")) s_.where.overlap_param_gather = at("overlap-param-gather").pos;
    if (has("tp-comm-overlap")) s_.where.tp_comm_overlap = at("tp-comm-overlap").pos;
    read_parallel();
    read_batch_and_precision();
    read_model();
    read_recompute_and_attention();
    read_megatron_optimizer_dtypes(*this, s_);
    note_the_rest();
    for (std::string& text : notes_in_file_order()) s_.unmodelled.push_back(std::move(text));
  }

 private:
  void read_parallel() {
    constexpr std::int64_t kMax = 1 << 20;
    if (has("tensor-model-parallel-size")) {
      s_.tp = static_cast<int>(integer(at("tensor-model-parallel-size"), 1, kMax));
      s_.where.tp = at("tensor-model-parallel-size").value->pos();
    }
    if (has("pipeline-model-parallel-size")) {
      s_.pp = static_cast<int>(integer(at("pipeline-model-parallel-size"), 1, kMax));
      s_.where.pp = at("pipeline-model-parallel-size").value->pos();
    }
    if (has("context-parallel-size")) {
      s_.cp = static_cast<int>(integer(at("context-parallel-size"), 1, kMax));
      s_.where.cp = at("context-parallel-size").value->pos();
    }
    // The first flag given is where a layout error points (check_stage_layers names it).
    for (const auto& [flag, layers] : {std::pair{"decoder-last-pipeline-num-layers", &s_.last_stage_layers},
                                       std::pair{"decoder-first-pipeline-num-layers", &s_.first_stage_layers}})
      if (has(flag)) {
        *layers = static_cast<int>(integer(at(flag), 1, kMax));
        s_.where.stage_layers = at(flag).value->pos();
      }
    // The embedding and the loss counted as layers of the split, the virtual size included
    // (arguments.py validate_args); check_stage_layers holds the split even.
    s_.split_counts_embedding = has("account-for-embedding-in-pipeline-split");
    s_.split_counts_loss = has("account-for-loss-in-pipeline-split");
    std::optional<SourcePos> first_split_flag;  // where a layout error points
    for (const char* flag : {"account-for-embedding-in-pipeline-split", "account-for-loss-in-pipeline-split"})
      if (has(flag) && (!first_split_flag || at(flag).pos < *first_split_flag)) first_split_flag = at(flag).pos;
    if (first_split_flag) s_.where.pipeline_split = *first_split_flag;
    const int split_layers = model_.layers + (s_.split_counts_embedding ? 1 : 0) + (s_.split_counts_loss ? 1 : 0);
    if (has("num-layers-per-virtual-pipeline-stage") && (s_.first_stage_layers > 0 || s_.last_stage_layers > 0))
      fail(at("num-layers-per-virtual-pipeline-stage").pos, "num-layers-per-virtual-pipeline-stage",
           "virtual stages with an uneven first or last stage are not modelled (Megatron-LM itself asks for "
           "--num-virtual-stages-per-pipeline-rank there)");
    read_experts();
    // Virtual stages (arguments.py): layers per virtual stage, or stages per rank; one chunk is
    // the plain 1F1B schedule (Megatron sets the virtual size to None then).
    int v = 1;
    const Arg* where = nullptr;
    if (has("num-layers-per-virtual-pipeline-stage")) {
      where = &at("num-layers-per-virtual-pipeline-stage");
      const std::int64_t per = integer(*where, 1, kMax);
      const std::int64_t per_stage = split_layers / std::max(1, s_.pp);
      if (split_layers % std::max(1, s_.pp) != 0 || per_stage % per != 0)
        fail(where->value->pos(), where->name,
             "expected a divisor of the " + std::to_string(per_stage) + " layers per pipeline stage (" +
                 std::to_string(split_layers) + " layers" +
                 (split_layers != model_.layers ? " with the embedding and loss counted" : "") + " / pp " +
                 std::to_string(s_.pp) + "), found " + text(*where));
      v = static_cast<int>(per_stage / per);
    }
    if (has("num-virtual-stages-per-pipeline-rank")) {
      where = &at("num-virtual-stages-per-pipeline-rank");
      v = static_cast<int>(integer(*where, 1, 1024));
    }
    if (v > 1) {
      s_.schedule = ScheduleKind::interleaved;
      s_.v = v;
      s_.where.schedule = s_.where.v = where->value->pos();
    }
    if (has("ddp-bucket-size")) {
      s_.dp_bucket_params = integer(at("ddp-bucket-size"), 1, std::int64_t{1} << 50);
      s_.dp_bucket_from_dp = false;
    }
  }

  // Expert parallelism and the MoE layer (megatron/training/arguments.py, the MoE group), checked
  // against the scenario's model; what changes no step's cost is read and left.
  void read_experts() {
    constexpr std::int64_t kMax = 1 << 20;
    const models::MoeSpec& moe = model_.moe;
    const std::string model = "the scenario's model " + model_.name;
    if (has("num-experts") && !moe.enabled())
      fail(at("num-experts").value->pos(), "num-experts", model + " is dense; expected no --num-experts, found " + text(at("num-experts")));
    same("num-experts", moe.experts, "moe.experts");
    same("moe-router-topk", moe.top_k, "moe.top_k");
    same("moe-ffn-hidden-size", moe.expert_ffn, "moe.expert_ffn");
    same("moe-shared-expert-intermediate-size", moe.shared_ffn, "moe.shared_ffn");
    if (has("expert-model-parallel-size")) {
      s_.ep = static_cast<int>(integer(at("expert-model-parallel-size"), 1, kMax));
      s_.where.ep = at("expert-model-parallel-size").value->pos();
    }
    if (has("expert-tensor-parallel-size")) {
      s_.etp = static_cast<int>(integer(at("expert-tensor-parallel-size"), 1, kMax));
      s_.where.etp = at("expert-tensor-parallel-size").value->pos();
    }
    // DeepEP runs under the flex dispatcher only (--moe-token-dispatcher-type flex --moe-enable-deepep).
    const std::string dispatcher = has("moe-token-dispatcher-type") ? text(at("moe-token-dispatcher-type")) : "allgather";
    if (dispatcher != "allgather" && dispatcher != "alltoall" && dispatcher != "flex")
      fail(at("moe-token-dispatcher-type").value->pos(), "moe-token-dispatcher-type",
           "expected allgather, alltoall or flex, found '" + dispatcher + "'");
    if (has("moe-enable-deepep") && dispatcher != "flex")
      fail(at("moe-enable-deepep").pos, "moe-enable-deepep", "DeepEP needs --moe-token-dispatcher-type flex, found " + dispatcher);
    s_.moe_deepep = has("moe-enable-deepep");
    if (s_.ep > 1 && dispatcher == "allgather")
      note(has("moe-token-dispatcher-type") ? at("moe-token-dispatcher-type") : at("expert-model-parallel-size"),
           "the all-gather dispatcher under expert parallelism is costed as the all-to-all one");
    if (has("moe-expert-capacity-factor")) {
      const std::string c = text(at("moe-expert-capacity-factor"));
      char* end = nullptr;
      const double factor = std::strtod(c.c_str(), &end);
      if (end == c.c_str() || *end != '\0' || factor <= 0)
        fail(at("moe-expert-capacity-factor").value->pos(), "moe-expert-capacity-factor", "expected a positive number, found '" + c + "'");
      if (factor != moe.capacity_factor)
        fail(at("moe-expert-capacity-factor").value->pos(), "moe-expert-capacity-factor",
             model + " has moe.capacity_factor " + (moe.capacity_factor > 0 ? std::to_string(moe.capacity_factor) : "0 (dropless)") +
                 ", found " + c);
    }
    if (has("moe-layer-freq"))
      note(at("moe-layer-freq"), "which layers are MoE is the scenario model's (moe.dense_layers), not read from this flag");
    for (const char* name : {"moe-router-dtype", "moe-permute-fusion", "moe-shared-expert-overlap"})
      if (has(name)) note(at(name), "not modelled");
    for (const char* name : {"moe-router-num-groups", "moe-router-group-topk"})
      if (has(name)) note(at(name), "node-limited routing is not modelled: tokens are costed as routed to experts on any server");
    if (has("num-experts") && !has("moe-grouped-gemm"))
      note(at("num-experts"), "without --moe-grouped-gemm Megatron-Core runs each local expert as GEMMs of its own "
                              "(SequentialMLP); costed as one grouped GEMM per matrix");
  }

  void read_batch_and_precision() {
    if (has("micro-batch-size")) {
      s_.micro_batch = static_cast<int>(integer(at("micro-batch-size"), 1, 1 << 20));
      s_.where.micro_batch = at("micro-batch-size").value->pos();
    }
    check_equal("global-batch-size", training_.global_batch, "training.global_batch");
    check_equal("seq-length", training_.seq_len, "training.seq_len");
    if (has("max-position-embeddings") && integer(at("max-position-embeddings"), 1, 1 << 30) < training_.seq_len)
      fail(at("max-position-embeddings").value->pos(), "max-position-embeddings",
           "expected at least the sequence length " + std::to_string(training_.seq_len) + " (Megatron-LM asserts it), found " +
               text(at("max-position-embeddings")));
    const bool bf16 = has("bf16"), fp16 = has("fp16");
    const Precision precision = precision_of(training_, s_);
    const std::string scenario = to_string(precision);
    if (bf16 && precision != Precision::bf16 && precision != Precision::fp8)
      fail(at("bf16").pos, "bf16", "the scenario trains in " + scenario + "; expected training.precision: bf16 for these arguments");
    if (fp16 && precision != Precision::fp16)
      fail(at("fp16").pos, "fp16", "the scenario trains in " + scenario + "; expected training.precision: fp16 for these arguments");
    if (!bf16 && !fp16)
      throw config::ConfigError({script_file(), 0, 0}, "",
                                "expected --bf16 or --fp16 (without either Megatron-LM trains in fp32, which stepsim does not "
                                "simulate); the scenario trains in " + scenario);
    // Megatron-LM's --fp8-format turns on Transformer Engine's FP8 GEMMs beside --bf16.
    if (has("fp8-format") != (precision == Precision::fp8))
      fail(has("fp8-format") ? at("fp8-format").pos : at(bf16 ? "bf16" : "fp16").pos, has("fp8-format") ? "fp8-format" : "bf16",
           has("fp8-format") ? "the scenario trains in " + scenario + "; expected training.precision: fp8 for --fp8-format"
                             : "the scenario trains in fp8; expected --fp8-format hybrid (Transformer Engine's FP8) beside --bf16");
    if (has("fp8-format") && text(at("fp8-format")) != "hybrid" && text(at("fp8-format")) != "e4m3")
      fail(at("fp8-format").value->pos(), "fp8-format", "expected hybrid or e4m3, found " + text(at("fp8-format")));
    if (has("fp8-param-gather") && !has("fp8-format"))
      fail(at("fp8-param-gather").pos, "fp8-param-gather", "FP8 parameters need --fp8-format (FP8 training)");
    if (has("fp8-recipe")) {
      const std::string recipe = text(at("fp8-recipe"));
      if (recipe != "delayed" && recipe != "tensorwise")
        fail(at("fp8-recipe").value->pos(), "fp8-recipe", "expected delayed or tensorwise (the recipes stepsim costs), found " + recipe);
      if (recipe != models::to_string(fp8_recipe_of(training_, s_)))
        fail(at("fp8-recipe").value->pos(), "fp8-recipe", "the scenario's FP8 recipe is " +
             std::string(models::to_string(fp8_recipe_of(training_, s_))) + "; expected the same recipe here");
    }
  }

  std::string script_file() const { return args().empty() ? std::string() : args().front().pos.file; }

  // A flag that states a figure of the model, against the scenario's model's `field`.
  void same(const std::string& name, std::int64_t expected, const std::string& field) const {
    if (has(name) && integer(at(name), 0, std::int64_t{1} << 40) != expected)
      fail(at(name).value->pos(), name, "expected " + std::to_string(expected) + " (the scenario's model " + model_.name +
                                            " has " + field + " " + std::to_string(expected) + "), found " + text(at(name)));
  }

  void check_equal(const std::string& name, std::int64_t expected, const std::string& what) const {
    if (!has(name)) return;
    if (integer(at(name), 0, std::int64_t{1} << 50) != expected)
      fail(at(name).value->pos(), name, "expected " + std::to_string(expected) + " (the scenario's " + what + "), found " +
                                            text(at(name)));
  }

  // The architecture the arguments build, against the scenario's model (arguments.py defaults:
  // FFN 4h, or int(4h·2/3 / 64)·64 with --swiglu; MHA unless --group-query-attention).
  void read_model() {
    const std::string model = "the scenario's model " + model_.name;
    // Multi-token prediction trains only with --mtp-num-layers (arguments.py: default None), at
    // most the depths the model has.
    s_.mtp_layers = 0;
    if (has("mtp-num-layers")) {
      const Arg& a = at("mtp-num-layers");
      s_.mtp_layers = static_cast<int>(integer(a, 0, 16));
      s_.where.mtp_layers = a.value->pos();
      if (*s_.mtp_layers > model_.mtp_layers)
        fail(a.value->pos(), a.name, "expected at most the " + std::to_string(model_.mtp_layers) +
                                         " multi-token-prediction depths of " + model + ", found " + text(a));
    } else if (model_.mtp_layers > 0) {
      note(SourcePos{script_file(), 1, 1},
                          "no --mtp-num-layers: " + model + "'s multi-token prediction is not trained (Megatron's "
                          "default)");
    }
    same("num-layers", model_.layers, "layers");
    same("hidden-size", model_.hidden, "hidden");
    same("num-attention-heads", model_.heads, "heads");
    const bool swiglu = has("swiglu");
    if (has("hidden-size") && swiglu != (model_.activation == models::Activation::swiglu))
      fail(swiglu ? at("swiglu").pos : at("hidden-size").pos, swiglu ? "swiglu" : "hidden-size",
           std::string(swiglu ? "--swiglu builds a SwiGLU MLP; " : "without --swiglu the MLP is GELU; ") + model + " has " +
               models::to_string(model_.activation));
    if (has("ffn-hidden-size")) {
      same("ffn-hidden-size", model_.ffn_hidden, "ffn_hidden");
    } else if (has("hidden-size")) {
      const std::int64_t h = model_.hidden;
      const std::int64_t ffn = swiglu ? static_cast<std::int64_t>(4 * h * 2 / 3 / 64) * 64 : 4 * h;
      if (ffn != model_.ffn_hidden)
        fail(at("hidden-size").pos, "hidden-size", "without --ffn-hidden-size Megatron-LM builds an MLP of " +
                                                       std::to_string(ffn) + "; " + model + " has ffn_hidden " +
                                                       std::to_string(model_.ffn_hidden));
    }
    if (has("num-attention-heads")) {
      const bool gqa = has("group-query-attention");
      const std::int64_t groups = gqa && has("num-query-groups") ? integer(at("num-query-groups"), 1, 1 << 20)
                                                                 : (gqa ? 1 : model_.heads);
      if (groups != model_.kv_heads)
        fail(gqa ? at("group-query-attention").pos : at("num-attention-heads").pos, gqa ? "group-query-attention" : "num-attention-heads",
             "these arguments build " + std::to_string(groups) + " key/value heads; " + model + " has kv_heads " +
                 std::to_string(model_.kv_heads));
    }
    if (has("normalization")) {
      const std::string n = text(at("normalization"));
      const bool rms = n == "RMSNorm";
      if (n != "RMSNorm" && n != "LayerNorm")
        fail(at("normalization").value->pos(), "normalization", "expected LayerNorm or RMSNorm, found '" + n + "'");
      if (rms != (model_.norm == models::Norm::rmsnorm))
        fail(at("normalization").value->pos(), "normalization", model + " has " + models::to_string(model_.norm) + ", found " + n);
    }
    if (has("position-embedding-type")) {
      const std::string p = text(at("position-embedding-type"));
      const std::map<std::string, models::Position> kinds{
          {"learned_absolute", models::Position::learned}, {"rope", models::Position::rotary}, {"none", models::Position::none}};
      const auto it = kinds.find(p);
      if (it == kinds.end())
        fail(at("position-embedding-type").value->pos(), "position-embedding-type",
             "expected learned_absolute, rope or none, found '" + p + "'");
      if (it->second != model_.position)
        fail(at("position-embedding-type").value->pos(), "position-embedding-type",
             model + " has " + models::to_string(model_.position) + " positions, found " + p);
    }
    if (has("hidden-size") && has("untie-embeddings-and-output-weights") == model_.tied_embeddings)
      fail(has("untie-embeddings-and-output-weights") ? at("untie-embeddings-and-output-weights").pos : at("hidden-size").pos,
           has("untie-embeddings-and-output-weights") ? "untie-embeddings-and-output-weights" : "hidden-size",
           std::string(model_.tied_embeddings ? model + " ties its embeddings; these arguments untie them"
                                              : model + " has untied embeddings; add --untie-embeddings-and-output-weights"));
  }

  void read_recompute_and_attention() {
    if (has("recompute-activations")) s_.recompute = Recompute::selective;
    if (has("recompute-granularity")) {
      const std::string g = text(at("recompute-granularity"));
      if (g == "selective") {
        s_.recompute = Recompute::selective;
      } else if (g == "full") {
        s_.recompute = Recompute::full;
        const bool every_layer = has("recompute-method") && text(at("recompute-method")) == "uniform" &&
                                 has("recompute-num-layers") && integer(at("recompute-num-layers"), 1, 1 << 20) == 1;
        if (!every_layer)
          note(at("recompute-granularity"), "full recompute is costed as every layer checkpointed on its own "
                                            "(--recompute-method uniform --recompute-num-layers 1)");
      } else {
        fail(at("recompute-granularity").value->pos(), "recompute-granularity", "expected full or selective, found '" + g + "'");
      }
    }
    if (has("recompute-modules")) read_recompute_modules(at("recompute-modules"));
    // TransformerEngine (the default --transformer-impl) fuses attention; the local
    // implementation does only with --use-flash-attn; --attention-backend says it outright.
    const bool local = has("transformer-impl") && text(at("transformer-impl")) == "local";
    s_.flash_attention = !local || has("use-flash-attn");
    if (has("attention-backend")) {
      const std::string b = text(at("attention-backend"));
      if (b == "unfused" || b == "local") s_.flash_attention = false;
    }
  }

  // --recompute-modules (Megatron-Core: read under --recompute-granularity selective only).
  void read_recompute_modules(const Arg& a) {
    if (s_.recompute != Recompute::selective)
      return note(a, "read with --recompute-granularity selective only; these arguments say " +
                         std::string(to_string(s_.recompute)));
    if (a.list.empty()) fail(a.pos, a.name, "expected module names such as core_attn moe_act, found none");
    s_.recompute_modules = {.core_attn = false};
    s_.where.recompute_modules = a.pos;
    for (const ShellWord& w : a.list) {
      std::string why;
      const auto expanded = script_.expand(w.text, w.pos(), why);
      if (!expanded) fail(w.pos(), a.name, "expected module names stepsim can read without running the script: " + why);
      std::istringstream names(*expanded);
      for (std::string name; names >> name;)
        if (const std::string refused = recompute_module_refused(name); !refused.empty())
          note(w.pos(), "--recompute-modules " + name + ": " + refused + "; costed as kept");
        else if (!models::add_recompute_module(s_.recompute_modules, name))
          fail(w.pos(), a.name, "expected one of " + megatron_recompute_module_list() + ", found '" + name + "'");
    }
    if (s_.recompute_modules == models::RecomputeModules{.core_attn = false}) s_.recompute = Recompute::none;
    if (const std::string why = recompute_modules_not_costed(s_); !why.empty()) note(a, why);
  }

  void note_the_rest() {
    for (const Arg& a : args()) {
      if (is_valued(a.name) || is_switch(a.name) || is_listed(a.name) || has_no_effect(a.name)) continue;
      if (a.name == "rampup-batch-size") note(a, "the batch ramp-up is not modelled: every step is costed at the global batch");
      else note(a, "not a Megatron-LM argument stepsim knows; not modelled");
    }
    for (const char* name : {"no-overlap-p2p-communication", "overlap-param-gather-with-optimizer-step",
                             "overlap-p2p-communication-warmup-flush", "defer-embedding-wgrad-compute", "tp-comm-overlap-rs-dgrad"})
      if (has(name)) note(at(name), "not modelled");
    if (has("clip-grad") && text(at("clip-grad")) != "0" && text(at("clip-grad")) != "0.0")
      note(at("clip-grad"), "the gradient norm's pass over every gradient is not costed");
    if (has("optimizer") && text(at("optimizer")) != "adam")
      note(at("optimizer"), "stepsim costs Adam's states and step, not " + text(at("optimizer")) + "'s");
  }

  const models::ModelSpec& model_;
  const Training& training_;
  Strategy& s_;
};

}  // namespace

const std::vector<std::string>& megatron_args_sets() {
  static const std::vector<std::string> keys{
      "tp",          "pp",          "v",           "schedule",          "micro_batch",     "sequence_parallel",
      "recompute",   "dp_overlap",  "dp_bucket_size", "flash_attention", "distributed_optimizer", "tp_comm_overlap",
      "overlap_param_gather", "grad_reduce_in_bf16", "fp8_param_gather", "zero_stage", "ep", "etp", "moe_deepep",
      "recompute_modules", "first_stage_layers", "last_stage_layers", "optimizer_states", "pipeline_split_counts", "mtp_layers"};
  return keys;
}

void apply_megatron_args(const config::ShellScript& script, const models::ModelSpec& model, const Training& training,
                         Strategy& s) {
  MegatronArgsReader(script, model, training, s).read();
}

}  // namespace stepsim::plan
