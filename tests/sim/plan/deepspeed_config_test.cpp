// A DeepSpeed ds_config.json read into a strategy (sim/plan/deepspeed_config.hpp): what it sets,
// what it checks against the scenario, what it reports as not modelled, and where it says so.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "sim/config/yaml_field.hpp"
#include "sim/plan/deepspeed_config.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim::plan;

namespace {

Training training(std::int64_t global_batch = 64, Precision p = Precision::bf16) {
  Training t;
  t.global_batch = global_batch;
  t.precision = p;
  return t;
}

Strategy applied(const std::string& json, const Training& t = training(), int gpus = 8) {
  Strategy s;
  const auto doc = stepsim::config::YamlDocument::load_string(json, "ds.json");
  apply_deepspeed_config(doc.root(), t, gpus, s);
  return s;
}

bool has_note(const Strategy& s, const std::string& text) {
  return std::any_of(s.unmodelled.begin(), s.unmodelled.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("every key the reader models comes back as the strategy's value") {
  const Strategy s = applied(R"({
  "train_batch_size": 64,
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 2,
  "bf16": {"enabled": true},
  "zero_optimization": {"stage": 3, "overlap_comm": true, "stage3_param_persistence_threshold": 1e4,
                        "stage3_max_reuse_distance": 2.5e8}
})");
  CHECK(s.framework == Framework::deepspeed);
  CHECK(s.zero_stage == 3);
  CHECK(s.micro_batch == 4);
  CHECK(s.dp_overlap);
  CHECK(s.zero3_persistence_threshold == 10'000);
  CHECK(s.zero3_max_reuse_distance == 250'000'000);
  CHECK(s.unmodelled.empty());
  // Below ZeRO-3 the bucket is the DP reduction's, in 16-bit gradients; DeepSpeed's default
  // overlap_comm is off there.
  const Strategy z2 = applied(R"({"zero_optimization": {"stage": 2, "reduce_bucket_size": 2e8}})");
  CHECK(z2.zero_stage == 2);
  CHECK(z2.dp_bucket_bytes == 400'000'000);
  CHECK_FALSE(z2.dp_overlap);
  const Strategy defaults = applied(R"({"zero_optimization": {"stage": 1}})");
  CHECK(defaults.dp_bucket_bytes == 1'000'000'000);
  // "auto" leaves the scenario's value.
  const Strategy automatic = applied(R"({"train_micro_batch_size_per_gpu": "auto", "train_batch_size": "auto",
                                        "zero_optimization": {"stage": 3, "stage3_max_reuse_distance": "auto"}})");
  CHECK(automatic.micro_batch == 1);
  CHECK(automatic.zero3_max_reuse_distance == 1'000'000'000);
}

TEST_CASE("keys that change a step's cost and are not modelled become positioned notes; the rest are read and left") {
  const Strategy s = applied(R"({
  "gradient_clipping": 1.0,
  "steps_per_print": 10,
  "scheduler": {"type": "WarmupLR"},
  "optimizer": {"type": "Lamb"},
  "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "none"},
                        "stage3_prefetch_bucket_size": 5e7, "stage3_gather_16bit_weights_on_model_save": true},
  "made_up_key": 1
})");
  CHECK(has_note(s, "ds.json:2:24: gradient_clipping: the gradient norm's pass"));
  CHECK(has_note(s, "optimizer.type: stepsim costs Adam's states and step, not Lamb's"));
  CHECK(s.offload_optimizer);
  CHECK(has_note(s, "zero_optimization.offload_optimizer: pageable host memory (pin_memory false"));
  CHECK(has_note(s, "zero_optimization.stage3_prefetch_bucket_size: not modelled"));
  CHECK(has_note(s, "made_up_key: not a DeepSpeed key stepsim knows"));
  CHECK(s.unmodelled.size() == 5);  // not steps_per_print, the scheduler, offload to "none", model saving
}

TEST_CASE("a config that disagrees with the scenario is refused where it says so") {
  CHECK_THROWS_WITH(applied("{\n  \"train_batch_size\": 32\n}"),
                    "ds.json:2:23: train_batch_size: expected the scenario's training.global_batch, 64, found '32'");
  CHECK_THROWS_WITH(applied(R"({"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4})"),
                    doctest::Contains("gradient_accumulation_steps: expected 2 (global batch 64 / (micro batch 4 x dp 8))"));
  CHECK_THROWS_WITH(applied(R"({"fp16": {"enabled": true}})"),
                    doctest::Contains("fp16.enabled: the scenario trains in bf16; expected training.precision: fp16"));
  CHECK_THROWS_WITH(applied(R"({"zero_optimization": {"stage": 4}})"), doctest::Contains("expected a ZeRO stage from 0 to 3"));
  CHECK_THROWS_WITH(applied(R"({"zero_optimization": {"stage": 3, "stage3_max_reuse_distance": 1.5}})"),
                    doctest::Contains("expected a whole number of elements"));
  CHECK_THROWS_WITH(applied("[1, 2]"), doctest::Contains("ds.json:1:1: expected a YAML mapping at the top level"));
}

TEST_CASE("a strategy names its DeepSpeed config beside the scenario and may not repeat what it sets") {
  const auto dir = std::filesystem::temp_directory_path() / "stepsim_deepspeed_config_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ds.json") << R"({"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 3}})";
  const std::string file = (dir / "ds.json").string();
  const auto sc = plan_test::scenario(plan_test::small_gpt("{name: ds, deepspeed_config: " + file + "}"));
  CHECK(sc.strategies[0].framework == Framework::deepspeed);
  CHECK(sc.strategies[0].zero_stage == 3);
  CHECK(sc.strategies[0].micro_batch == 2);
  CHECK_THROWS_WITH(plan_test::scenario(plan_test::small_gpt("{name: ds, zero_stage: 1, deepspeed_config: " + file + "}")),
                    doctest::Contains("zero_stage is set by the DeepSpeed config"));
  CHECK_THROWS_WITH(plan_test::scenario(plan_test::small_gpt("{name: ds, framework: generic, deepspeed_config: " + file + "}")),
                    doctest::Contains("a strategy with deepspeed_config runs framework: deepspeed"));
  CHECK_THROWS_WITH(plan_test::scenario(plan_test::small_gpt("{name: ds, deepspeed_config: " + (dir / "none.json").string() + "}")),
                    doctest::Contains("no DeepSpeed config at"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("offload_optimizer and offload_param to the CPU are ZeRO-Offload and ZeRO-Infinity; to NVMe it is noted") {
  const Strategy cpu = applied(R"({"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "pin_memory": true}}})");
  CHECK(cpu.offload_optimizer);
  CHECK(cpu.unmodelled.empty());
  const Strategy nvme = applied(R"({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme", "pin_memory": true},
                                    "offload_param": {"device": "cpu"}}})");
  CHECK(nvme.offload_optimizer);
  CHECK(has_note(nvme, "zero_optimization.offload_optimizer.device: the optimizer is costed as offloaded to the CPU"));
  CHECK(nvme.offload_param);
  const Strategy none = applied(R"({"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "none"}}})");
  CHECK_FALSE(none.offload_optimizer);
  CHECK_THROWS_WITH(applied(R"({"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "gpu"}}})"),
                    doctest::Contains("offload_optimizer.device: expected one of"));
}

