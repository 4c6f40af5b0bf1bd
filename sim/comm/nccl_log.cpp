#include "sim/comm/nccl_log.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "sim/config/config_error.hpp"
#include "sim/config/text_file.hpp"

namespace stepsim::comm {
namespace {

using config::ConfigError;
using config::SourcePos;

struct Token {
  std::string text;
  int column = 0;  // 1-based
};

std::vector<Token> tokens_of(const std::string& line, std::size_t from) {
  std::vector<Token> out;
  std::size_t i = from;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return out;
}

// Scans are by hand, not std::regex: libstdc++'s regex recurses once per character matched and
// overflowed the stack on a pasted 30 KB line.
std::size_t digits_at(const std::string& s, std::size_t i) {
  std::size_t j = i;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  return j - i;
}

bool text_at(const std::string& s, std::size_t i, const char* text) { return s.compare(i, std::strlen(text), text) == 0; }

std::size_t skip_spaces(const std::string& s, std::size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

// Where a line's content starts: after any indentation (a log pasted into a markdown list) and
// mpirun's --tag-output prefix, "[1,0]<stdout>:".
std::size_t content_start(const std::string& line) {
  const std::size_t indent = skip_spaces(line, 0);
  std::size_t i = indent;
  if (!text_at(line, i, "[")) return indent;
  std::size_t n = digits_at(line, ++i);
  if (n == 0 || !text_at(line, i += n, ",")) return indent;
  n = digits_at(line, ++i);
  if (n == 0 || !text_at(line, i += n, "]<std")) return indent;
  i += 5;
  if (!text_at(line, i, "out>:") && !text_at(line, i, "err>:")) return indent;
  return skip_spaces(line, i + 5);
}

// The column layout from the header line: where time/algbw/busbw sit in a row.
struct Layout {
  std::size_t columns = 0;   // tokens in a full row
  std::size_t time = 0;      // index of the out-of-place time
  std::size_t half = 0;      // tokens from out-of-place time to in-place time
  bool counts_wrong = false; // new format: the column after busbw counts wrong elements
};

std::optional<Layout> header_layout(const std::vector<Token>& t) {
  // "#  size count type redop [root] time algbw busbw #wrong|error time algbw busbw #wrong|error"
  if (t.size() < 2 || t[0].text != "#" || t[1].text != "size") return std::nullopt;
  Layout l;
  for (std::size_t i = 1; i < t.size(); ++i)
    if (t[i].text == "time") {
      if (l.time == 0) l.time = i - 1;
      else l.half = i - 1 - l.time;
    }
  if (l.time == 0 || l.half == 0) return std::nullopt;
  l.columns = t.size() - 1;
  l.counts_wrong = std::any_of(t.begin(), t.end(), [](const Token& k) { return k.text == "#wrong"; });
  return l;
}

double number(const Token& t, const SourcePos& line_pos, const char* what) {
  try {
    std::size_t used = 0;
    const double v = std::stod(t.text, &used);
    if (used == t.text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw ConfigError({line_pos.file, line_pos.line, t.column}, "",
                    std::string("expected ") + what + " in an nccl-tests row, found '" + t.text + "'");
}

// A size or count: digits, at most 2^50 (a petabyte; beyond it a double loses whole bytes).
std::int64_t integer(const Token& t, const SourcePos& pos, const char* what) {
  constexpr double kLargest = 1125899906842624.0;  // 2^50
  const double v = number(t, pos, what);
  if (v < 0 || v > kLargest || v != std::floor(v))
    throw ConfigError({pos.file, pos.line, t.column}, "",
                      std::string("expected ") + what + " of at most 2^50, found '" + t.text + "'");
  return static_cast<std::int64_t>(v);
}

NcclLogRow read_row(const std::vector<Token>& t, const Layout& l, const SourcePos& pos) {
  const std::size_t out_of_place = l.time + 3;
  if (t.size() < out_of_place + 1 || t.size() > l.columns)
    throw ConfigError({pos.file, pos.line, t.front().column}, "",
                      "expected an nccl-tests row of " + std::to_string(l.columns) + " columns as the header says, found " +
                          std::to_string(t.size()));
  NcclLogRow r{.line = pos.line};
  r.size_bytes = integer(t[0], pos, "a size in bytes");
  r.count = integer(t[1], pos, "an element count");
  r.time_us = number(t[l.time], pos, "a time in us");
  r.algbw_gbps = number(t[l.time + 1], pos, "an algbw in GB/s");
  r.busbw_gbps = number(t[l.time + 2], pos, "a busbw in GB/s");
  // size count type redop [root] time ...: the old format has no root column.
  if (l.time >= 4) r.type = t[2].text, r.redop = t[3].text;
  if (l.time >= 5) {
    const std::string& root = t[4].text;
    const std::size_t sign = root.front() == '-' ? 1 : 0, digits = digits_at(root, sign);
    if (digits > 0 && digits < 10 && sign + digits == root.size()) r.root = std::stoll(root);
  }
  if (t.size() >= l.time + l.half + 3) {
    r.in_place_time_us = number(t[l.time + l.half], pos, "a time in us");
    r.in_place_busbw_gbps = number(t[l.time + l.half + 2], pos, "a busbw in GB/s");
  }
  // nccl-tests checks every result (-c 1) and counts the wrong elements; "N/A" when it did not.
  for (const std::size_t wrong : {l.time + 3, l.time + l.half + 3})
    if (l.counts_wrong && wrong < t.size() && digits_at(t[wrong].text, 0) == t[wrong].text.size() && t[wrong].text != "0")
      throw ConfigError({pos.file, pos.line, t[wrong].column}, "",
                        "this row has " + t[wrong].text +
                            " wrong elements: the collective gave wrong results, so its timings cannot calibrate a "
                            "machine (fix the run until nccl-tests reports no errors)");
  return r;
}

// A row starts with two integers (size, count); NCCL INFO and launcher lines never do.
bool is_row(const std::vector<Token>& t) {
  auto integer = [](const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  };
  return t.size() >= 2 && integer(t[0].text) && integer(t[1].text);
}

// "#  Rank  3 Group  0 Pid 46 on HOST device  3 [0x54] NVIDIA A100-SXM4-40GB" (old: no Group).
// `t` are the line's tokens from its content on; the GPU name is the rest of the line.
void read_rank_line(const std::string& line, const std::vector<Token>& t, const SourcePos& pos, NcclLog& log,
                    std::set<std::string>& hosts) {
  if (t.size() < 3 || t[0].text != "#" || t[1].text != "Rank" || digits_at(t[2].text, 0) != t[2].text.size()) return;
  std::size_t on = 3;
  while (on < t.size() && t[on].text != "on") ++on;
  if (on + 4 >= t.size() || t[on + 2].text != "device" || t[on + 4].text.front() != '[' || t[on + 4].text.back() != ']')
    return;
  if (t[2].text.size() > 9 || std::stoll(t[2].text) >= kMaxLogRanks)
    throw ConfigError({pos.file, pos.line, t[2].column}, "",
                      "expected a rank below " + std::to_string(kMaxLogRanks) + ", found " + t[2].text);
  if (on + 5 >= t.size()) return;
  log.ranks = std::max(log.ranks, static_cast<int>(std::stoll(t[2].text)) + 1);
  hosts.insert(t[on + 1].text);
  const std::size_t name = static_cast<std::size_t>(t[on + 5].column - 1);
  std::size_t end = line.size();
  while (end > name && std::isspace(static_cast<unsigned char>(line[end - 1]))) --end;
  log.gpu_name = line.substr(name, end - name);
}

void infer_op(const std::string& text, NcclLog& log) {
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "sendrecv"})
    if (text.find(std::string(op) + "_perf") != std::string::npos) {
      log.op = *parse_op(op);
      return;
    }
  // No binary name. nccl-tests' own columns say most of it (src/common.cu prints redop "none"
  // for collectives without a reduction and root -1 for those without a root; count is the
  // elements per rank, so size / count is the element size for all_reduce and n times it for
  // reduce_scatter). Else busbw/algbw of the largest row: 2(n−1)/n for all-reduce only.
  const auto& big = log.rows.back();
  const std::map<std::string, double> element_bytes{{"int8", 1}, {"uint8", 1}, {"half", 2}, {"bfloat16", 2},
                                                     {"int32", 4}, {"uint32", 4}, {"float", 4}, {"int64", 8},
                                                     {"uint64", 8}, {"double", 8}};
  const auto element = element_bytes.find(big.type);
  if (!big.redop.empty() && big.redop != "none" && element != element_bytes.end() && big.count > 0) {
    const double per_element = static_cast<double>(big.size_bytes) / static_cast<double>(big.count);
    log.op = per_element > 1.5 * element->second ? Op::reduce_scatter : Op::all_reduce;
    return;
  }
  if (big.redop == "none" && big.root && *big.root >= 0) {
    log.op = Op::broadcast;
    return;
  }
  // busbw/algbw (nccl-tests doc/PERFORMANCE.md): 2(n−1)/n for all-reduce, 1 for broadcast and
  // sendrecv (a broadcast prints its root, sendrecv -1), (n−1)/n for all-gather and all-to-all
  // alike.
  const double ratio = big.algbw_gbps > 0 ? big.busbw_gbps / big.algbw_gbps : 1.0;
  if (ratio > 1.2) {
    log.op = Op::all_reduce;
  } else if (ratio > 0.99) {
    log.op = big.root ? Op::send_recv : Op::broadcast;
    if (!big.root) log.op_alternatives = {Op::send_recv};
  } else {
    log.op = Op::all_gather;
    log.op_alternatives = {Op::all_to_all};
  }
}

}  // namespace

NcclLog parse_nccl_log(const std::string& text, const std::string& file) {
  NcclLog log{.file = file};
  std::set<std::string> hosts;
  std::optional<Layout> layout;
  std::istringstream in(text);
  std::string line;
  int lines = 0;
  for (int number_of_line = 1; std::getline(in, line); ++number_of_line) {
    lines = number_of_line;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t start = content_start(line);
    const std::string content = line.substr(start);
    const auto t = tokens_of(line, start);
    const SourcePos pos{file, number_of_line, 0};
    read_rank_line(line, t, pos, log, hosts);
    if (auto l = header_layout(t)) {
      layout = l;
      if (log.header_line == 0) log.header_line = number_of_line;
    }
    if (layout && is_row(t)) log.rows.push_back(read_row(t, *layout, pos));
    if (content.rfind("# Avg bus bandwidth", 0) == 0 && t.size() >= 6) log.avg_busbw_gbps = number(t.back(), pos, "a bandwidth");
    // nccl-tests' closing verdict when a check failed: "# Out of bounds values : 108 FAILED".
    if (content.rfind("# Out of bounds values", 0) == 0 && content.find("FAILED") != std::string::npos)
      throw ConfigError({file, number_of_line, static_cast<int>(start) + 1}, "",
                        "nccl-tests reports wrong results ('" + content +
                            "'): its timings cannot calibrate a machine (fix the run until it reports OK)");
  }
  // Refusals of the whole file point at its end (nothing was found by then) or at the header.
  if (!layout)
    throw ConfigError({file, lines, lines > 0 ? 1 : 0}, "",
                      "no nccl-tests table: expected a header line such as '#  size  count  type  redop  root  time  algbw  busbw ...' "
                      "by the end of the file, found none in its " + std::to_string(lines) + (lines == 1 ? " line" : " lines"));
  if (log.rows.empty()) throw ConfigError({file, log.header_line, 1}, "", "nccl-tests table has a header but no rows under it");
  log.hosts = static_cast<int>(hosts.size());
  infer_op(text, log);
  return log;
}

NcclLog read_nccl_log(const std::string& path) {
  return parse_nccl_log(config::read_text_file(path), path);
}

hw::ClusterShape shape_for(const NcclLog& log) {
  if (log.ranks == 0)
    throw ConfigError({log.file, log.header_line, log.header_line > 0 ? 1 : 0}, "",
                      "no '#  Rank N ... device' lines before this table: cannot tell how many GPUs ran (give --nodes and --gpus)");
  hw::ClusterShape shape;
  shape.nodes = std::max(1, log.hosts);
  shape.gpus_per_node = log.ranks / *shape.nodes;
  return shape;
}

}  // namespace stepsim::comm
