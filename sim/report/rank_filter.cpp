#include "sim/report/rank_filter.hpp"

#include <charconv>
#include <stdexcept>

namespace stepsim::report {

namespace {

int parse_rank(std::string_view part, std::string_view whole) {
  int value = 0;
  const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
  if (part.empty() || ec != std::errc() || end != part.data() + part.size() || value < 0)
    throw std::invalid_argument("expected ranks such as 0-7,64, found '" + std::string(whole) + "'");
  return value;
}

}  // namespace

RankFilter RankFilter::parse(std::string_view text) {
  std::string compact;
  for (const char c : text)
    if (c != ' ') compact += c;
  RankFilter filter;
  std::string_view rest = compact;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const auto dash = item.find('-');
    const int first = parse_rank(item.substr(0, dash), text);
    const int last = dash == std::string_view::npos ? first : parse_rank(item.substr(dash + 1), text);
    if (last < first)
      throw std::invalid_argument("expected ranges A-B with A <= B, found '" + std::string(item) + "' in '" +
                                  std::string(text) + "'");
    filter.ranges_.emplace_back(first, last);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return filter;
}

bool RankFilter::contains(int rank) const {
  if (ranges_.empty()) return true;
  for (const auto& [a, b] : ranges_)
    if (rank >= a && rank <= b) return true;
  return false;
}

}  // namespace stepsim::report
