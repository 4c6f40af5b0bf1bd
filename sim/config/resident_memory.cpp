#include "sim/config/resident_memory.hpp"

#include <unistd.h>

#include <fstream>

#include "sim/config/limits.hpp"

namespace stepsim::config {

std::optional<std::int64_t> resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) return std::nullopt;
  const long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) return std::nullopt;
  return resident_pages * page;
}

MemoryLimitExceeded::MemoryLimitExceeded(std::int64_t held, std::string w)
    : std::runtime_error("the process holds " + std::to_string(held) + " bytes" + w), held_bytes(held), when(std::move(w)) {}

std::string MemoryLimitExceeded::message() const {
  constexpr std::int64_t gib = std::int64_t{1} << 30;
  return over_limit(kMaxMemoryGib, (held_bytes + gib - 1) / gib, " GiB" + when);
}

void check_memory(const std::string& when) {
  const auto held = resident_bytes();
  if (held && *held > limit_value(kMaxMemoryGib) * (std::int64_t{1} << 30)) throw MemoryLimitExceeded(*held, when);
}

}  // namespace stepsim::config
