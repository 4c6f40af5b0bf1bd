// Quantities with units, as written in YAML and on the command line: `80GiB`, `600GB/s`,
// `200Gb/s`, `1.5us`, `989TFLOPS`.
//
// Decimal prefixes are powers of 1000 and binary ones powers of 1024, as their names say.
// A bit rate (`Gb/s`, `Gbit/s`) is divided by 8. Results are plain numbers in base units:
// bytes (int64), bytes per second (double), picoseconds (int64), FLOP per second (double).
// Parsing never throws: it returns the value or the reason it failed, and the caller, who knows
// the file position, turns the reason into a ConfigError.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace stepsim::config {

enum class QuantityKind { bytes, bandwidth, duration, flop_rate };

/// Why a quantity did not parse, phrased to follow "expected …, found '…'" or stand alone.
struct UnitProblem {
  enum class Kind { not_a_number, missing_unit, unknown_unit } kind;
  std::string unit;  ///< the unit that was not recognised (unknown_unit only)
};

template <typename T>
using Parsed = std::variant<T, UnitProblem>;

Parsed<std::int64_t> parse_bytes(std::string_view text);
Parsed<double> parse_bandwidth(std::string_view text);      ///< bytes per second
Parsed<std::int64_t> parse_duration_ps(std::string_view text);
Parsed<double> parse_flop_rate(std::string_view text);      ///< FLOP per second
/// A count with an optional decimal suffix K, M, B/G, T: `300B` tokens = 3e11.
Parsed<double> parse_count(std::string_view text);

/// An example a user can copy, for messages: "a bandwidth with a unit such as 450GB/s".
std::string describe(QuantityKind kind);
/// The units accepted for a kind, comma-separated, for "unknown unit" messages.
std::string accepted_units(QuantityKind kind);

/// Human-readable forms for output: "80 GiB", "300 GB/s", "1.25 ms", "312 TFLOP/s".
std::string format_bytes(double bytes);
std::string format_bandwidth(double bytes_per_s);
std::string format_duration_ps(double ps);
std::string format_flop_rate(double flop_per_s);

}  // namespace stepsim::config
