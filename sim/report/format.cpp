#include "sim/report/format.hpp"

#include <cmath>
#include <cstdio>

#include "sim/config/limits.hpp"

namespace stepsim::report {

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string with_thousands(double value) {
  if (!std::isfinite(value)) return "n/a";
  if (std::fabs(value) >= 9e18) return fixed(value, 0);  // past int64: no reader counts that far
  return config::with_commas(std::llround(value));
}

std::string percent(double fraction, int decimals) { return fixed(100.0 * fraction, decimals) + " %"; }

std::string milliseconds(double seconds, int decimals) { return fixed(seconds * 1e3, decimals) + " ms"; }

std::string duration(double seconds) {
  const double a = std::fabs(seconds);
  if (a == 0) return "0 s";
  if (a < 1e-9) return fixed(seconds * 1e12, 0) + " ps";
  if (a < 1e-6) return fixed(seconds * 1e9, 1) + " ns";
  if (a < 1e-3) return fixed(seconds * 1e6, 1) + " us";
  if (a < 1) return fixed(seconds * 1e3, 1) + " ms";
  return fixed(seconds, 2) + " s";
}

std::string gibibytes(double bytes, int decimals) {
  return fixed(bytes / (1024.0 * 1024.0 * 1024.0), decimals) + " GiB";
}

std::size_t display_width(const std::string& text) {
  std::size_t n = 0;
  for (const char c : text)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;  // skip UTF-8 continuation bytes
  return n;
}

std::string pad_left(const std::string& text, std::size_t width) {
  const std::size_t w = display_width(text);
  return w >= width ? text : std::string(width - w, ' ') + text;
}

std::string pad_right(const std::string& text, std::size_t width) {
  const std::size_t w = display_width(text);
  return w >= width ? text : text + std::string(width - w, ' ');
}

}  // namespace stepsim::report
