#include "sim/config/yaml_field.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/depthguard.h>

#include "sim/config/text_file.hpp"
#include "sim/config/units.hpp"
#include "sim/config/utf8.hpp"

namespace stepsim::config {
namespace {

std::string quote(const std::string& s) { return "'" + s + "'"; }

std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

SourcePos pos_of(const YAML::Mark& mark, const std::string& file) {
  // yaml-cpp marks are 0-based and -1 when a node was built in memory.
  if (mark.line < 0) return {file, 0, 0};
  return {file, mark.line + 1, mark.column + 1};
}

template <typename T>
[[noreturn]] void fail_quantity(const Field& f, const std::variant<T, UnitProblem>& parsed,
                                QuantityKind kind) {
  const auto& problem = std::get<UnitProblem>(parsed);
  if (problem.kind == UnitProblem::Kind::unknown_unit)
    f.fail("unknown unit " + quote(problem.unit) + " in " + f.found() + "; expected one of " +
           accepted_units(kind));
  f.fail("expected " + describe(kind) + ", found " + f.found());
}

template <typename T>
T parse_quantity(const Field& f, std::variant<T, UnitProblem> parsed, QuantityKind kind,
                 bool allow_zero) {
  if (std::holds_alternative<UnitProblem>(parsed)) fail_quantity(f, parsed, kind);
  const T value = std::get<T>(parsed);
  if (value < 0 || (!allow_zero && value == 0))
    f.fail("expected " + std::string(allow_zero ? "a non-negative" : "a positive") + " " +
           describe(kind).substr(2) + ", found " + f.found());
  return value;
}

}  // namespace

Field::Field(YAML::Node node, std::shared_ptr<const std::string> file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}

SourcePos Field::pos() const { return pos_of(node_.Mark(), *file_); }

void Field::fail(const std::string& message) const { throw ConfigError(pos(), path_, message); }

Field Field::child(const YAML::Node& node, std::string path) const {
  return Field(node, file_, std::move(path));
}

std::string Field::found() const {
  if (!node_ || node_.IsNull()) return "nothing";
  if (node_.IsMap()) return "a mapping";
  if (node_.IsSequence()) return "a sequence";
  return quote(node_.Scalar());
}

// A mapping's key as text; YAML allows a sequence or mapping as a key ("? [a, b]: 1", or an
// anchored flow sequence), which no stepsim file has.
std::string Field::key_text(const YAML::Node& key) const {
  if (!key.IsScalar()) child(key, path_).fail("expected a key that is a name, found " + child(key, path_).found());
  return key.Scalar();
}

void Field::check_keys(const std::vector<std::string>& allowed) const {
  if (!node_.IsMap()) fail("expected a mapping, found " + found());
  std::set<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = key_text(it->first);
    Field key_field = child(it->first, path_);
    if (!seen.insert(key).second) key_field.fail("duplicate key " + quote(key));
    bool known = false;
    for (const auto& a : allowed) known = known || a == key;
    if (known) continue;
    std::string message = "unknown key " + quote(key);
    const std::string suggestion = closest_match(key, allowed);
    if (!suggestion.empty()) message += "; did you mean " + quote(suggestion) + "?";
    else {
      message += "; expected one of ";
      for (std::size_t i = 0; i < allowed.size(); ++i) message += (i ? ", " : "") + allowed[i];
    }
    key_field.fail(message);
  }
}

bool Field::has(const std::string& key) const { return node_.IsMap() && node_[key]; }

Field Field::required(const std::string& key) const {
  if (!node_.IsMap()) fail("expected a mapping with key " + quote(key) + ", found " + found());
  YAML::Node value = node_[key];
  if (!value) fail("missing required key " + quote(key));
  return child(value, join_path(path_, key));
}

std::optional<Field> Field::optional(const std::string& key) const {
  if (!node_.IsMap()) return std::nullopt;
  YAML::Node value = node_[key];
  if (!value) return std::nullopt;
  return child(value, join_path(path_, key));
}

std::vector<std::pair<std::string, Field>> Field::entries() const {
  if (!node_.IsMap()) fail("expected a mapping, found " + found());
  std::vector<std::pair<std::string, Field>> out;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = key_text(it->first);
    out.emplace_back(key, child(it->second, join_path(path_, key)));
  }
  return out;
}

std::vector<Field> Field::items() const {
  if (!node_.IsSequence()) fail("expected a sequence, found " + found());
  std::vector<Field> out;
  for (std::size_t i = 0; i < node_.size(); ++i)
    out.push_back(child(node_[i], path_ + "[" + std::to_string(i) + "]"));
  return out;
}

std::string Field::scalar_or_fail(const std::string& expected) const {
  if (!node_.IsScalar()) fail("expected " + expected + ", found " + found());
  return node_.Scalar();
}

std::string Field::as_string() const { return scalar_or_fail("a string"); }

std::int64_t Field::as_int() const {
  const std::string s = scalar_or_fail("an integer");
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || ptr != s.data() + s.size()) fail("expected an integer, found " + found());
  return value;
}

std::int64_t Field::as_positive_int() const {
  const std::int64_t v = as_int();
  if (v <= 0) fail("expected a positive integer, found " + found());
  return v;
}

std::int64_t Field::as_non_negative_int() const {
  const std::int64_t v = as_int();
  if (v < 0) fail("expected a non-negative integer, found " + found());
  return v;
}

