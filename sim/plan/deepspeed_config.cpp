#include "sim/plan/deepspeed_config.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "sim/config/yaml_field.hpp"
#include "sim/plan/framework_defaults.hpp"

namespace stepsim::plan {
namespace {

using config::Field;

bool is_auto(const Field& f) { return f.is_scalar() && f.as_string() == "auto"; }

// A count written as DeepSpeed's examples write them (5e8, 500000000) or "auto" (nullopt).
std::optional<std::int64_t> count(const Field& f) {
  if (is_auto(f)) return std::nullopt;
  const double v = f.as_double();
  if (!std::isfinite(v) || v < 0 || v != std::floor(v) || v > 9.0e15)
    f.fail("expected a whole number of elements or \"auto\", found " + f.found());
  return static_cast<std::int64_t>(v);
}

std::optional<bool> flag(const Field& f) {
  if (is_auto(f)) return std::nullopt;
  return f.as_bool();
}

class Reader {
 public:
  Reader(const Training& training, int gpus, Strategy& s)
      : training_(training), gpus_(gpus), s_(s), first_note_(s.unmodelled.size()) {}

  void read(const Field& root) {
    if (!root.is_map()) root.fail("expected a DeepSpeed config (a JSON object), found " + root.found());
    // zero_optimization first: the stage decides what reduce_bucket_size and overlap_comm mean.
    if (auto z = root.optional("zero_optimization")) read_zero(*z);
    if (auto x = root.optional("train_micro_batch_size_per_gpu"); x && !is_auto(*x)) s_.micro_batch = positive(*x);
    for (const auto& [key, f] : root.entries()) {
      if (key == "zero_optimization" || key == "train_micro_batch_size_per_gpu") continue;
      if (key == "train_batch_size") check_global_batch(f);
      else if (key == "gradient_accumulation_steps") check_accumulation(f);
      else if (key == "fp16" || key == "bf16") read_precision(key, f);
      else if (key == "optimizer") read_optimizer(f);
      else if (key == "data_types") read_data_types(f);
      else if (key == "gradient_clipping") {
        if (!is_auto(f) && f.as_double() > 0) note(f, "the gradient norm's pass over every gradient is not costed");
      } else if (key == "activation_checkpointing") {
        note(f, "recomputation is the strategy's recompute key here; DeepSpeed's checkpointing options are not modelled");
      } else if (kNoEffect.count(key) == 0) {
        note(f, kKnownUnmodelled.count(key) ? "not modelled" : "not a DeepSpeed key stepsim knows; not modelled");
      }
    }
    s_.framework = Framework::deepspeed;
  }

 private:
  // Read and left: they change no step's time (logging, profiling, the schedule of the learning
  // rate, checkpoint files, the loss scaler's settings).
  inline static const std::set<std::string> kNoEffect{
      "steps_per_print", "wall_clock_breakdown", "dump_state", "tensorboard", "wandb", "csv_monitor", "comet",
      "flops_profiler", "comms_logger", "checkpoint", "scheduler", "zero_allow_untested_optimizer",
      "zero_force_ds_cpu_optimizer", "memory_breakdown", "seed"};
  inline static const std::set<std::string> kKnownUnmodelled{
      "prescale_gradients", "gradient_predivide_factor", "communication_data_type", "sparse_gradients", "amp",
      "data_efficiency", "compression_training", "aio", "elasticity", "autotuning", "pipeline",
      "curriculum_learning", "sequence_parallel_size", "torch_autocast", "hybrid_engine", "nebula"};

  // Kept in file order (zero_optimization is read first, for its stage).
  void note(const Field& f, const std::string& what) {
    const auto pos = f.pos();
    const std::string text = config::to_string(pos) + ": " + f.path() + ": " + what;
    const auto at = std::upper_bound(noted_lines_.begin(), noted_lines_.end(), pos.line);
    s_.unmodelled.insert(s_.unmodelled.begin() + static_cast<std::ptrdiff_t>(first_note_) + (at - noted_lines_.begin()), text);
    noted_lines_.insert(at, pos.line);
  }

