// The memory this process holds now: its resident set as the OS counts it, so that a run can stop
// with a message before it takes the machine's memory (config::kMaxMemoryGib).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace stepsim::config {

/// Resident bytes of this process (Linux: the second field of /proc/self/statm, in pages, proc(5));
/// nothing where the OS does not say.
std::optional<std::int64_t> resident_bytes();

/// The process holds more than config::kMaxMemoryGib. Not a ConfigError: where it is thrown (a
/// router, an engine) nobody knows the input's position; sim/plan turns it into one at the
/// strategy being simulated.
class MemoryLimitExceeded : public std::runtime_error {
 public:
  MemoryLimitExceeded(std::int64_t held_bytes, std::string when);
  /// "expected at most 8 GiB of memory held while simulating (...), found 9 GiB while routing;
  /// `stepsim --limit memory_gib=N` raises the limit" (config::over_limit).
  std::string message() const;
  std::int64_t held_bytes;
  std::string when;  ///< " after building 65,536 tasks"
};

/// Throws MemoryLimitExceeded when the resident set is past the limit; `when` goes in the error.
void check_memory(const std::string& when);

}  // namespace stepsim::config
