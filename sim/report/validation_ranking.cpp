#include "sim/report/validation_ranking.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace stepsim::report {
namespace {

// Average ranks (1-based) with ties sharing the mean of the ranks they span.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean_rank = 0.5 * static_cast<double>(i + j) + 1.0;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = mean_rank;
    i = j + 1;
  }
  return r;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

GroupRanking rank_one(const std::vector<const ValidationRow*>& plans) {
  const bool higher = higher_is_better(plans.front()->metric);
  // Compare as "goodness": larger is better on both sides.
  auto good = [&](double v) { return higher ? v : -v; };
  std::vector<double> measured, predicted;
  for (const auto* r : plans) measured.push_back(good(r->measured)), predicted.push_back(good(r->predicted));
  const auto best = [](const std::vector<double>& v) {
    return static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin());
  };
  const std::size_t pick = best(predicted), truth = best(measured);
  GroupRanking g;
  g.source = plans.front()->source;
  g.group = plans.front()->group;
  g.plans = static_cast<int>(plans.size());
  g.spearman = spearman(predicted, measured);
  const double pick_value = plans[pick]->measured, best_value = plans[truth]->measured;
  g.regret = higher ? best_value / pick_value - 1 : pick_value / best_value - 1;
  g.picked_best = g.regret <= 0;
  g.predicted_best = plans[pick]->name;
  g.measured_best = plans[truth]->name;
  return g;
}

}  // namespace

bool higher_is_better(const std::string& metric) { return metric != "step_time_s"; }

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double mean = (n + 1) / 2;  // mean of ranks 1..n, ties included
  double cov = 0, va = 0, vb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (va == 0 || vb == 0) return 1.0;
  return cov / std::sqrt(va * vb);
}

std::vector<GroupRanking> rank_groups(const std::vector<ValidationRow>& rows) {
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<const ValidationRow*>> members;
  for (const auto& r : rows) {
    if (r.group.empty()) continue;
    const auto key = std::make_pair(r.source, r.group);
    if (!members.count(key)) order.push_back(key);
    members[key].push_back(&r);
  }
  std::vector<GroupRanking> out;
  for (const auto& key : order)
    if (members[key].size() >= 2) out.push_back(rank_one(members[key]));
  return out;
}

std::vector<RankingSummary> summarize_rankings(const std::vector<GroupRanking>& groups) {
  std::vector<std::string> sources;
  for (const auto& g : groups)
    if (std::find(sources.begin(), sources.end(), g.source) == sources.end()) sources.push_back(g.source);
  auto summary = [&](const std::string& source) {
    RankingSummary s;
    s.source = source.empty() ? "all" : source;
    std::vector<double> regrets;
    double rho = 0;
    for (const auto& g : groups) {
      if (!source.empty() && g.source != source) continue;
      ++s.groups;
      s.picked_best += g.picked_best ? 1 : 0;
      rho += g.spearman;
      regrets.push_back(g.regret);
    }
    if (s.groups == 0) return s;
    s.mean_spearman = rho / s.groups;
    s.median_regret = median(regrets);
    s.max_regret = *std::max_element(regrets.begin(), regrets.end());
    return s;
  };
  std::vector<RankingSummary> out;
  for (const auto& source : sources) out.push_back(summary(source));
  if (sources.size() > 1) out.push_back(summary(""));
  return out;
}

}  // namespace stepsim::report
