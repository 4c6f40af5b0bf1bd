// An aligned plain-text table: a header row, a rule under it, rows of cells, columns separated by
// two spaces. Widths are measured in code points so UTF-8 text lines up. Trailing spaces are
// trimmed, so golden files do not depend on invisible whitespace.
#pragma once

#include <string>
#include <vector>

namespace stepsim::report {

enum class Align { left, right };

class TextTable {
 public:
  /// Requires: header.size() == align.size().
  TextTable(std::vector<std::string> header, std::vector<Align> align);
  /// Requires: cells.size() == the number of columns.
  void add_row(std::vector<std::string> cells);
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace stepsim::report
