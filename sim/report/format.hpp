// Number formatting for what a person reads: fixed units per table row so columns line up, a
// unit on every number, thousands separators for large counts. Pure functions of their inputs.
#pragma once

#include <cstdint>
#include <string>

namespace stepsim::report {

/// `value` with `decimals` digits after the point ("12.35").
std::string fixed(double value, int decimals);
/// A count rounded to an integer with thousands separators: 39736.4 -> "39,736".
std::string with_thousands(double value);
/// A fraction as a percentage: 0.2727 -> "27.3 %".
std::string percent(double fraction, int decimals = 1);
/// Seconds shown in milliseconds: 0.4123 -> "412.3 ms".
std::string milliseconds(double seconds, int decimals = 1);
/// Seconds in the unit that suits them: "850 ps", "12.5 us", "412.3 ms", "2.41 s".
std::string duration(double seconds);
/// Bytes in GiB: "61.2 GiB".
std::string gibibytes(double bytes, int decimals = 1);

/// Display width of UTF-8 text: code points, so "−" counts once.
std::size_t display_width(const std::string& text);
/// `text` padded with spaces on the left (right-aligned) or right to `width` columns.
std::string pad_left(const std::string& text, std::size_t width);
std::string pad_right(const std::string& text, std::size_t width);

}  // namespace stepsim::report
