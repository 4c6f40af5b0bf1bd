// A small strict JSON reader for tests (RFC 8259): parses into a tree or reports the offset of the
// first error, so tests can both prove a document is valid and inspect its structure.
#pragma once

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace stepsim::report::testing {

struct Json {
  enum class Type { null, boolean, number, string, array, object } type = Type::null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  // An object's members in document order, keys and values side by side: a std::pair holding
  // Json would need Json complete here, which a vector of it does not.
  std::vector<std::string> keys;
  std::vector<Json> values;

  bool has(const std::string& k) const { return find(k) != nullptr; }
  const Json* find(const std::string& k) const {
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == k) return &values[i];
    return nullptr;
  }
  const Json& operator[](const std::string& k) const {
    if (const Json* v = find(k)) return *v;
    throw std::out_of_range("no key " + k);
  }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : s_(text) {}
  /// Throws std::runtime_error("offset N: …") on the first error, including trailing garbage.
  Json parse() {
    Json v = value();
    skip_ws();
    if (i_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) { throw std::runtime_error("offset " + std::to_string(i_) + ": " + what); }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool eat(char c) {
    skip_ws();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  void literal(const char* word) {
    for (const char* p = word; *p; ++p, ++i_)
      if (i_ >= s_.size() || s_[i_] != *p) fail(std::string("bad literal, expected ") + word);
  }
  Json value() {
    skip_ws();
    if (i_ >= s_.size()) fail("unexpected end");
    Json v;
    const char c = s_[i_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return v.type = Json::Type::string, v.string = string(), v;
    if (c == 't') return literal("true"), v.type = Json::Type::boolean, v.boolean = true, v;
    if (c == 'f') return literal("false"), v.type = Json::Type::boolean, v;
    if (c == 'n') return literal("null"), v;
    return number();
  }
  Json number() {
    const std::size_t start = i_;
    if (s_[i_] == '-') ++i_;
    auto digits = [&] {
      const std::size_t d = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
      if (i_ == d) fail("expected a digit");
    };
    if (i_ < s_.size() && s_[i_] == '0') ++i_;
    else digits();
    if (i_ < s_.size() && s_[i_] == '.') ++i_, digits();
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      digits();
    }
    Json v;
    v.type = Json::Type::number;
    v.number = std::strtod(s_.substr(start, i_ - start).c_str(), nullptr);
    return v;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("raw control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unterminated escape");
      const char e = s_[i_++];
      const std::string simple = "\"\\/bfnrt";
      if (simple.find(e) != std::string::npos) {
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e;
      } else if (e == 'u') {
        for (int k = 0; k < 4; ++k, ++i_)
          if (i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) fail("bad \\u escape");
        out += '?';
      } else {
        fail("bad escape");
      }
    }
  }
  Json array() {
    expect('[');
    Json v;
    v.type = Json::Type::array;
    if (eat(']')) return v;
    do v.array.push_back(value());
    while (eat(','));
    expect(']');
    return v;
  }
  Json object() {
    expect('{');
    Json v;
    v.type = Json::Type::object;
    if (eat('}')) return v;
    do {
      skip_ws();
      std::string k = string();
      expect(':');
      v.keys.push_back(std::move(k));
      v.values.push_back(value());
    } while (eat(','));
    expect('}');
    return v;
  }
  const std::string& s_;
  std::size_t i_ = 0;
};

inline Json parse_json(const std::string& text) { return JsonParser(text).parse(); }

}  // namespace stepsim::report::testing
