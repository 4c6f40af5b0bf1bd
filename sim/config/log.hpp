// Where the layers above sim/core say what they decided (which fidelity a plan ran at, how many
// tasks it made): a sink that tools/ points at spdlog behind -v / -q. The layers hold no logger of
// their own, so a library caller gets silence unless it passes one; a sink may be called from
// several threads at once (a sweep's workers), so it must be thread-safe.
#pragma once

#include <functional>
#include <string>

namespace stepsim::config {

enum class LogLevel { debug, info, warn };

struct Log {
  LogLevel threshold = LogLevel::warn;
  std::function<void(LogLevel, const std::string&)> sink;  ///< empty: discard everything

  /// Whether a message at `level` would be written: test before building an expensive message.
  bool wants(LogLevel level) const { return sink && level >= threshold; }
  void write(LogLevel level, const std::string& message) const {
    if (wants(level)) sink(level, message);
  }
  void debug(const std::string& message) const { write(LogLevel::debug, message); }
  void info(const std::string& message) const { write(LogLevel::info, message); }
  void warn(const std::string& message) const { write(LogLevel::warn, message); }
};

}  // namespace stepsim::config
