// Positioned configuration errors: the one exception type every reader throws for bad input.
//
// A ConfigError is the user's mistake, never ours. `tools/` catches it once, prints what() and
// exits with code 2. what() is `file:line:column: key.path: message`, line and column 1-based;
// parts that are unknown are left out (a missing file has no line, a top-level error no key path).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace stepsim::config {

struct SourcePos {
  std::string file;  ///< as the user named it
  int line = 0;      ///< 1-based; 0 = unknown
  int column = 0;    ///< 1-based; 0 = unknown
  auto operator<=>(const SourcePos&) const = default;
};

/// The one formatter of positions: `file:line:column`, or `file` when the line is unknown.
std::string to_string(const SourcePos& pos);

class ConfigError : public std::runtime_error {
 public:
  /// key_path is the dotted path of the offending value (`strategies[1].tp`), or empty.
  ConfigError(SourcePos pos, std::string key_path, std::string message);

  const SourcePos& pos() const { return pos_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& message() const { return message_; }

 private:
  SourcePos pos_;
  std::string key_path_;
  std::string message_;
};

/// A plan stopped by one of stepsim's resource limits (events, memory; limits.hpp) while it was
/// simulated: still the user's to fix (a flag, a fidelity), but not a plan that is invalid, so a
/// search that skips invalid plans (advise's what-ifs) must not skip it silently.
class LimitError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

/// `text` with ASCII letters in lower case: names compared without case (GPU, model presets).
std::string ascii_lower(std::string text);

/// The closest candidate within a small edit distance, or "" (ninja's SpellcheckString).
std::string closest_match(const std::string& word, const std::initializer_list<std::string>& candidates);
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace stepsim::config
