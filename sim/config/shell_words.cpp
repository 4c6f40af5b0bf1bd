#include "sim/config/shell_words.hpp"

#include <cctype>

namespace stepsim::config {
namespace {

bool is_separator(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '|' || c == '&' || c == '(' ||
         c == ')' || c == '<' || c == '>';
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Length of NAME at text[i], 0 if none.
std::size_t name_length(const std::string& text, std::size_t i) {
  if (i >= text.size() || !is_name_start(text[i])) return 0;
  std::size_t n = 1;
  while (i + n < text.size() && is_name_char(text[i + n])) ++n;
  return n;
}

class ShellLexer {
 public:
  ShellLexer(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  ShellScript run() {
    ShellScript out;
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (quote_ == 0 && is_separator(c)) {
        finish(out);
        advance();
      } else if (quote_ == 0 && c == '#' && word_.text.empty()) {
        while (i_ < text_.size() && text_[i_] != '\n') advance();
      } else if (quote_ == 0 && (c == '"' || c == '\'')) {
        quote_ = c;
        quote_pos_ = here();
        advance();
      } else if (quote_ != 0 && c == quote_) {
        quote_ = 0;
        advance();
      } else if (c == '\\' && quote_ != '\'') {
        backslash(out);
      } else if (c == '$' && quote_ != '\'' && i_ + 1 < text_.size() && text_[i_ + 1] == '(') {
        substitution();
      } else {
        take();
      }
    }
    if (quote_ != 0)
      throw ConfigError(quote_pos_, "", std::string("unterminated ") + (quote_ == '"' ? "double" : "single") + " quote");
    finish(out);
    return out;
  }

 private:
  SourcePos here() const { return {file_, line_, col_}; }

  void advance() {
    if (text_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }

  void take() {
    word_.text.push_back(text_[i_]);
    word_.at.push_back(here());
    advance();
  }

  // Outside quotes a backslash makes the next character literal and joins lines; inside double
  // quotes it does so only before " \ $ ` and a newline.
  void backslash(ShellScript& out) {
    const char next = i_ + 1 < text_.size() ? text_[i_ + 1] : '\0';
    if (next == '\n') {
      advance();
      advance();
      if (quote_ == 0) finish(out);
      return;
    }
    if (quote_ == '"' && next != '"' && next != '\\' && next != '$' && next != '`') {
      take();
      return;
    }
    advance();
    if (i_ < text_.size()) take();
  }

  // $(...) and $((...)) stay in the word whole, parentheses and all (expand() refuses them).
  void substitution() {
    take();
    int depth = 0;
    while (i_ < text_.size()) {
      const char c = text_[i_];
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      take();
      if (depth == 0) return;
    }
  }

  // A finished word: an assignment NAME=value records the variable and its value's words (flags
  // live in them); any other word is split on the whitespace quotes kept in it.
  void finish(ShellScript& out) {
    if (word_.text.empty()) return;
    const std::size_t n = name_length(word_.text, 0);
    std::size_t from = 0;
    if (n > 0 && n < word_.text.size() && word_.text[n] == '=') {
      out.variables[word_.text.substr(0, n)].push_back({word_.text.substr(n + 1), word_.at.front()});
      from = n + 1;
    }
    ShellWord piece;
    for (std::size_t k = from; k <= word_.text.size(); ++k) {
      if (k == word_.text.size() || is_space(word_.text[k])) {
        if (!piece.text.empty()) out.words.push_back(std::move(piece));
        piece = {};
      } else {
        piece.text.push_back(word_.text[k]);
        piece.at.push_back(word_.at[k]);
      }
    }
    word_ = {};
  }

  const std::string& text_;
  const std::string& file_;
  std::size_t i_ = 0;
  int line_ = 1, col_ = 1;
  char quote_ = 0;
  SourcePos quote_pos_;
  ShellWord word_;
};

bool before_pos(const SourcePos& a, const SourcePos& b) {
  return a.line < b.line || (a.line == b.line && a.column < b.column);
}

}  // namespace

ShellScript read_shell_script(const std::string& text, const std::string& file) { return ShellLexer(text, file).run(); }

std::optional<std::string> ShellScript::expand(const std::string& text, const SourcePos& before, std::string& why) const {
  constexpr int kMaxDepth = 10;
  struct Expander {
    const ShellScript& script;
    std::string& why;
    std::optional<std::string> value_of(const std::string& name, const SourcePos& at, int depth) {
      const auto it = script.variables.find(name);
      const ShellAssignment* last = nullptr;
      if (it != script.variables.end())
        for (const auto& a : it->second)
          if (before_pos(a.pos, at)) last = &a;
      if (!last) return std::nullopt;
      if (depth >= kMaxDepth) {
        why = "$" + name + " expands through more than " + std::to_string(kMaxDepth) + " variables";
        return std::nullopt;
      }
      return run(last->value, last->pos, depth + 1);
    }
    std::optional<std::string> run(const std::string& s, const SourcePos& at, int depth) {
      std::string out;
      for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '`') {
          why = "a command substitution (`...`) runs a program";
          return std::nullopt;
        }
        if (s[i] != '$' || i + 1 == s.size()) {
          out.push_back(s[i]);
          continue;
        }
        const char next = s[i + 1];
        if (next == '(') {
          why = s.compare(i, 3, "$((") == 0 ? "shell arithmetic $((...)) is not evaluated"
                                            : "a command substitution $(...) runs a program";
          return std::nullopt;
        }
        std::string name, fallback;
        bool has_fallback = false;
        if (next == '{') {
          const std::size_t close = s.find('}', i + 2);
          if (close == std::string::npos) {
            why = "an unclosed ${";
            return std::nullopt;
          }
          const std::string inner = s.substr(i + 2, close - i - 2);
          const std::size_t n = name_length(inner, 0);
          name = inner.substr(0, n);
          std::string rest = inner.substr(n);
          if (!rest.empty() && rest[0] == ':') rest.erase(0, 1);
          if (!rest.empty() && (rest[0] == '-' || rest[0] == '=')) {
            has_fallback = true;
            fallback = rest.substr(1);
          } else if (!rest.empty() || n == 0) {
            why = "${" + inner + "} is not a plain variable";
            return std::nullopt;
          }
          i = close;
        } else {
          const std::size_t n = name_length(s, i + 1);
          if (n == 0) {
            why = std::string("$") + next + " is a parameter of the script's command line";
            return std::nullopt;
          }
          name = s.substr(i + 1, n);
          i += n;
        }
        auto v = value_of(name, at, depth);
        if (!v && why.empty() && has_fallback) v = run(fallback, at, depth + 1);
        if (!v) {
          if (why.empty()) why = "$" + name + " is not assigned in this file before it is used (its value would come from the environment)";
          return std::nullopt;
        }
        out += *v;
      }
      return out;
    }
  };
  why.clear();
  return Expander{*this, why}.run(text, before, 0);
}

}  // namespace stepsim::config
