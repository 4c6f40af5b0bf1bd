#include "sim/core/time.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/core/rounding.hpp"

namespace stepsim::core {

Duration seconds(double s) {
  const double ps = std::nearbyint(s * 1e12);
  if (!std::isfinite(ps) || std::fabs(ps) > 9.2e18)
    throw std::overflow_error("seconds(): " + std::to_string(s) + " s does not fit in int64 picoseconds");
  return {static_cast<std::int64_t>(ps)};
}

std::int64_t ceil_ps(double ps) {
  if (!(ps < 9.2e18)) throw std::overflow_error("time of " + std::to_string(ps) + " ps does not fit in int64");
  if (ps <= 0.0) return 0;
  // A quotient such as 100 B / 50e6 B/s can come out one ulp above the exact integer 2e6 ps;
  // plain ceil would add a spurious picosecond. Allow a few ulps of slack before rounding up.
  const double slack = 4.0 * std::numeric_limits<double>::epsilon() * ps + 1e-9;
  const double up = std::ceil(ps - slack);
  return up < 1.0 ? 1 : static_cast<std::int64_t>(up);
}

std::int64_t ceil_transfer_ps(double bytes, double bytes_per_s) {
  if (bytes <= 0.0) return 0;
  // bytes * 1e12 first: both factors are exact for integer byte counts, so the one division is
  // the only rounding step.
  return ceil_ps(bytes * 1e12 / bytes_per_s);
}

Duration transfer_time(std::int64_t bytes, double bytes_per_s) {
  if (bytes < 0) throw std::invalid_argument("transfer_time: bytes must be >= 0, got " + std::to_string(bytes));
  if (!(bytes_per_s > 0.0) || !std::isfinite(bytes_per_s))
    throw std::invalid_argument("transfer_time: bandwidth must be > 0 bytes/s, got " + std::to_string(bytes_per_s));
  return {ceil_transfer_ps(static_cast<double>(bytes), bytes_per_s)};
}

}  // namespace stepsim::core
