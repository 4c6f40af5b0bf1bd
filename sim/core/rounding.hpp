// How fractional picoseconds become whole ones. Every completion time the engine computes goes
// through here, so rounding happens once per completion (never per hop) and always up: a
// non-empty transfer or a non-zero piece of work never takes 0 ps.
#pragma once

#include <cstdint>

namespace stepsim::core {

/// Rounds a non-negative time in picoseconds up to a whole picosecond, treating values within a few
/// ulps above an integer as that integer (float noise must not add a picosecond). Positive input
/// gives at least 1. Throws std::overflow_error past int64.
std::int64_t ceil_ps(double ps);

/// Picoseconds to move `bytes` (may be fractional: a flow's remainder) at `bytes_per_s`, rounded up.
/// Requires: bytes_per_s > 0.
std::int64_t ceil_transfer_ps(double bytes, double bytes_per_s);

}  // namespace stepsim::core
