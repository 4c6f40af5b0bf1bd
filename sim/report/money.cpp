#include "sim/report/money.hpp"

#include <cmath>
#include <limits>

#include "sim/report/comparison.hpp"
#include "sim/report/format.hpp"
#include "sim/report/text_table.hpp"

namespace stepsim::report {

TrainingCost training_cost(const plan::StepResult& r, double tokens, std::optional<double> price) {
  TrainingCost c;
  const double seconds = r.tokens_per_s > 0 ? tokens / r.tokens_per_s : std::numeric_limits<double>::infinity();
  c.days = seconds / 86'400;
  c.gpu_hours = seconds / 3'600 * r.gpus;
  if (price) c.dollars = c.gpu_hours * *price;
  return c;
}

std::string compact_count(double n) {
  struct Suffix { double scale; const char* name; };
  for (const Suffix s : {Suffix{1e12, "T"}, Suffix{1e9, "B"}, Suffix{1e6, "M"}, Suffix{1e3, "K"}}) {
    if (n < s.scale) continue;
    const double v = n / s.scale;
    return (std::fabs(v - std::round(v)) < 1e-9 ? fixed(v, 0) : fixed(v, 1)) + s.name;
  }
  return fixed(n, 0);
}

std::string format_time_and_money(const std::vector<plan::StepResult>& results, double tokens,
                                  std::optional<double> price) {
  std::string out = "Training on " + compact_count(tokens) + " tokens";
  out += price ? " at $" + fixed(*price, 2) + " per GPU-hour:\n" : " (no price: give --price-per-gpu-hour):\n";
  const auto best = best_index(results);
  TextTable table({"strategy", "GPUs", "days to train", "GPU-hours", "cost"},
                  {Align::left, Align::right, Align::right, Align::right, Align::right});
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const std::string name = (best == i ? "*" : "") + r.name;
    if (!r.fits || r.tokens_per_s <= 0) {
      table.add_row({name, std::to_string(r.gpus), r.fits ? "n/a" : "does not fit", "-", "-"});
      continue;
    }
    const auto c = training_cost(r, tokens, price);
    table.add_row({name, std::to_string(r.gpus), fixed(c.days, 1) + " days", with_thousands(c.gpu_hours) + " h",
                   c.dollars ? "$" + with_thousands(*c.dollars) : "-"});
  }
  return out + table.render();
}

}  // namespace stepsim::report
