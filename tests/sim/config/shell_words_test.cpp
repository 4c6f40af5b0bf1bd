// The words and variables of a launch script (sim/config/shell_words.hpp): sh's quoting, the
// positions of every character, and the expansions that can be known without running it.
#include <doctest/doctest.h>

#include "sim/config/shell_words.hpp"

using namespace stepsim::config;

namespace {

std::vector<std::string> texts(const ShellScript& s) {
  std::vector<std::string> out;
  for (const auto& w : s.words) out.push_back(w.text);
  return out;
}

std::string expanded(const ShellScript& s, const std::string& text, int line = 1000) {
  std::string why;
  const auto v = s.expand(text, {"f.sh", line, 1}, why);
  return v ? *v : "<" + why + ">";
}

}  // namespace

TEST_CASE("words: comments, continuations, arrays and quoted strings of flags") {
  const auto s = read_shell_script(
      "#!/bin/bash\n"
      "ARGS=(\n"
      "    --num-layers 24 # a comment\n"
      "    --hidden-size \\\n"
      "    1024\n"
      ")\n"
      "MORE=\"--seq-length 2048 --bf16\"\n"
      "torchrun pretrain.py ${ARGS[@]} $MORE --lr='1e-4'\n",
      "f.sh");
  CHECK(texts(s) == std::vector<std::string>{"--num-layers", "24", "--hidden-size", "1024", "--seq-length", "2048",
                                             "--bf16", "torchrun", "pretrain.py", "${ARGS[@]}", "$MORE", "--lr=1e-4"});
  // Every character keeps its own line and column, inside quotes too.
  CHECK(s.words[0].pos() == SourcePos{"f.sh", 3, 5});
  CHECK(s.words[3].pos() == SourcePos{"f.sh", 5, 5});
  CHECK(s.words[4].pos() == SourcePos{"f.sh", 7, 7});  // after MORE="
  CHECK(s.words[11].at.back() == SourcePos{"f.sh", 8, 48});  // the 4 of '1e-4'
  REQUIRE(s.variables.count("MORE") == 1);
  CHECK(s.variables.at("MORE").front().value == "--seq-length 2048 --bf16");
  CHECK(s.variables.count("ARGS") == 1);
}

TEST_CASE("expansion: the last assignment before the use, defaults, and what needs the script to run") {
  const auto s = read_shell_script(
      "TP=4\n"
      "export PP=${PP:-2}\n"
      "GPUS_PER_NODE=8\n"
      "TP=8\n"
      "SIZE=\"${TP}x$PP\"\n"
      "WORLD=$(($GPUS_PER_NODE*2))\n"
      "CKPT=$1\n",
      "f.sh");
  CHECK(expanded(s, "$TP", 2) == "4");
  CHECK(expanded(s, "$TP") == "8");
  CHECK(expanded(s, "$PP") == "2");       // unset before, so its default
  CHECK(expanded(s, "$SIZE") == "8x2");   // expanded where SIZE was assigned
  CHECK(expanded(s, "${NODES:-16}") == "16");
  CHECK(expanded(s, "$NODES").find("is not assigned in this file") != std::string::npos);
  CHECK(expanded(s, "$WORLD").find("arithmetic") != std::string::npos);
  CHECK(expanded(s, "$CKPT").find("command line") != std::string::npos);
  CHECK(expanded(s, "`hostname`").find("command substitution") != std::string::npos);
}

TEST_CASE("a use sees only earlier assignments, so no chain loops; a chain stops after ten levels") {
  const auto loop = read_shell_script("A=$B\nB=$A\nA=$B\n", "f.sh");
  CHECK(expanded(loop, "$A").find("is not assigned") != std::string::npos);  // B=$A saw no A yet
  std::string chain = "V0=1\n";
  for (int i = 1; i <= 11; ++i) chain += "V" + std::to_string(i) + "=$V" + std::to_string(i - 1) + "\n";
  const auto s = read_shell_script(chain, "f.sh");
  CHECK(expanded(s, "$V9") == "1");
  CHECK(expanded(s, "$V11").find("more than 10 variables") != std::string::npos);
}

TEST_CASE("an unterminated quote is an error at the quote") {
  CHECK_THROWS_WITH(read_shell_script("X=1\nARGS=\"--bf16\n--fp16\n", "f.sh"), doctest::Contains("f.sh:2:6"));
  CHECK_THROWS_WITH(read_shell_script("echo 'a\n", "f.sh"), doctest::Contains("unterminated single quote"));
}
