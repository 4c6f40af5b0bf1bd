#include <doctest/doctest.h>

#include <stdexcept>

#include "sim/core/time.hpp"

using namespace stepsim::core;
using namespace stepsim::core::literals;

TEST_CASE("time literals and arithmetic are exact picoseconds") {
  CHECK((1_us).ps == 1'000'000);
  CHECK((3_ns + 5_ps).ps == 3'005);
  CHECK((TimePoint{} + 2_ms) - TimePoint{} + 0_ps == milliseconds(2));
  // 1.5 us = 1.5e-6 s = 1,500,000 ps, rounded to nearest.
  CHECK(seconds(1.5e-6).ps == 1'500'000);
  CHECK(seconds(1e-12 * 0.4).ps == 0);
}

TEST_CASE("transfer_time rounds up once, without float noise") {
  // 100 B at 50e6 B/s = 2e-6 s = 2,000,000 ps exactly; a naive 100/50e6*1e12 gives 2000000.0000000002.
  CHECK(transfer_time(100, 50e6).ps == 2'000'000);
  // 1 B at 3 B/s = 0.333... s = 333,333,333,333.33 ps, rounded up to ...334.
  CHECK(transfer_time(1, 3.0).ps == 333'333'333'334);
  // 1 B at 900 GB/s = 1.11 ps -> 2 ps: a non-empty transfer never takes 0 ps.
  CHECK(transfer_time(1, 900e9).ps == 2);
  CHECK(transfer_time(1, 1e15).ps == 1);  // 0.001 ps still rounds up to 1
  CHECK(transfer_time(0, 1e9).ps == 0);
  // 7 B at 7e9 B/s = 1e-9 s = 1000 ps.
  CHECK(transfer_time(7, 7e9).ps == 1'000);
}

TEST_CASE("transfer_time rejects bad input") {
  CHECK_THROWS_AS(transfer_time(-1, 1e9), std::invalid_argument);
  CHECK_THROWS_AS(transfer_time(1, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(transfer_time(1'000'000'000'000, 1e-3), std::overflow_error);
}
