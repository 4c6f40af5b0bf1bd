#include "sim/config/config_error.hpp"

#include <algorithm>
#include <cctype>

namespace stepsim::config {

std::string to_string(const SourcePos& pos) {
  std::string out = pos.file;
  // Appended piecewise: `":" + std::to_string(n)` trips GCC 12's false -Wrestrict at -O3.
  if (pos.line > 0) {
    out.append(1, ':').append(std::to_string(pos.line));
    if (pos.column > 0) out.append(1, ':').append(std::to_string(pos.column));
  }
  return out;
}

static std::string format_error(const SourcePos& pos, const std::string& key_path,
                                 const std::string& message) {
  std::string out = to_string(pos);
  if (!out.empty()) out += ": ";
  if (!key_path.empty()) out += key_path + ": ";
  return out + message;
}

ConfigError::ConfigError(SourcePos pos, std::string key_path, std::string message)
    : std::runtime_error(format_error(pos, key_path, message)),
      pos_(std::move(pos)),
      key_path_(std::move(key_path)),
      message_(std::move(message)) {}

namespace {
// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), case-insensitive:
// typos in keys are mostly one or two letters, often swapped ("1fb1" for "1f1b").
std::size_t edit_distance(const std::string& a, const std::string& b) {
  auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}
}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  // Allow about one edit per three letters, at least one, at most three.
  const std::size_t limit = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string closest_match(const std::string& word, const std::initializer_list<std::string>& candidates) {
  return closest_match(word, std::vector<std::string>(candidates));
}

std::string ascii_lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace stepsim::config
