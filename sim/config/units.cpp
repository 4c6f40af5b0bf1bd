#include "sim/config/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

namespace stepsim::config {
namespace {

struct Unit {
  std::string_view name;
  double factor;  // to the base unit
};

constexpr double kKilo = 1e3, kKibi = 1024.0;

constexpr std::array kByteUnits{
    Unit{"B", 1.0},           Unit{"KB", kKilo},        Unit{"MB", kKilo * kKilo},
    Unit{"GB", 1e9},          Unit{"TB", 1e12},         Unit{"PB", 1e15},
    Unit{"KiB", kKibi},       Unit{"MiB", kKibi * kKibi}, Unit{"GiB", kKibi * kKibi * kKibi},
    Unit{"TiB", kKibi * kKibi * kKibi * kKibi},
};
// Network links are quoted in bits: HDR InfiniBand is "200 Gb/s" = 25 GB/s.
constexpr std::array kBitRateUnits{
    Unit{"Kb/s", 1e3 / 8},  Unit{"Mb/s", 1e6 / 8},  Unit{"Gb/s", 1e9 / 8},  Unit{"Tb/s", 1e12 / 8},
    Unit{"Kbit/s", 1e3 / 8}, Unit{"Mbit/s", 1e6 / 8}, Unit{"Gbit/s", 1e9 / 8}, Unit{"Tbit/s", 1e12 / 8},
};
constexpr std::array kTimeUnits{
    Unit{"ps", 1.0}, Unit{"ns", 1e3}, Unit{"us", 1e6}, Unit{"ms", 1e9}, Unit{"s", 1e12},
};
constexpr std::array kFlopUnits{
    Unit{"FLOPS", 1.0}, Unit{"GFLOPS", 1e9}, Unit{"TFLOPS", 1e12}, Unit{"PFLOPS", 1e15},
    Unit{"GFLOP/s", 1e9}, Unit{"TFLOP/s", 1e12}, Unit{"PFLOP/s", 1e15},
};
constexpr std::array kCountUnits{
    Unit{"", 1.0}, Unit{"K", 1e3}, Unit{"M", 1e6}, Unit{"B", 1e9}, Unit{"G", 1e9}, Unit{"T", 1e12},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits "1.5 us" into 1.5 and "us". The number must be finite and start the text.
std::optional<std::pair<double, std::string_view>> split_number(std::string_view text) {
  text = trim(text);
  const char* begin = text.data();
  const char* end = begin + text.size();
  double value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc{} || ptr == begin || !std::isfinite(value)) return std::nullopt;
  return std::pair{value, trim(std::string_view(ptr, static_cast<std::size_t>(end - ptr)))};
}

template <std::size_t N, std::size_t M = 0>
Parsed<double> parse_with(std::string_view text, const std::array<Unit, N>& units,
                          const std::array<Unit, M>* more = nullptr, bool unit_optional = false) {
  auto split = split_number(text);
  if (!split) return UnitProblem{UnitProblem::Kind::not_a_number, {}};
  auto [value, unit] = *split;
  if (unit.empty() && !unit_optional) return UnitProblem{UnitProblem::Kind::missing_unit, {}};
  for (const auto& u : units)
    if (u.name == unit) return value * u.factor;
  if (more)
    for (const auto& u : *more)
      if (u.name == unit) return value * u.factor;
  return UnitProblem{UnitProblem::Kind::unknown_unit, std::string(unit)};
}

template <std::size_t N>
std::string join_units(const std::array<Unit, N>& units, std::string_view suffix = "") {
  std::string out;
  for (const auto& u : units) {
    if (!out.empty()) out += ", ";
    out += std::string(u.name) + std::string(suffix);
  }
  return out;
}

Parsed<std::int64_t> to_integer(const Parsed<double>& parsed) {
  if (auto* problem = std::get_if<UnitProblem>(&parsed)) return *problem;
  return static_cast<std::int64_t>(std::llround(std::get<double>(parsed)));
}

std::string format_scaled(double value, const char* const* prefixes, int count, double step,
                          const char* unit) {
  int i = 0;
  while (i + 1 < count && std::fabs(value) >= step) {
    value /= step;
    ++i;
  }
  char buf[64];
  const int decimals = std::fabs(value) >= 100 ? 0 : std::fabs(value) >= 10 ? 1 : 2;
  std::snprintf(buf, sizeof buf, "%.*f %s%s", decimals, value, prefixes[i], unit);
  return buf;
}

}  // namespace

Parsed<std::int64_t> parse_bytes(std::string_view text) {
  return to_integer(parse_with(text, kByteUnits));
}

Parsed<double> parse_bandwidth(std::string_view text) {
  std::string_view t = trim(text);
  // "600GB/s": strip "/s" and read the byte unit; otherwise try bit rates ("200Gb/s").
  auto split = split_number(t);
  if (!split) return UnitProblem{UnitProblem::Kind::not_a_number, {}};
  std::string_view unit = split->second;
  if (unit.empty()) return UnitProblem{UnitProblem::Kind::missing_unit, {}};
  for (const auto& u : kBitRateUnits)
    if (u.name == unit) return split->first * u.factor;
  if (unit.size() > 2 && unit.substr(unit.size() - 2) == "/s") {
    std::string_view bytes_unit = unit.substr(0, unit.size() - 2);
    for (const auto& u : kByteUnits)
      if (u.name == bytes_unit) return split->first * u.factor;
  }
  return UnitProblem{UnitProblem::Kind::unknown_unit, std::string(unit)};
}

Parsed<std::int64_t> parse_duration_ps(std::string_view text) {
  return to_integer(parse_with(text, kTimeUnits));
}

Parsed<double> parse_flop_rate(std::string_view text) { return parse_with(text, kFlopUnits); }

Parsed<double> parse_count(std::string_view text) {
  return parse_with<kCountUnits.size(), 0>(text, kCountUnits, nullptr, true);
}

std::string describe(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::bytes: return "a size with a unit such as 80GiB";
    case QuantityKind::bandwidth: return "a bandwidth with a unit such as 450GB/s";
    case QuantityKind::duration: return "a time with a unit such as 1.5us";
    case QuantityKind::flop_rate: return "a FLOP rate with a unit such as 989TFLOPS";
  }
  return "a quantity with a unit";
}

