#include "sim/config/limits.hpp"

#include <array>
#include <atomic>

namespace stepsim::config {
namespace {

constexpr std::array<const Limit*, 6> kLimits{&kMaxGpus, &kMaxSeqLen, &kMaxMicrobatches, &kMaxEvents, &kMaxMemoryGib,
                                              &kMaxTraceSlices};
static_assert(kMaxGpus.id == 0 && kMaxSeqLen.id == 1 && kMaxMicrobatches.id == 2 && kMaxEvents.id == 3 &&
                  kMaxMemoryGib.id == 4 && kMaxTraceSlices.id == 5,
              "a limit's id is its place in kLimits");

// Written by the command line before any work starts, read by every reader (sweeps read from
// several threads): atomics, so that a read never races the one write.
std::array<std::atomic<std::int64_t>, kLimits.size()>& current() {
  static std::array<std::atomic<std::int64_t>, kLimits.size()> values{kMaxGpus.max, kMaxSeqLen.max, kMaxMicrobatches.max,
                                                                         kMaxEvents.max, kMaxMemoryGib.max, kMaxTraceSlices.max};
  return values;
}

}  // namespace

std::string with_commas(std::int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::int64_t limit_value(const Limit& limit) { return current()[static_cast<std::size_t>(limit.id)].load(std::memory_order_relaxed); }

std::optional<std::string> set_limit(std::string_view name, std::int64_t value) {
  for (const Limit* l : kLimits) {
    if (name != l->name) continue;
    if (value < 1) return "--limit " + std::string(name) + ": expected a positive count, found " + with_commas(value);
    if (value > l->ceiling)
      return "--limit " + std::string(name) + ": at most " + with_commas(l->ceiling) + " " + l->what +
             " can be simulated at all, found " + with_commas(value);
    current()[static_cast<std::size_t>(l->id)].store(value, std::memory_order_relaxed);
    return std::nullopt;
  }
  std::string names;
  for (const Limit* l : kLimits) names += std::string(names.empty() ? "" : ", ") + l->name;
  return "--limit: unknown limit '" + std::string(name) + "'; expected one of " + names;
}

void reset_limits() {
  for (const Limit* l : kLimits) current()[static_cast<std::size_t>(l->id)].store(l->max, std::memory_order_relaxed);
}

std::string over_limit(const Limit& limit, std::int64_t found, std::string_view found_detail) {
  return "expected at most " + with_commas(limit_value(limit)) + " " + limit.what + " (a limit of stepsim: " + limit.why +
         "), found " + with_commas(found) + std::string(found_detail) + "; `stepsim --limit " + limit.name +
         "=N` raises the limit";
}

}  // namespace stepsim::config
