// Every error kind a YAML reader can hit, with its whole message pinned (STYLE.md section 4).
#include "sim/config/yaml_field.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

using namespace stepsim::config;

namespace {
// The message a reader would throw for `read` applied to the root of `yaml`.
template <typename Read>
std::string error_of(const std::string& yaml, Read read) {
  try {
    auto doc = YamlDocument::load_string(yaml, "s.yaml");
    read(doc.root());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("positions are 1-based file:line:column, and the one formatter writes them") {
  CHECK(to_string(SourcePos{"a.yaml", 3, 7}) == "a.yaml:3:7");
  CHECK(to_string(SourcePos{"a.yaml", 0, 0}) == "a.yaml");
}

TEST_CASE("a bare number where a unit is needed") {
  const std::string yaml = "links:\n  - bandwidth: 450\n";
  CHECK(error_of(yaml, [](const Field& r) { r.required("links").items()[0].required("bandwidth").as_bandwidth(); }) ==
        "s.yaml:2:16: links[0].bandwidth: expected a bandwidth with a unit such as 450GB/s, found '450'");
}

TEST_CASE("an unknown unit lists the accepted ones") {
  CHECK(error_of("latency: 3 weeks\n", [](const Field& r) { r.required("latency").as_duration_ps(); }) ==
        "s.yaml:1:10: latency: unknown unit 'weeks' in '3 weeks'; expected one of ps, ns, us, ms, s");
}

TEST_CASE("a negative or zero size where that makes no sense") {
  CHECK(error_of("memory: -80GB\n", [](const Field& r) { r.required("memory").as_bytes(); }) ==
        "s.yaml:1:9: memory: expected a positive size with a unit such as 80GiB, found '-80GB'");
  CHECK(error_of("memory: 0GB\n", [](const Field& r) { r.required("memory").as_bytes(); }) ==
        "s.yaml:1:9: memory: expected a positive size with a unit such as 80GiB, found '0GB'");
}

TEST_CASE("an unknown key suggests the close one") {
  const std::string yaml = "strategy:\n  tp: 2\n  zero_stge: 3\n";
  CHECK(error_of(yaml, [](const Field& r) { r.required("strategy").check_keys({"tp", "pp", "zero_stage"}); }) ==
        "s.yaml:3:3: strategy: unknown key 'zero_stge'; did you mean 'zero_stage'?");
}

TEST_CASE("an unknown key far from every known one lists them") {
  CHECK(error_of("colour: red\n", [](const Field& r) { r.check_keys({"name", "model"}); }) ==
        "s.yaml:1:1: unknown key 'colour'; expected one of name, model");
}

TEST_CASE("a wrong type") {
  CHECK(error_of("tp: two\n", [](const Field& r) { r.required("tp").as_int(); }) ==
        "s.yaml:1:5: tp: expected an integer, found 'two'");
  CHECK(error_of("tp: [1, 2]\n", [](const Field& r) { r.required("tp").as_int(); }) ==
        "s.yaml:1:5: tp: expected an integer, found a sequence");
  CHECK(error_of("strategies: {a: 1}\n", [](const Field& r) { r.required("strategies").items(); }) ==
        "s.yaml:1:13: strategies: expected a sequence, found a mapping");
  CHECK(error_of("overlap: maybe\n", [](const Field& r) { r.required("overlap").as_bool(); }) ==
        "s.yaml:1:10: overlap: expected true or false, found 'maybe'");
}

TEST_CASE("a missing required key points at its parent mapping") {
  const std::string yaml = "name: x\ntraining:\n  global_batch: 64\n";
  CHECK(error_of(yaml, [](const Field& r) { r.required("training").required("seq_len"); }) ==
        "s.yaml:3:3: training: missing required key 'seq_len'");
  CHECK(error_of(yaml, [](const Field& r) { r.required("model"); }) ==
        "s.yaml:1:1: missing required key 'model'");
}

TEST_CASE("a duplicate key") {
  CHECK(error_of("tp: 2\npp: 2\ntp: 4\n", [](const Field& r) { r.check_keys({"tp", "pp"}); }) ==
        "s.yaml:3:1: duplicate key 'tp'");
}

TEST_CASE("a choice out of a fixed set suggests the close one") {
  CHECK(error_of("schedule: 1fb1\n", [](const Field& r) { r.required("schedule").as_choice({"gpipe", "1f1b"}); }) ==
        "s.yaml:1:11: schedule: expected one of gpipe, 1f1b, found '1fb1'; did you mean '1f1b'?");
}

TEST_CASE("an empty file, a file that is not YAML, a top level that is not a mapping") {
  auto load = [](const std::string& text) -> std::string {
    try {
      YamlDocument::load_string(text, "s.yaml");
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  };
  CHECK(load("") == "s.yaml: the file is empty; expected a YAML mapping");
  CHECK(load("a: [1, 2\nb: 3\n") == "s.yaml:2:2: not valid YAML: end of sequence flow not found");
  CHECK(load("- 1\n- 2\n") == "s.yaml:1:1: expected a YAML mapping at the top level, found a sequence");
  // yaml-cpp's parser stops at a depth of 500 (its DepthGuard) rather than overflow the stack.
  const std::string deep = "a: " + std::string(600, '[') + std::string(600, ']') + "\n";
  CHECK(load(deep).find("s.yaml:1:") == 0);
  CHECK(load(deep).find(": expected YAML nested at most 499 levels deep") != std::string::npos);
}

TEST_CASE("a file that does not exist") {
  try {
    YamlDocument::load_file("/nonexistent/missing.yaml");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "/nonexistent/missing.yaml: no such file");
  }
}

TEST_CASE("--set replaces a scalar by dotted path, and says when the path leads nowhere") {
  auto doc = YamlDocument::load_string("training:\n  global_batch: 64\nstrategies:\n  - tp: 2\n", "s.yaml");
  doc.set_scalar("training.global_batch", "128");
  doc.set_scalar("strategies[0].tp", "4");
  CHECK(doc.root().required("training").required("global_batch").as_int() == 128);
  CHECK(doc.root().required("strategies").items()[0].required("tp").as_int() == 4);
  try {
    doc.set_scalar("training.global_bach", "1");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "--set training.global_bach=1: training: no key 'global_bach' to set in s.yaml");
  }
}

TEST_CASE("a file that is not UTF-8 is refused at its first bad byte; UTF-8 passes") {
  // YAML 1.2 §5.2: streams are Unicode. A Latin-1 e-acute (0xE9) at line 2, column 9; an
  // overlong '/' (0xC0 0xAF) is no UTF-8 either. "caf\xc3\xa9" is the same word in UTF-8.
  CHECK_THROWS_WITH(stepsim::config::YamlDocument::load_string("a: 1\nname: caf\xe9\n", "t.yaml"),
                    "t.yaml:2:10: expected UTF-8 text (YAML files are Unicode), found the byte 0xe9");
  CHECK_THROWS_WITH(stepsim::config::YamlDocument::load_string("x: \xc0\xaf\n", "t.yaml"),
                    "t.yaml:1:4: expected UTF-8 text (YAML files are Unicode), found the byte 0xc0");
  CHECK(stepsim::config::YamlDocument::load_string("name: caf\xc3\xa9 \xe2\x86\x92\n", "t.yaml")
            .root().required("name").as_string() == "caf\xc3\xa9 \xe2\x86\x92");
}

TEST_CASE("a key that is a sequence or a mapping is refused at the key (found by tests/fuzz)") {
  // yaml-cpp's conversion of such a key to text threw YAML::TypedBadConversion: exit 1.
  const auto doc = YamlDocument::load_string("a: 1\n? [x, y]\n: 2\n", "k.yaml");
  try {
    doc.root().check_keys({"a"});
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "k.yaml:2:3: expected a key that is a name, found a sequence");
  }
  CHECK_THROWS_AS(doc.root().entries(), ConfigError);
}
