// Megatron-LM's command line as a table: every --flag of a launch script or arguments file, in
// order, with its value's words and their positions (megatron_flags.hpp says which flags take a
// value or a list of words). What the flags mean is megatron_args.cpp's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/shell_words.hpp"

namespace stepsim::plan {

struct MegatronArg {
  std::string name;  ///< without the leading "--"
  config::SourcePos pos;
  std::optional<config::ShellWord> value;
  std::vector<config::ShellWord> list;  ///< the words of a listed flag (is_listed)
};

class MegatronArgTable {
 public:
  /// Throws config::ConfigError at a flag that takes a value and has none, a listed flag given
  /// twice, or a flag stepsim reads given twice with different values.
  explicit MegatronArgTable(const config::ShellScript& script);

  bool has(const std::string& name) const { return index_.count(name) > 0; }
  /// Requires: has(name).
  const MegatronArg& at(const std::string& name) const { return args_[index_.at(name)]; }
  const std::vector<MegatronArg>& args() const { return args_; }

  /// The value as the shell would pass it; throws where that needs the script to run.
  std::string text(const MegatronArg& a) const;
  std::int64_t integer(const MegatronArg& a, std::int64_t low, std::int64_t high) const;
  [[noreturn]] static void fail(const config::SourcePos& pos, const std::string& name, const std::string& message);

  /// A warning about the file: a flag that changes the cost and is not modelled, or what an
  /// absent flag means.
  void note(const config::SourcePos& pos, std::string text) { notes_.emplace_back(pos, std::move(text)); }
  void note(const MegatronArg& a, const std::string& what) { note(a.pos, "--" + a.name + ": " + what); }
  /// The notes as "file:line:column: text", in file order.
  std::vector<std::string> notes_in_file_order() const;

 protected:
  const config::ShellScript& script_;

 private:
  std::vector<MegatronArg> args_;
  std::map<std::string, std::size_t> index_;
  std::vector<std::pair<config::SourcePos, std::string>> notes_;
};

}  // namespace stepsim::plan
