#include "sim/sweep/sweep_outcome.hpp"

#include <algorithm>
#include <cstdio>

#include "sim/config/config_error.hpp"

namespace stepsim::sweep {

std::size_t SweepOutcome::out_of_memory() const {
  return static_cast<std::size_t>(
      std::count_if(results.begin(), results.end(), [](const PlanResult& p) { return !p.result.fits; }));
}

std::string space_fingerprint(const std::vector<Candidate>& candidates) {
  // FNV-1a, 64 bit (Fowler, Noll, Vo): offset basis and prime from the reference.
  std::uint64_t hash = 14695981039346656037ull;
  auto mix = [&hash](unsigned char byte) {
    hash ^= byte;
    hash *= 1099511628211ull;
  };
  for (const Candidate& c : candidates) {
    for (char ch : c.strategy.name) mix(static_cast<unsigned char>(ch));
    mix('\n');
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

std::vector<std::size_t> ranking(const SweepOutcome& outcome) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < outcome.results.size(); ++i)
    if (outcome.results[i].result.fits) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const PlanResult& x = outcome.results[a];
    const PlanResult& y = outcome.results[b];
    if (x.result.tokens_per_s != y.result.tokens_per_s) return x.result.tokens_per_s > y.result.tokens_per_s;
    if (x.result.peak_memory_bytes != y.result.peak_memory_bytes)
      return x.result.peak_memory_bytes < y.result.peak_memory_bytes;
    return x.index < y.index;
  });
  return order;
}

namespace {

void check_same_sweep(const SweepOutcome& first, const SweepOutcome& part, const std::string& source,
                      const std::string& first_source) {
  auto fail = [&](const std::string& what) {
    throw config::ConfigError({source, 0, 0}, "", what + " than " + first_source + "; merge only shards of one sweep");
  };
  if (part.scenario != first.scenario) fail("scenario '" + part.scenario + "' is another scenario");
  if (part.fingerprint != first.fingerprint || part.enumerated != first.enumerated)
    fail("its plans (" + std::to_string(part.enumerated) + ", fingerprint " + part.fingerprint + ") are other plans");
  if (part.shard_count != first.shard_count)
    fail("it is a slice of " + std::to_string(part.shard_count) + ", a different number of shards");
}

}  // namespace

SweepOutcome merge_outcomes(const std::vector<SweepOutcome>& parts, const std::vector<std::string>& sources) {
  SweepOutcome out = parts.front();
  out.shards.clear();
  out.results.clear();
  out.tried = out.invalid = out.not_run = 0;
  out.interrupted = false;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const SweepOutcome& part = parts[i];
    check_same_sweep(parts.front(), part, sources[i], sources.front());
    for (int k : part.shards) {
      if (std::find(out.shards.begin(), out.shards.end(), k) != out.shards.end())
        throw config::ConfigError({sources[i], 0, 0}, "",
                                  "shard " + std::to_string(k) + "/" + std::to_string(part.shard_count) +
                                      " was already given; merge each shard once");
      out.shards.push_back(k);
    }
    out.tried += part.tried;
    out.invalid += part.invalid;
    out.not_run += part.not_run;
    out.interrupted = out.interrupted || part.interrupted;
    out.results.insert(out.results.end(), part.results.begin(), part.results.end());
  }
  std::sort(out.shards.begin(), out.shards.end());
  std::sort(out.results.begin(), out.results.end(),
            [](const PlanResult& a, const PlanResult& b) { return a.index < b.index; });
  return out;
}

}  // namespace stepsim::sweep