double Field::as_double() const {
  const std::string s = scalar_or_fail("a number");
  double value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || ptr != s.data() + s.size() || !std::isfinite(value))
    fail("expected a number, found " + found());
  return value;
}

double Field::as_positive_double() const {
  const double v = as_double();
  if (v <= 0) fail("expected a positive number, found " + found());
  return v;
}

bool Field::as_bool() const {
  const std::string s = scalar_or_fail("true or false");
  if (s == "true" || s == "True" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "False" || s == "no" || s == "off") return false;
  fail("expected true or false, found " + found());
}

std::string Field::as_choice(const std::vector<std::string>& choices) const {
  std::string list;
  for (std::size_t i = 0; i < choices.size(); ++i) list += (i ? ", " : "") + choices[i];
  const std::string s = scalar_or_fail("one of " + list);
  for (const auto& c : choices)
    if (c == s) return s;
  std::string message = "expected one of " + list + ", found " + found();
  const std::string suggestion = closest_match(s, choices);
  if (!suggestion.empty()) message += "; did you mean " + quote(suggestion) + "?";
  fail(message);
}

std::int64_t Field::as_bytes() const {
  const std::string s = scalar_or_fail(describe(QuantityKind::bytes));
  return parse_quantity(*this, parse_bytes(s), QuantityKind::bytes, false);
}

double Field::as_bandwidth() const {
  const std::string s = scalar_or_fail(describe(QuantityKind::bandwidth));
  return parse_quantity(*this, parse_bandwidth(s), QuantityKind::bandwidth, false);
}

std::int64_t Field::as_duration_ps() const {
  const std::string s = scalar_or_fail(describe(QuantityKind::duration));
  return parse_quantity(*this, parse_duration_ps(s), QuantityKind::duration, true);
}

double Field::as_flop_rate() const {
  const std::string s = scalar_or_fail(describe(QuantityKind::flop_rate));
  return parse_quantity(*this, parse_flop_rate(s), QuantityKind::flop_rate, false);
}

double Field::as_count() const {
  const std::string s = scalar_or_fail("a count such as 300B");
  auto parsed = parse_count(s);
  if (std::holds_alternative<UnitProblem>(parsed) || std::get<double>(parsed) <= 0)
    fail("expected a positive count such as 300B or 1.5T, found " + found());
  return std::get<double>(parsed);
}

// --- YamlDocument --------------------------------------------------------------------------------

YamlDocument::YamlDocument(YAML::Node root, std::string file)
    : root_(std::move(root)), file_(std::make_shared<const std::string>(std::move(file))) {}

YamlDocument YamlDocument::load_string(const std::string& text, const std::string& name) {
  // YAML 1.2 §5.2: a stream is Unicode; yaml-cpp would pass stray bytes on into names and output.
  for (std::size_t i = 0, line = 1, column = 1; i < text.size(); ++column) {
    const std::size_t n = utf8_sequence(text, i);
    if (n == 0) {
      char found[8];
      std::snprintf(found, sizeof found, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(text[i])));
      throw ConfigError({name, static_cast<int>(line), static_cast<int>(column)}, "",
                        std::string("expected UTF-8 text (YAML files are Unicode), found the byte ") + found);
    }
    if (text[i] == '\n') ++line, column = 0;
    i += n;
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    throw ConfigError(pos_of(e.mark, name), "",
                      "expected YAML nested at most " + std::to_string(e.depth() - 1) + " levels deep (no stepsim file nests more than a few)");
  } catch (const YAML::Exception& e) {
    throw ConfigError(pos_of(e.mark, name), "", "not valid YAML: " + e.msg);
  }
  if (!root || root.IsNull()) throw ConfigError({name, 0, 0}, "", "the file is empty; expected a YAML mapping");
  if (!root.IsMap())
    throw ConfigError(pos_of(root.Mark(), name), "",
                      std::string("expected a YAML mapping at the top level, found ") +
                          (root.IsSequence() ? "a sequence" : "'" + root.Scalar() + "'"));
  return YamlDocument(root, name);
}

YamlDocument YamlDocument::load_file(const std::string& path) { return load_string(read_text_file(path), path); }

Field YamlDocument::root() const { return Field(root_, file_, ""); }

void YamlDocument::set_scalar(const std::string& dotted_path, const std::string& value) {
  const SourcePos where{"--set " + dotted_path + "=" + value, 0, 0};
  YAML::Node node = root_;
  std::string walked;
  std::size_t start = 0;
  while (start <= dotted_path.size()) {
    std::size_t dot = dotted_path.find('.', start);
    std::string part = dotted_path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    // "strategies[1]" is a key and an index.
    std::optional<std::size_t> index;
    if (auto open = part.find('['); open != std::string::npos && part.back() == ']') {
      index = std::stoul(part.substr(open + 1, part.size() - open - 2));
      part = part.substr(0, open);
    }
    if (!node.IsMap() || !node[part])
      throw ConfigError(where, walked, "no key " + quote(part) + " to set in " + *file_);
    node.reset(node[part]);
    walked = join_path(walked, part);
    if (index) {
      if (!node.IsSequence() || *index >= node.size())
        throw ConfigError(where, walked, "no item [" + std::to_string(*index) + "] to set");
      node.reset(node[*index]);
      walked += "[" + std::to_string(*index) + "]";
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!node.IsScalar()) throw ConfigError(where, walked, "--set replaces scalars only, found a " +
                                                             std::string(node.IsMap() ? "mapping" : "sequence"));
  node = value;
}

}  // namespace stepsim::config