std::string accepted_units(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::bytes: return join_units(kByteUnits);
    case QuantityKind::bandwidth: return join_units(kByteUnits, "/s") + ", " + join_units(kBitRateUnits);
    case QuantityKind::duration: return join_units(kTimeUnits);
    case QuantityKind::flop_rate: return join_units(kFlopUnits);
  }
  return "";
}

std::string format_bytes(double bytes) {
  static const char* const kPrefixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
  return format_scaled(bytes, kPrefixes, 6, 1024.0, "B");
}

std::string format_bandwidth(double bytes_per_s) {
  static const char* const kPrefixes[] = {"", "K", "M", "G", "T"};
  return format_scaled(bytes_per_s, kPrefixes, 5, 1000.0, "B/s");
}

std::string format_duration_ps(double ps) {
  char buf[64];
  const double a = std::fabs(ps);
  if (a >= 1e12) std::snprintf(buf, sizeof buf, "%.3f s", ps / 1e12);
  else if (a >= 1e9) std::snprintf(buf, sizeof buf, "%.2f ms", ps / 1e9);
  else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.2f us", ps / 1e6);
  else if (a >= 1e3) std::snprintf(buf, sizeof buf, "%.2f ns", ps / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f ps", ps);
  return buf;
}

std::string format_flop_rate(double flop_per_s) {
  static const char* const kPrefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  return format_scaled(flop_per_s, kPrefixes, 7, 1000.0, "FLOP/s");
}

}  // namespace stepsim::config
