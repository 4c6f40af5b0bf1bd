#include "sim/report/json_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "sim/config/utf8.hpp"

namespace stepsim::report {

// JSON text is UTF-8 (RFC 8259 §8.1): a byte that starts no valid sequence (a Latin-1 name in a
// scenario) becomes U+FFFD, the replacement character, instead of making the output unreadable.
std::string json_quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else if (static_cast<unsigned char>(c) < 0x80) {
          out += c;
        } else if (const std::size_t n = config::utf8_sequence(text, i); n > 0) {
          out.append(text.substr(i, n));
          i += n - 1;
        } else {
          out += "\\ufffd";
        }
    }
  }
  out += '"';
  return out;
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ << ',';
    first_.back() = false;
  }
  if (newline_pending_) out_ << '\n';
  newline_pending_ = false;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ << '{';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  first_.pop_back();
  out_ << '}';
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ << '[';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  first_.pop_back();
  if (newline_pending_) out_ << '\n';
  newline_pending_ = false;
  out_ << ']';
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  out_ << json_quote(name) << ':';
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  out_ << json_quote(text);
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  before_value();
  if (!std::isfinite(number)) {
    out_ << "null";
    return *this;
  }
  char buf[32];
  // Shortest text that reads back to the same double.
  const auto end = std::to_chars(buf, buf + sizeof buf, number).ptr;
  out_ << std::string_view(buf, static_cast<std::size_t>(end - buf));
  return *this;
}

JsonWriter& JsonWriter::value(std::int64_t number) {
  before_value();
  out_ << number;
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_ << (flag ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::fixed(double number, int decimals) {
  before_value();
  if (!std::isfinite(number)) {
    out_ << "null";
    return *this;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, number);
  out_ << buf;
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ << "null";
  return *this;
}

JsonWriter& JsonWriter::line_break() {
  newline_pending_ = true;
  return *this;
}

}  // namespace stepsim::report
