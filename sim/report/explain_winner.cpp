// explain_winner (declared in comparison.hpp): sentences built from the headline numbers.
#include <algorithm>

#include "sim/report/comparison.hpp"
#include "sim/report/format.hpp"

namespace stepsim::report {

namespace {

constexpr double kNoticeable = 0.01;  // shares below 1 % of a step are not worth a sentence

// "31 % of its step to pipeline bubbles and 12 % to exposed TP communication"
std::string top_losses(const plan::StepResult& r, std::size_t max_items) {
  std::string text;
  std::size_t n = 0;
  for (const auto& loss : losses_of(r)) {
    if (loss.fraction < kNoticeable || n == max_items) break;
    if (n > 0) text += " and ";
    text += percent(loss.fraction, 0) + (n == 0 ? " of its step to " : " to ") + loss.what;
    ++n;
  }
  return text;
}

std::string does_not_fit(const plan::StepResult& r) {
  std::string s = r.name + " does not fit: it needs " + gibibytes(static_cast<double>(r.peak_memory_bytes)) +
                  " per GPU of " + gibibytes(static_cast<double>(r.memory_capacity_bytes));
  if (!r.memory_note.empty()) s += " (" + r.memory_note + ")";
  return s + ".";
}

std::string about_loser(const plan::StepResult& r, const plan::StepResult& winner) {
  if (!r.fits) return does_not_fit(r);
  const std::string losses = top_losses(r, 2);
  const std::string speed = " (" + fixed(winner.tokens_per_s / std::max(r.tokens_per_s, 1e-9), 2) + "x slower)";
  if (!losses.empty()) return r.name + speed + " loses " + losses + ".";
  return r.name + speed + " loses under 1 % to bubbles and exposed communication; its compute runs at " +
         percent(r.mfu) + " MFU against " + percent(winner.mfu) + ".";
}

std::string about_winner(const std::vector<plan::StepResult>& results, std::size_t w) {
  const auto& winner = results[w];
  std::string s = winner.name + " is the best plan that fits: " + with_thousands(winner.tokens_per_s) +
                  " tokens/s, " + fixed(winner.tflops_per_gpu, 1) + " TFLOP/s per GPU, " + percent(winner.mfu) + " MFU";
  std::optional<std::size_t> runner_up;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (i != w && results[i].fits && (!runner_up || results[i].tokens_per_s > results[*runner_up].tokens_per_s))
      runner_up = i;
  if (runner_up) {
    const auto& r = results[*runner_up];
    s += ", " + fixed(winner.tokens_per_s / std::max(r.tokens_per_s, 1e-9), 2) + "x the runner-up " + r.name;
  }
  s += ".";
  const std::string losses = top_losses(winner, 2);
  s += losses.empty() ? " It loses under 1 % of its step to bubbles and exposed communication."
                      : " It still loses " + losses + ".";
  return s;
}

}  // namespace

std::string explain_winner(const std::vector<plan::StepResult>& results) {
  if (results.empty()) return "";
  const auto best = best_index(results);
  if (!best) {
    const auto smallest = std::min_element(results.begin(), results.end(), [](const auto& a, const auto& b) {
      return a.peak_memory_bytes - a.memory_capacity_bytes < b.peak_memory_bytes - b.memory_capacity_bytes;
    });
    return "No plan fits in memory. Closest: " + does_not_fit(*smallest) + "\n";
  }
  std::string out = about_winner(results, *best) + "\n";
  std::vector<std::size_t> others;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (i != *best) others.push_back(i);
  // Fitting plans fastest first, then those that do not fit.
  std::stable_sort(others.begin(), others.end(), [&](std::size_t a, std::size_t b) {
    if (results[a].fits != results[b].fits) return results[a].fits;
    return results[a].tokens_per_s > results[b].tokens_per_s;
  });
  constexpr std::size_t kMaxOthers = 5;
  for (std::size_t k = 0; k < others.size() && k < kMaxOthers; ++k)
    out += about_loser(results[others[k]], results[*best]) + "\n";
  if (others.size() > kMaxOthers) out += "(" + std::to_string(others.size() - kMaxOthers) + " more plans not described)\n";
  return out;
}

}  // namespace stepsim::report
