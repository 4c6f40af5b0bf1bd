// The words of a shell launch script or an arguments file, each with the position of every one
// of its characters, and the shell variables the file assigns. Enough of sh's quoting to read
// what people launch training with (Megatron-LM's example scripts: `VAR=value`, arrays of
// `--flag value` lines, `"$VAR"`, `${VAR:-default}`, comments, `\` line continuations); it runs
// nothing: command substitution and arithmetic stay as written, for the reader to refuse where
// it needs their value.
//
// A word is split on whitespace even inside quotes (`ARGS="--num-layers 24 --hidden-size 1024"`
// holds four words), because flags live in such strings; quotes only keep `#`, `;`, `(`, `)` and
// `|` from ending a word.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/config_error.hpp"

namespace stepsim::config {

struct ShellWord {
  std::string text;                ///< quotes and backslashes removed
  std::vector<SourcePos> at;       ///< position of each character of text
  SourcePos pos() const { return at.empty() ? SourcePos{} : at.front(); }
};

struct ShellAssignment {
  std::string value;               ///< as written (quotes removed), not yet expanded
  SourcePos pos;                   ///< of the name
};

struct ShellScript {
  std::vector<ShellWord> words;    ///< every word but assignments, in file order
  /// NAME -> its assignments in file order (NAME=value, export NAME=value).
  std::map<std::string, std::vector<ShellAssignment>> variables;

  /// `text` with $NAME, ${NAME}, ${NAME:-default} / ${NAME-default} / ${NAME:=default} replaced
  /// by the value last assigned before `before`, itself expanded (10 levels deep at most).
  /// nullopt, with `why` set, where something cannot be known without running the script: a
  /// variable the file does not assign ($1, the environment), $(...), $((...)), backquotes.
  std::optional<std::string> expand(const std::string& text, const SourcePos& before, std::string& why) const;
};

/// Throws ConfigError at the position of an unterminated quote.
ShellScript read_shell_script(const std::string& text, const std::string& file);

}  // namespace stepsim::config
