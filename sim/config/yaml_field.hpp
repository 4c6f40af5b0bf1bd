// Reading YAML with positions: every value a reader takes carries its file, line, column and key
// path, so any mistake becomes a ConfigError that says where, what was expected and what was found.
//
// Only the `*_yaml.cpp` readers at the edge of a layer use this; they return plain structs and no
// YAML::Node goes past them. A Field is a cheap handle (a yaml-cpp node is reference-counted).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/config_error.hpp"

namespace stepsim::config {

class Field {
 public:
  Field(YAML::Node node, std::shared_ptr<const std::string> file, std::string path);

  SourcePos pos() const;
  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_null() const { return !node_ || node_.IsNull(); }

  /// Throws ConfigError at this value: "key.path: message".
  [[noreturn]] void fail(const std::string& message) const;

  // --- mappings ---------------------------------------------------------------------------------
  /// Requires a mapping whose keys are all in `allowed`, none twice; else the error names the
  /// offending key with "did you mean …?".
  void check_keys(const std::vector<std::string>& allowed) const;
  bool has(const std::string& key) const;
  Field required(const std::string& key) const;  ///< error points at this (parent) mapping
  std::optional<Field> optional(const std::string& key) const;
  std::vector<std::pair<std::string, Field>> entries() const;  ///< mapping in file order

  // --- sequences --------------------------------------------------------------------------------
  std::vector<Field> items() const;  ///< requires a sequence; paths are `key[i]`

  // --- scalars ----------------------------------------------------------------------------------
  std::string as_string() const;
  std::int64_t as_int() const;
  std::int64_t as_positive_int() const;  ///< > 0
  std::int64_t as_non_negative_int() const;
  double as_double() const;
  double as_positive_double() const;
  bool as_bool() const;
  /// One of `choices`, else "expected one of a, b, c, found 'x'" (with "did you mean").
  std::string as_choice(const std::vector<std::string>& choices) const;
  std::int64_t as_bytes() const;      ///< > 0, with a unit
  double as_bandwidth() const;        ///< bytes/s, > 0, with a unit
  std::int64_t as_duration_ps() const;  ///< >= 0, with a unit
  double as_flop_rate() const;        ///< FLOP/s, > 0, with a unit
  double as_count() const;            ///< "300B" = 3e11, > 0

  /// What the value is, for "found …": `'text'` for scalars, `a mapping`, `a sequence`, `nothing`.
  std::string found() const;

 private:
  std::string scalar_or_fail(const std::string& expected) const;
  Field child(const YAML::Node& node, std::string path) const;
  std::string key_text(const YAML::Node& key) const;

  YAML::Node node_;
  std::shared_ptr<const std::string> file_;
  std::string path_;
};

/// A parsed YAML file. Errors: a file that does not exist or cannot be read, an empty file, text
/// that is not YAML (with the parser's position).
class YamlDocument {
 public:
  static YamlDocument load_file(const std::string& path);
  static YamlDocument load_string(const std::string& text, const std::string& name);

  Field root() const;
  /// Replaces the scalar at a dotted path (`training.global_batch`, `strategies[0].tp`) with
  /// `value`; for `--set key=value`. Error when the path does not lead to an existing scalar.
  void set_scalar(const std::string& dotted_path, const std::string& value);

 private:
  YamlDocument(YAML::Node root, std::string file);
  YAML::Node root_;
  std::shared_ptr<const std::string> file_;
};

}  // namespace stepsim::config
