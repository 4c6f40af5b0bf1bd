// Parses `nvidia-smi topo -m` output as people paste it (topo_import.hpp).
#include "hardware/topo_import.hpp"

#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <string>

namespace stepsim::hw {
namespace {

using config::ConfigError;
using config::SourcePos;

struct Token {
  std::string text;
  int column = 0;  // 1-based, in characters as pasted
};

struct Line {
  int number = 0;  // 1-based
  std::vector<Token> tokens;
  int end_column = 1;
};

// Length of the connection code or device label at text[i] (X, NV#, PIX, PXB, PHB, NODE, SYS, SOC;
// GPU#, NIC#), 0 if none starts there. Digits are taken greedily.
std::size_t cell_at(const std::string& text, std::size_t i) {
  auto digits_from = [&](std::size_t j) {
    std::size_t k = j;
    while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
    return k - j;
  };
  for (const char* word : {"NODE", "PIX", "PXB", "PHB", "SYS", "SOC"})
    if (text.compare(i, std::char_traits<char>::length(word), word) == 0) return std::char_traits<char>::length(word);
  for (const char* prefix : {"GPU", "NIC", "NV"})
    if (text.compare(i, std::char_traits<char>::length(prefix), prefix) == 0) {
      const std::size_t d = digits_from(i + std::char_traits<char>::length(prefix));
      return d > 0 ? std::char_traits<char>::length(prefix) + d : 0;
    }
  return text.compare(i, 1, "X") == 0 ? 1 : 0;
}

// Cells pasted without their separator ("NODENODE", "PIXPIX", "NIC12NIC13") are split where the
// whole token reads as two or more codes or labels; any other token stays as it is.
void add_token(std::vector<Token>& out, const std::string& text, int column) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = cell_at(text, i);
    if (n == 0) {
      cuts.clear();
      break;
    }
    cuts.push_back(i);
    i += n;
  }
  if (cuts.size() < 2) {
    out.push_back({text, column});
    return;
  }
  for (std::size_t k = 0; k < cuts.size(); ++k) {
    const std::size_t end = k + 1 < cuts.size() ? cuts[k + 1] : text.size();
    out.push_back({text.substr(cuts[k], end - cuts[k]), column + static_cast<int>(cuts[k])});
  }
}

// Splits a line on spaces, tabs and no-break spaces (U+00A0, which web pages put in pasted
// tables), dropping ANSI escapes (ESC [ ... final byte) and CR.
Line tokenize(const std::string& text, int number) {
  Line line{number, {}, static_cast<int>(text.size()) + 1};
  std::string current;
  int start = 0;
  auto flush = [&] {
    if (!current.empty()) add_token(line.tokens, current, start);
    current.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '\x1b') {
      std::size_t j = i + 1;
      if (j < text.size() && text[j] == '[') {
        ++j;
        while (j < text.size() && !(text[j] >= '@' && text[j] <= '~')) ++j;
      }
      i = j;
      continue;
    }
    if (ch == ' ' || ch == '\t' || ch == '\r') {
      flush();
      continue;
    }
    if (ch == '\xc2' && i + 1 < text.size() && text[i + 1] == '\xa0') {
      flush();
      ++i;
      continue;
    }
    if (current.empty()) start = static_cast<int>(i) + 1;
    current += ch;
  }
  flush();
  return line;
}

std::vector<Line> split_lines(const std::string& text) {
  std::vector<Line> lines;
  std::size_t begin = 0;
  int number = 1;
  while (begin <= text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    lines.push_back(tokenize(text.substr(begin, end - begin), number++));
    begin = end + 1;
  }
  return lines;
}

bool is_device_label(const std::string& s) {
  static const std::regex device(R"((GPU|NIC)\d+|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+)");
  return std::regex_match(s, device);
}

bool is_gpu_label(const std::string& s) { return s.rfind("GPU", 0) == 0 && s.size() > 3 && std::isdigit(static_cast<unsigned char>(s[3])); }

// "SOC" is what drivers before 384 printed for SYS.
std::optional<std::string> normalize_code(const std::string& s) {
  static const std::regex code(R"(X|NV\d+|PIX|PXB|PHB|NODE|SYS)");
  if (s == "SOC") return "SYS";
  if (std::regex_match(s, code)) return s;
  return std::nullopt;
}

// The extra columns after the devices: "CPU Affinity", "NUMA Affinity", "GPU NUMA ID", or words.
std::vector<std::string> extra_columns(const std::vector<Token>& tokens, std::size_t from) {
  static const std::vector<std::vector<std::string>> kPhrases{
      {"CPU", "Affinity"}, {"NUMA", "Affinity"}, {"GPU", "NUMA", "ID"}};
  std::vector<std::string> out;
  for (std::size_t i = from; i < tokens.size();) {
    bool matched = false;
    for (const auto& phrase : kPhrases) {
      if (i + phrase.size() > tokens.size()) continue;
      bool all = true;
      for (std::size_t k = 0; k < phrase.size(); ++k) all = all && tokens[i + k].text == phrase[k];
      if (!all) continue;
      out.push_back(phrase[0] + " " + phrase[1]);
      i += phrase.size();
      matched = true;
      break;
    }
    if (!matched) out.push_back(tokens[i++].text);
  }
  return out;
}

bool ends_matrix(const Line& line) {
  return line.tokens.empty() || line.tokens[0].text == "Legend:" || line.tokens[0].text == "NIC";
}

