#include "sim/report/text_table.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/report/format.hpp"

namespace stepsim::report {

TextTable::TextTable(std::vector<std::string> header, std::vector<Align> align)
    : header_(std::move(header)), align_(std::move(align)) {
  if (header_.size() != align_.size()) throw std::invalid_argument("TextTable: header and align differ in size");
}

void TextTable::add_row(std::vector<std::string> cells) {
  if (cells.size() != header_.size()) throw std::invalid_argument("TextTable: row has the wrong number of cells");
  rows_.push_back(std::move(cells));
}

namespace {

std::string render_line(const std::vector<std::string>& cells, const std::vector<std::size_t>& widths,
                        const std::vector<Align>& align) {
  std::string line;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) line += "  ";
    line += align[c] == Align::left ? pad_right(cells[c], widths[c]) : pad_left(cells[c], widths[c]);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

}  // namespace

std::string TextTable::render() const {
  std::vector<std::size_t> widths(header_.size());
  for (std::size_t c = 0; c < header_.size(); ++c) {
    widths[c] = display_width(header_[c]);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  std::string out = render_line(header_, widths, align_);
  std::vector<std::string> rule;
  for (const auto w : widths) rule.emplace_back(w, '-');
  out += render_line(rule, widths, align_);
  for (const auto& row : rows_) out += render_line(row, widths, align_);
  return out;
}

}  // namespace stepsim::report
