#include "sim/config/limits.hpp"

namespace stepsim::config {
namespace {

std::string with_commas(std::int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

}  // namespace

std::string over_limit(const Limit& limit, std::int64_t found) {
  return "expected at most " + with_commas(limit.max) + " " + limit.what + " (a limit of stepsim: " + limit.why +
         "), found " + with_commas(found);
}

}  // namespace stepsim::config
