// A minimal streaming JSON writer: objects, arrays, escaped strings, numbers. No dependency, no DOM.
// The writer inserts commas itself; the caller only says what comes next. Non-finite doubles
// become null (JSON has no NaN). Output is compact; line_break() adds a newline between elements
// so large arrays (trace events) stay readable and diffable.
// Requires: calls are balanced (every begin_* has its end_*), key() precedes each value in an object.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace stepsim::report {

/// `text` as a JSON string literal, quotes included: control characters as \uXXXX, `"` and `\` escaped.
/// Bytes >= 0x80 pass through, so valid UTF-8 stays valid.
std::string json_quote(std::string_view text);

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);
  JsonWriter& value(std::int64_t number);
  JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(bool flag);
  /// A number printed with exactly `decimals` digits after the point (trace timestamps in us).
  JsonWriter& fixed(double number, int decimals);
  JsonWriter& null();
  /// A newline before the next element (after its comma) or before the closing bracket of an
  /// array; harmless whitespace for any JSON reader.
  JsonWriter& line_break();

 private:
  void before_value();
  std::ostream& out_;
  std::vector<bool> first_;  ///< per open container: no element written yet
  bool after_key_ = false;
  bool newline_pending_ = false;
};

}  // namespace stepsim::report
