#include "sim/config/units.hpp"

#include <doctest/doctest.h>

using namespace stepsim::config;

namespace {
template <typename T>
T value(const Parsed<T>& p) {
  REQUIRE(std::holds_alternative<T>(p));
  return std::get<T>(p);
}
template <typename T>
UnitProblem problem(const Parsed<T>& p) {
  REQUIRE(std::holds_alternative<UnitProblem>(p));
  return std::get<UnitProblem>(p);
}
}  // namespace

TEST_CASE("decimal and binary byte prefixes mean what they say") {
  CHECK(value(parse_bytes("80GB")) == 80'000'000'000);
  CHECK(value(parse_bytes("80GiB")) == 80LL * 1024 * 1024 * 1024);
  CHECK(value(parse_bytes("25MB")) == 25'000'000);
  CHECK(value(parse_bytes("1.5KiB")) == 1536);
  CHECK(value(parse_bytes("7 B")) == 7);
  CHECK(value(parse_bytes("1TiB")) == 1024LL * 1024 * 1024 * 1024);
}

TEST_CASE("bandwidths: bytes per second, and bit rates divided by eight") {
  CHECK(value(parse_bandwidth("600GB/s")) == doctest::Approx(600e9));
  CHECK(value(parse_bandwidth("1.5GiB/s")) == doctest::Approx(1.5 * 1024 * 1024 * 1024));
  // HDR InfiniBand: 200 Gb/s = 25 GB/s.
  CHECK(value(parse_bandwidth("200Gb/s")) == doctest::Approx(25e9));
  CHECK(value(parse_bandwidth("400Gbit/s")) == doctest::Approx(50e9));
}

TEST_CASE("durations are integer picoseconds") {
  CHECK(value(parse_duration_ps("1.5us")) == 1'500'000);
  CHECK(value(parse_duration_ps("2ms")) == 2'000'000'000);
  CHECK(value(parse_duration_ps("3ns")) == 3'000);
  CHECK(value(parse_duration_ps("1s")) == 1'000'000'000'000);
  CHECK(value(parse_duration_ps("7ps")) == 7);
}

TEST_CASE("FLOP rates and counts") {
  CHECK(value(parse_flop_rate("989TFLOPS")) == doctest::Approx(989e12));
  CHECK(value(parse_flop_rate("1.5PFLOPS")) == doctest::Approx(1.5e15));
  CHECK(value(parse_count("300B")) == doctest::Approx(3e11));
  CHECK(value(parse_count("42")) == doctest::Approx(42));
}

TEST_CASE("a bare number, an unknown unit and text that is not a number are told apart") {
  CHECK(problem(parse_bytes("80")).kind == UnitProblem::Kind::missing_unit);
  CHECK(problem(parse_bandwidth("450")).kind == UnitProblem::Kind::missing_unit);
  auto unknown = problem(parse_bandwidth("450GX/s"));
  CHECK(unknown.kind == UnitProblem::Kind::unknown_unit);
  CHECK(unknown.unit == "GX/s");
  CHECK(problem(parse_duration_ps("fast")).kind == UnitProblem::Kind::not_a_number);
}

TEST_CASE("formatting for people") {
  CHECK(format_bytes(80.0 * 1024 * 1024 * 1024) == "80.0 GiB");
  CHECK(format_bandwidth(230e9) == "230 GB/s");
  CHECK(format_duration_ps(1.25e9) == "1.25 ms");
  CHECK(format_flop_rate(312e12) == "312 TFLOP/s");
}