TEST_CASE("data_types.grad_accum_dtype: fp32 accumulation selects BF16_Optimizer below ZeRO-2, refused 16-bit without ZeRO") {
  const Strategy zero1 = applied(R"({"zero_optimization": {"stage": 1}, "data_types": {"grad_accum_dtype": "fp32"}})");
  CHECK(zero1.deepspeed_fp32_accumulation == true);
  CHECK(zero1.unmodelled.empty());
  CHECK(applied(R"({"zero_optimization": {"stage": 1}, "data_types": {"grad_accum_dtype": "bfloat16"}})")
            .deepspeed_fp32_accumulation == false);
  CHECK_FALSE(applied(R"({"zero_optimization": {"stage": 1}})").deepspeed_fp32_accumulation.has_value());
  // DeepSpeed refuses a bf16 model's 16-bit accumulation without ZeRO (outside its pipeline engine).
  CHECK_THROWS_WITH(applied(R"({"data_types": {"grad_accum_dtype": "bf16"}})"),
                    doctest::Contains("ds.json:1:37: data_types.grad_accum_dtype: a bf16 model without ZeRO accumulates"));
  CHECK_THROWS_WITH(applied(R"({"data_types": {"grad_accum_dtype": "int8"}})"),
                    doctest::Contains("expected fp32, bf16 or fp16, found 'int8'"));
  // At ZeRO-2 the ZeRO optimizer keeps no fp32 buffer of its own here: noted.
  const Strategy zero2 = applied(R"({"zero_optimization": {"stage": 2}, "data_types": {"grad_accum_dtype": "fp32"}})");
  CHECK(has_note(zero2, "data_types.grad_accum_dtype: fp32 accumulation is costed only for bf16 below ZeRO-2"));
}