// Reads one row's codes and extra values into the matrix.
void read_row(const Line& line, std::size_t row, const std::vector<std::string>& extras, TopoMatrix& m,
              const std::string& file) {
  const std::size_t n = m.devices.size();
  const auto& t = line.tokens;
  if (t.size() < n + 1) {
    const SourcePos at{file, line.number, t.back().column};
    throw ConfigError(at, "", "row " + t[0].text + " has " + std::to_string(t.size() - 1) + " entries; expected " +
                                  std::to_string(n) + " connection codes, one per column");
  }
  if (t.size() > n + 1 + extras.size()) {
    const SourcePos at{file, line.number, t[n + 1 + extras.size()].column};
    throw ConfigError(at, "", "row " + t[0].text + " has " + std::to_string(t.size() - 1) + " entries; expected at most " +
                                  std::to_string(n + extras.size()) + " (" + std::to_string(n) + " codes and the columns " +
                                  "after them)");
  }
  for (std::size_t c = 0; c < n; ++c) {
    const Token& cell = t[c + 1];
    const SourcePos at{file, line.number, cell.column};
    const auto code = normalize_code(cell.text);
    if (!code)
      throw ConfigError(at, "", "unknown connection code '" + cell.text + "' in row " + t[0].text +
                                    "; expected X, NV#, PIX, PXB, PHB, NODE or SYS");
    if ((*code == "X") != (c == row))
      throw ConfigError(at, "", c == row ? "expected X where row " + t[0].text + " meets its own column, found '" + cell.text + "'"
                                         : "X belongs on the diagonal only, found it in row " + t[0].text + ", column " + m.devices[c].label);
    m.codes[row][c] = *code;
    m.where[row][c] = at;
  }
  for (std::size_t e = 0; e + n + 1 < t.size(); ++e) {
    if (extras[e] == "CPU Affinity") m.devices[row].cpu_affinity = t[n + 1 + e].text;
    if (extras[e] == "NUMA Affinity") m.devices[row].numa_affinity = t[n + 1 + e].text;
  }
}

void check_symmetric(const TopoMatrix& m) {
  for (std::size_t a = 0; a < m.devices.size(); ++a)
    for (std::size_t b = 0; b < a; ++b)
      if (m.codes[a][b] != m.codes[b][a])
        throw ConfigError(m.where[a][b], "", m.devices[a].label + " to " + m.devices[b].label + " is " + m.codes[a][b] +
                                                 ", but " + m.devices[b].label + " to " + m.devices[a].label + " is " +
                                                 m.codes[b][a] + " (line " + std::to_string(m.where[b][a].line) +
                                                 "); the matrix must be symmetric");
}

// "NIC0: mlx5_2" lines of the NIC legend.
void read_nic_legend(const std::vector<Line>& lines, std::size_t from, TopoMatrix& m) {
  std::map<std::string, std::string> names;
  for (std::size_t i = from; i < lines.size(); ++i) {
    const auto& t = lines[i].tokens;
    if (t.size() == 2 && t[0].text.size() > 1 && t[0].text.back() == ':')
      names[t[0].text.substr(0, t[0].text.size() - 1)] = t[1].text;
  }
  for (auto& d : m.devices)
    if (!d.is_gpu && names.count(d.label)) d.name = names[d.label];
}

}  // namespace

TopoMatrix parse_nvidia_smi_topo(const std::string& text, const std::string& file) {
  const std::vector<Line> lines = split_lines(text);
  std::size_t header = 0;
  while (header < lines.size() && (lines[header].tokens.empty() || lines[header].tokens[0].text != "GPU0")) ++header;
  if (header == lines.size())
    throw ConfigError({file, 0, 0}, "", "no GPU matrix found; expected a header line starting with GPU0 as `nvidia-smi topo -m` prints it");
  TopoMatrix m;
  const auto& h = lines[header].tokens;
  std::size_t first_extra = 0;
  while (first_extra < h.size() && is_device_label(h[first_extra].text)) {
    const std::string& label = h[first_extra].text;
    const bool gpu = is_gpu_label(label);
    m.devices.push_back({label, gpu ? "gpu" + label.substr(3) : label, gpu, "", ""});
    ++first_extra;
  }
  std::vector<std::string> extras = extra_columns(h, first_extra);
  std::size_t i = header + 1;
  // A header wrapped by a narrow terminal continues on lines that do not start with GPU0.
  while (i < lines.size() && !lines[i].tokens.empty() && lines[i].tokens[0].text != m.devices[0].label) {
    for (const auto& e : extra_columns(lines[i].tokens, 0)) extras.push_back(e);
    ++i;
  }
  const std::size_t n = m.devices.size();
  m.codes.assign(n, std::vector<std::string>(n));
  m.where.assign(n, std::vector<SourcePos>(n));
  for (std::size_t row = 0; row < n; ++row, ++i) {
    if (i >= lines.size() || ends_matrix(lines[i])) {
      const int line = i < lines.size() ? lines[i].number : static_cast<int>(lines.size());
      throw ConfigError({file, line, 1}, "", "expected the row of " + m.devices[row].label + ", found the end of the matrix");
    }
    if (lines[i].tokens[0].text != m.devices[row].label)
      throw ConfigError({file, lines[i].number, lines[i].tokens[0].column}, "",
                        "expected the row of " + m.devices[row].label + ", found '" + lines[i].tokens[0].text + "'");
    read_row(lines[i], row, extras, m, file);
  }
  check_symmetric(m);
  read_nic_legend(lines, i, m);
  return m;
}

}  // namespace stepsim::hw