  int positive(const Field& f) {
    const auto v = count(f);
    if (!v || *v < 1 || *v > (1 << 20)) f.fail("expected a whole number from 1 to 1048576, found " + f.found());
    return static_cast<int>(*v);
  }

  void read_zero(const Field& z) {
    if (!z.is_map()) z.fail("expected the zero_optimization object, found " + z.found());
    if (auto x = z.optional("stage")) {
      const auto v = count(*x);
      if (!v || *v > 3) x->fail("expected a ZeRO stage from 0 to 3, found " + x->found());
      s_.zero_stage = static_cast<int>(*v);
      s_.where.zero_stage = x->pos();
    }
    const bool stage3 = s_.zero_stage == 3;
    s_.framework = Framework::deepspeed;
    apply_framework_defaults(s_);  // they depend on the stage just read
    for (const auto& [key, f] : z.entries()) {
      if (key == "stage") continue;
      if (key == "overlap_comm") {
        if (auto v = flag(f)) s_.dp_overlap = *v;
      } else if (key == "reduce_bucket_size") {
        if (auto v = count(f)) {
          if (*v == 0) f.fail("expected a bucket of at least one element, found " + f.found());
          if (stage3) note(f, "ZeRO-3's gradients are reduce-scattered per layer here, not per bucket");
          else s_.dp_bucket_bytes = 2 * *v;
        }
      } else if (key == "stage3_param_persistence_threshold") {
        if (auto v = count(f)) s_.zero3_persistence_threshold = *v;
      } else if (key == "stage3_max_reuse_distance") {
        if (auto v = count(f)) s_.zero3_max_reuse_distance = *v;
      } else if (key == "offload_optimizer" || key == "offload_param") {
        read_offload(key, f);
      } else if (key == "stage3_gather_16bit_weights_on_model_save" || key == "stage3_gather_fp16_weights_on_model_save" ||
                 key == "load_from_fp32_weights" || key == "ignore_unused_parameters" || key == "elastic_checkpoint") {
        // Checkpoint saving and loading: no effect on a step's time.
      } else if (key == "stage3_prefetch_bucket_size" || key == "stage3_max_live_parameters") {
        note(f, "not modelled: zero_prefetch (layers fetched ahead) is what is costed");
      } else {
        note(f, "not modelled");
      }
    }
  }

  // offload_optimizer to the CPU is ZeRO-Offload (Strategy::offload_optimizer), offload_param
  // ZeRO-Infinity's parameter offload (Strategy::offload_param); to NVMe each is that plus
  // swapping to the drive, which is not costed.
  void read_offload(const std::string& key, const Field& f) {
    if (!f.is_map()) f.fail("expected an object such as {\"device\": \"cpu\"}, found " + f.found());
    const auto device = f.optional("device");
    const std::string where = device ? device->as_choice({"none", "cpu", "nvme"}) : "none";
    if (where == "none") return;
    if (key == "offload_param") {
      s_.offload_param = true;
      s_.where.offload_param = device->pos();
    } else {
      s_.offload_optimizer = true;
      s_.where.offload_optimizer = device->pos();
    }
    if (where == "nvme")
      note(*device, std::string(key == "offload_param" ? "the parameters are" : "the optimizer is") +
                        " costed as offloaded to the CPU; swapping to NVMe is not");
    const auto pinned = f.optional("pin_memory");
    if (!pinned || !pinned->as_bool())
      note(pinned ? *pinned : f, "pageable host memory (pin_memory false, DeepSpeed's default): the copies are costed "
                                 "at the pinned PCIe rate");
  }

  void check_global_batch(const Field& f) {
    const auto v = count(f);
    if (v && *v != training_.global_batch)
      f.fail("expected the scenario's training.global_batch, " + std::to_string(training_.global_batch) + ", found " +
             f.found());
  }

