// Shared by the fuzz targets: every reader of user input either returns or throws
// config::ConfigError (exit 2 with a positioned message). Anything else escaping it — another
// exception, which the CLI would report as an internal error (exit 1), a crash, a sanitizer
// report, a hang — is a bug, and libFuzzer stops on it with the input that caused it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/config/config_error.hpp"
#include "sim/plan/scenario.hpp"

namespace stepsim::fuzz {

template <typename Read>
int read_or_refuse(const std::uint8_t* data, std::size_t size, Read&& read) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    read(text);
  } catch (const config::ConfigError&) {
  }
  return 0;
}

/// The scenario of `yaml`, read on the first call (one per target: later calls return it), for
/// targets that apply a framework's config to its strategy.
inline const plan::Scenario& fixed_scenario(const char* yaml) {
  static const auto sc = plan::read_scenario_text(yaml, "fuzz.yaml");
  return sc;
}

}  // namespace stepsim::fuzz
