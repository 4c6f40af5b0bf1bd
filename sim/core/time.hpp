// Simulated time is integer picoseconds; int64 spans ±106 days.
// Not double: equal times must compare equal, and a run must be bit-for-bit reproducible.
// Bytes are int64; bandwidth (bytes/s) is double. This is the only place they become time.
#pragma once

#include <compare>
#include <cstdint>

namespace stepsim::core {

struct Duration {
  std::int64_t ps = 0;
  auto operator<=>(const Duration&) const = default;
  constexpr Duration& operator+=(Duration d) { ps += d.ps; return *this; }
  constexpr double seconds() const { return static_cast<double>(ps) * 1e-12; }
};

struct TimePoint {
  std::int64_t ps = 0;
  auto operator<=>(const TimePoint&) const = default;
  constexpr double seconds() const { return static_cast<double>(ps) * 1e-12; }
};

constexpr TimePoint operator+(TimePoint t, Duration d) { return {t.ps + d.ps}; }
constexpr Duration operator-(TimePoint a, TimePoint b) { return {a.ps - b.ps}; }
constexpr Duration operator+(Duration a, Duration b) { return {a.ps + b.ps}; }
constexpr Duration operator-(Duration a, Duration b) { return {a.ps - b.ps}; }

constexpr Duration picoseconds(std::int64_t v) { return {v}; }
constexpr Duration nanoseconds(std::int64_t v) { return {v * 1'000}; }
constexpr Duration microseconds(std::int64_t v) { return {v * 1'000'000}; }
constexpr Duration milliseconds(std::int64_t v) { return {v * 1'000'000'000}; }
/// Rounds to the nearest picosecond.
Duration seconds(double s);

namespace literals {
constexpr Duration operator""_ps(unsigned long long v) { return {static_cast<std::int64_t>(v)}; }
constexpr Duration operator""_ns(unsigned long long v) { return nanoseconds(static_cast<std::int64_t>(v)); }
constexpr Duration operator""_us(unsigned long long v) { return microseconds(static_cast<std::int64_t>(v)); }
constexpr Duration operator""_ms(unsigned long long v) { return milliseconds(static_cast<std::int64_t>(v)); }
}  // namespace literals

/// Time to move `bytes` at `bytes_per_s`, rounded up once so a non-empty transfer never takes
/// 0 ps (rounding per hop would add up; compare ASTRA-sim Link.cpp).
/// Requires: bytes >= 0, bytes_per_s > 0.
Duration transfer_time(std::int64_t bytes, double bytes_per_s);

}  // namespace stepsim::core