  void check_accumulation(const Field& f) {
    const auto v = count(f);
    if (!v) return;
    const int tp = std::max(1, s_.tp), pp = std::max(1, s_.pp);
    const std::int64_t dp = s_.dp > 0 ? s_.dp : gpus_ / (tp * pp);
    const std::int64_t per_step = static_cast<std::int64_t>(s_.micro_batch) * std::max<std::int64_t>(dp, 1);
    if (training_.global_batch % per_step != 0) return;  // check_strategy says what is wrong
    if (*v != training_.global_batch / per_step)
      f.fail("expected " + std::to_string(training_.global_batch / per_step) + " (global batch " +
             std::to_string(training_.global_batch) + " / (micro batch " + std::to_string(s_.micro_batch) + " x dp " +
             std::to_string(dp) + ")), found " + f.found());
  }

  void read_precision(const std::string& key, const Field& f) {
    if (!f.is_map()) f.fail("expected an object such as {\"enabled\": true}, found " + f.found());
    const auto enabled = f.optional("enabled");
    if (!enabled) return;
    const auto on = flag(*enabled);
    const Precision p = key == "fp16" ? Precision::fp16 : Precision::bf16;
    const Precision trains = precision_of(training_, s_);
    if (on && *on && trains != p)
      enabled->fail("the scenario trains in " + std::string(to_string(trains)) + "; expected training.precision: " +
                    key + " for this config");
    if (on && !*on && trains == p)
      enabled->fail("the scenario trains in " + key + " but this config turns it off");
  }

  // data_types.grad_accum_dtype (runtime/config.py, DtypeEnum's spellings). bf16 without ZeRO
  // must accumulate in fp32: DeepSpeed refuses 16-bit accumulation there outside its pipeline
  // engine (engine.py _do_optimizer_sanity_check), and inside it keeps a bf16 buffer stepsim does
  // not model. ZeRO-2/3 take no fp32 buffer of their own here.
  void read_data_types(const Field& f) {
    if (!f.is_map()) f.fail("expected an object such as {\"grad_accum_dtype\": \"fp32\"}, found " + f.found());
    for (const auto& [key, x] : f.entries()) {
      if (key != "grad_accum_dtype") {
        note(x, "not modelled");
        continue;
      }
      const std::string d = x.as_string();
      const bool fp32 = d == "fp32" || d == "float32" || d == "float";
      const bool half = d == "fp16" || d == "float16" || d == "half" || d == "bf16" || d == "bfloat16" || d == "bfloat";
      if (!fp32 && !half) x.fail("expected fp32, bf16 or fp16, found " + x.found());
      const bool bf16 = precision_of(training_, s_) != Precision::fp16;
      if (bf16 && !fp32 && s_.zero_stage == 0)
        x.fail("a bf16 model without ZeRO accumulates its gradients in fp32 under DeepSpeed (BF16_Optimizer); "
               "expected fp32, found " + x.found());
      if (fp32 && (!bf16 || s_.zero_stage >= 2))
        note(x, "fp32 accumulation is costed only for bf16 below ZeRO-2 (BF16_Optimizer); here the gradients "
                "accumulate in the model's dtype");
      s_.deepspeed_fp32_accumulation = fp32;
    }
  }

  void read_optimizer(const Field& f) {
    if (!f.is_map()) f.fail("expected an object such as {\"type\": \"AdamW\"}, found " + f.found());
    const auto type = f.optional("type");
    if (!type) return;
    const std::string t = type->as_string();
    if (t != "Adam" && t != "AdamW" && t != "FusedAdam" && t != "adam" && t != "adamw")
      note(*type, "stepsim costs Adam's states and step, not " + t + "'s");
  }

  const Training& training_;
  int gpus_;
  Strategy& s_;
  std::size_t first_note_;        // notes before this reader's
  std::vector<int> noted_lines_;  // line of each of its notes, ascending
};

}  // namespace

const std::vector<std::string>& deepspeed_config_sets() {
  static const std::vector<std::string> keys{"zero_stage", "micro_batch", "dp_bucket_size", "dp_overlap",
                                             "zero3_persistence_threshold", "zero3_max_reuse_distance",
                                             "offload_optimizer", "offload_param"};
  return keys;
}

void apply_deepspeed_config(const config::Field& root, const Training& training, int gpus, Strategy& s) {
  Reader(training, gpus, s).read(root);
}

}  // namespace stepsim::plan
