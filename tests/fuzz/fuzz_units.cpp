// Quantities with units as written in YAML and on the command line (sim/config/units.hpp,
// comm::parse_size for -b/-e): these return an error value, never throw.
#include "sim/comm/perf_table.hpp"
#include "sim/config/units.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  stepsim::config::parse_bytes(text);
  stepsim::config::parse_bandwidth(text);
  stepsim::config::parse_duration_ps(text);
  stepsim::config::parse_flop_rate(text);
  stepsim::config::parse_count(text);
  stepsim::comm::parse_size(text);
  return 0;
}
