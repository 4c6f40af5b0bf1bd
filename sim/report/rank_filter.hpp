// Which ranks a trace writes: a list of ranks and inclusive ranges, "0-7,64". Parsed from
// `--trace-ranks`; an empty filter means every rank.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stepsim::report {

class RankFilter {
 public:
  RankFilter() = default;  ///< every rank
  /// "0-7,64": comma-separated ranks N or ranges A-B (A <= B), no spaces needed (spaces ignored).
  /// Throws std::invalid_argument saying what was expected and what was found.
  static RankFilter parse(std::string_view text);
  bool contains(int rank) const;
  bool is_everything() const { return ranges_.empty(); }

 private:
  std::vector<std::pair<int, int>> ranges_;  ///< inclusive
};

}  // namespace stepsim::report
