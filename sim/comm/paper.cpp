#include "sim/comm/paper.hpp"

#include <algorithm>
#include <deque>
#include <optional>
#include <span>
#include <utility>

#include "sim/comm/collective.hpp"
#include "sim/comm/folded_ring.hpp"
#include "sim/comm/network.hpp"

namespace stepsim::comm {
namespace {

struct Paper {
  std::vector<const std::vector<hw::Route>*> routes;  // per transfer: into the memo's pairs or `others`
  std::vector<const PaperMemo::Pair*> pair;           // per transfer: its pair, null for joins and folded rings
  std::vector<int> level;                             // dependency depth
  std::vector<std::pair<std::int64_t, PaperMemo::Pair*>> pairs;  // the distinct pairs asked for
  std::deque<std::vector<hw::Route>> others;                      // joins, folded rings
  // The links the plan uses, numbered densely: a collective of a few ranks touches a few dozen
  // of a large cluster's links, and its tables need only those.
  std::vector<int> dense;  // cluster link -> its index in `used`, or -1
  std::vector<int> used;
};

std::int64_t pair_key(Hop hop, int src, int dst, std::int64_t ranks) {
  return (static_cast<std::int64_t>(hop) * ranks + src) * ranks + dst;
}

// Paper is filled in place (it holds pointers into itself).
void lay_out(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan, PaperMemo& memo, Paper& p) {
  const hw::Cluster& cluster = router.cluster();
  if (memo.router != &router || memo.gpus != gpus) memo = PaperMemo{}, memo.router = &router, memo.gpus = gpus;
  const std::uint64_t paper = ++memo.papers;
  // A pipelined plan repeats the same (src, dst, hop) once per slice: route each pair once.
  const auto ranks = static_cast<std::int64_t>(gpus.size());
  p.routes.reserve(plan.transfers.size());
  p.pair.reserve(plan.transfers.size());
  p.level.reserve(plan.transfers.size());
  for (const auto& t : plan.transfers) {
    int level = 0;
    for (int a : t.after) level = std::max(level, p.level[static_cast<std::size_t>(a)] + (t.is_join ? 0 : 1));
    p.level.push_back(level);
    if (t.is_join || !t.ring.empty()) {
      p.others.push_back(planned_routes(router, gpus, t));
      p.routes.push_back(&p.others.back());
      p.pair.push_back(nullptr);
      continue;
    }
    const std::int64_t key = pair_key(t.hop, t.src, t.dst, ranks);
    auto [it, fresh] = memo.pairs.try_emplace(key);
    PaperMemo::Pair& pair = it->second;
    if (fresh) {
      pair.routes = planned_routes(router, gpus, t);
      for (const auto& r : pair.routes) {
        std::int64_t links = 0;
        for (int l : r) links += cluster.links[static_cast<std::size_t>(l)].latency_ps;
        pair.link_latency_ps.push_back(links);
        pair.leaves.push_back(leaves_server(cluster, r));
      }
    }
    if (pair.paper != paper) pair.paper = paper, p.pairs.emplace_back(key, &pair);
    p.routes.push_back(&pair.routes);
    p.pair.push_back(&pair);
  }
  p.dense.assign(cluster.links.size(), -1);
  for (const auto* routes : p.routes)
    for (const auto& r : *routes)
      for (int l : r)
        if (p.dense[static_cast<std::size_t>(l)] < 0) {
          p.dense[static_cast<std::size_t>(l)] = static_cast<int>(p.used.size());
          p.used.push_back(l);
        }
}

double wire_bytes(const PlannedTransfer& t) { return static_cast<double>(t.bytes) * t.wire_factor; }

// Per used link u, the used links its bytes count on: image[image_begin[u] .. image_begin[u + 1]).
struct Images {
  std::vector<std::size_t> image_begin;
  std::vector<int> image;
};

// A plan in copies (StepPlan::copies) puts on each link what its first copy puts there and on
// the links its other copies rename that link to. Where every route of copy g is copy g − 1's
// route with its links renamed by one map σ (route for route, link for link, each link to one
// of the same rate and latency, and copy 0's from copy G − 1's), copy g's load on σ^g(l) at each
// level is the first copy's on l; summed over the copies, the load is the same on l and σ(l), so
// every copy's transfers end when the first copy's do. Per used link: the used links σ^g of it
// for g = 0..G−1, which its bytes count on (a link that σ turns onto itself in fewer than G
// renamings counts once per g); nullopt where no such σ maps the routes. σ is kept in the memo
// and grows while every pair renames: each pair it renamed before is not checked again.
std::optional<Images> copy_images(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan,
                                  PaperMemo& memo, const Paper& p) {
  const hw::Cluster& cluster = router.cluster();
  const auto ranks = static_cast<std::int64_t>(gpus.size());
  if (memo.copies != plan.copies || memo.copy_rank != plan.copy_rank) {
    memo.copies = plan.copies;
    memo.copy_rank = plan.copy_rank;
    memo.link_image.assign(cluster.links.size(), -1);
    memo.link_preimage.assign(cluster.links.size(), -1);
    for (auto& [key, pair] : memo.pairs) pair.renamed = false;
  }
  auto& sigma = memo.link_image;
  auto& inverse = memo.link_preimage;
  // A renaming that failed part way leaves links it paired: the next paper starts afresh.
  auto failed = [&memo] {
    memo.copies = 1, memo.copy_rank.clear();
    return std::nullopt;
  };
  auto same_kind = [&](int a, int b) {
    const auto& x = cluster.links[static_cast<std::size_t>(a)];
    const auto& y = cluster.links[static_cast<std::size_t>(b)];
    return x.latency_ps == y.latency_ps && effective_bytes_per_s(x, cluster.comm) == effective_bytes_per_s(y, cluster.comm);
  };
  auto rename = [&](const std::vector<hw::Route>& from, const std::vector<hw::Route>& to) {
    if (from.size() != to.size()) return false;
    for (std::size_t r = 0; r < from.size(); ++r) {
      if (from[r].size() != to[r].size() || leaves_server(cluster, from[r]) != leaves_server(cluster, to[r])) return false;
      for (std::size_t k = 0; k < from[r].size(); ++k) {
        const int a = from[r][k], b = to[r][k];
        int& image = sigma[static_cast<std::size_t>(a)];
        int& source = inverse[static_cast<std::size_t>(b)];
        if (image < 0 && source < 0 && same_kind(a, b)) image = b, source = a;
        else if (image != b || source != a) return false;
      }
    }
    return true;
  };
  for (const auto& [key, pair] : p.pairs) {
    if (pair->renamed) continue;
    const auto hop = static_cast<Hop>(key / (ranks * ranks));
    const int src = static_cast<int>(key / ranks % ranks), dst = static_cast<int>(key % ranks);
    int a = src, b = dst;
    // The router keeps every pair's routes where it first found them: whole routes are read in
    // place, the up or down hop of one (NVLS) copied out.
    std::vector<hw::Route> current_hop, next_hop;
    const std::vector<hw::Route>* current = &pair->routes;
    for (int g = 1; g <= plan.copies; ++g) {
      a = plan.copy_rank[static_cast<std::size_t>(a)], b = plan.copy_rank[static_cast<std::size_t>(b)];
      if (g == plan.copies && (a != src || b != dst)) return failed();
      const int from = gpus[static_cast<std::size_t>(a)], to = gpus[static_cast<std::size_t>(b)];
      const std::vector<hw::Route>* next = &pair->routes;
      if (g < plan.copies && hop == Hop::full) next = &router.routes(from, to);
      else if (g < plan.copies) next = &(next_hop = hop_routes(router, from, to, hop));
      if (!rename(*current, *next)) return failed();
      if (next == &next_hop) std::swap(current_hop, next_hop), next = &current_hop;
      current = next;
    }
    pair->renamed = true;
  }
  Images images{.image_begin = {0}, .image = {}};
  for (int used : p.used) {
    int l = used;
    for (int g = 0; g < plan.copies; ++g, l = sigma[static_cast<std::size_t>(l)])
      if (p.dense[static_cast<std::size_t>(l)] >= 0) images.image.push_back(p.dense[static_cast<std::size_t>(l)]);
    images.image_begin.push_back(images.image.size());
  }
  return images;
}

// The used links' rates, and where a link's bytes count: on itself, and in copies on its images.
struct Links {
  const Paper& p;
  const std::optional<Images>& images;
  std::vector<double> rate;

  Links(const hw::Cluster& cluster, const Paper& paper, const std::optional<Images>& copy_images)
      : p(paper), images(copy_images), rate(paper.used.size()) {
    for (std::size_t u = 0; u < p.used.size(); ++u)
      rate[u] = effective_bytes_per_s(cluster.links[static_cast<std::size_t>(p.used[u])], cluster.comm);
  }
  std::size_t dense(int link) const { return static_cast<std::size_t>(p.dense[static_cast<std::size_t>(link)]); }
  template <class F>
  void each_target(int link, F&& f) const {
    const std::size_t u = dense(link);
    if (!images) return f(u);
    for (std::size_t k = images->image_begin[u]; k < images->image_begin[u + 1]; ++k) f(static_cast<std::size_t>(images->image[k]));
  }
  void add(std::vector<double>& to, int link, double bytes) const {
    each_target(link, [&](std::size_t u) { to[u] += bytes; });
  }
};

// Per transfer, how long it is busy once started (seconds): its latency (a folded ring's from
// `folded`) plus the time its busiest link needs for all that its dependency level puts there.
// Level by level, the transfers of a level in plan order, so each link's sum is in plan order.
std::vector<double> busy_times(const hw::Cluster& cluster, const StepPlan& plan,
                               const std::vector<std::optional<std::int64_t>>& folded, const Paper& p, const Links& links) {
  const int levels = p.level.empty() ? 0 : *std::max_element(p.level.begin(), p.level.end()) + 1;
  std::vector<std::size_t> level_begin(static_cast<std::size_t>(levels) + 1, 0), by_level(plan.transfers.size());
  for (int l : p.level) ++level_begin[static_cast<std::size_t>(l) + 1];
  for (int l = 0; l < levels; ++l) level_begin[static_cast<std::size_t>(l) + 1] += level_begin[static_cast<std::size_t>(l)];
  std::vector<std::size_t> fill(level_begin.begin(), level_begin.end() - 1);
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) by_level[fill[static_cast<std::size_t>(p.level[i])]++] = i;
  std::vector<double> load(p.used.size(), 0.0), busy(plan.transfers.size(), 0.0);
  for (int l = 0; l < levels; ++l) {
    const std::span<const std::size_t> level(by_level.data() + level_begin[static_cast<std::size_t>(l)],
                                             by_level.data() + level_begin[static_cast<std::size_t>(l) + 1]);
    for (std::size_t i : level)
      for (const auto& r : *p.routes[i])
        for (int link : r) links.add(load, link, wire_bytes(plan.transfers[i]) / static_cast<double>(p.routes[i]->size()));
    for (std::size_t i : level)
      for (std::size_t route = 0; route < p.routes[i]->size(); ++route) {
        const auto& r = (*p.routes[i])[route];
        double drain = 0;
        for (int link : r) drain = std::max(drain, load[links.dense(link)] / links.rate[links.dense(link)]);
        const auto* pair = p.pair[i];
        const auto latency_ps = folded[i] ? *folded[i]
                                : pair    ? transfer_latency_ps(pair->link_latency_ps[route], pair->leaves[route], plan.transfers[i])
                                          : transfer_latency_ps(cluster, r, plan.transfers[i]);
        busy[i] = std::max(busy[i], static_cast<double>(latency_ps) * 1e-12 + drain);
      }
    for (std::size_t i : level)
      for (const auto& r : *p.routes[i])
        for (int link : r) links.each_target(link, [&](std::size_t u) { load[u] = 0; });
  }
  return busy;
}

}  // namespace

core::Duration on_paper(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan,
                        const std::vector<std::optional<std::int64_t>>& folded, PaperMemo& memo) {
  const hw::Cluster& cluster = router.cluster();
  Paper p;
  lay_out(router, gpus, plan, memo, p);
  std::optional<Images> images;
  if (plan.copies > 1) {
    images = copy_images(router, gpus, plan, memo, p);
    if (!images)
      return on_paper(router, gpus, expanded(plan),
                      std::vector<std::optional<std::int64_t>>(plan.transfers.size() * static_cast<std::size_t>(plan.copies)), memo);
  }
  const Links links(cluster, p, images);
  const std::vector<double> busy = busy_times(cluster, plan, folded, p, links);
  std::vector<double> finish(plan.transfers.size(), 0.0);  // seconds after launch
  std::vector<double> total(p.used.size(), 0.0);
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    double start = 0;
    for (int a : t.after) start = std::max(start, finish[static_cast<std::size_t>(a)]);
    finish[i] = start + busy[i];
    for (const auto& r : *p.routes[i])
      for (int link : r) links.add(total, link, wire_bytes(t) / static_cast<double>(p.routes[i]->size()));
  }
  // No link can carry its bytes faster than its capacity, whatever the dependency levels say.
  double end = 0;
  for (std::size_t u = 0; u < total.size(); ++u)
    if (total[u] > 0) end = std::max(end, total[u] / links.rate[u]);
  for (const auto& done : plan.rank_done)
    for (int t : done) end = std::max(end, finish[static_cast<std::size_t>(t)]);
  return core::picoseconds(plan.launch_latency_ps) + core::seconds(end);
}

core::Duration estimate_plan(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan) {
  PaperMemo memo;
  return on_paper(router, gpus, plan, std::vector<std::optional<std::int64_t>>(plan.transfers.size()), memo);
}

bool paper_uses_copies(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan) {
  if (plan.copies <= 1) return false;
  Paper p;
  PaperMemo memo;
  lay_out(router, gpus, plan, memo, p);
  return copy_images(router, gpus, plan, memo, p).has_value();
}

}  // namespace stepsim::comm
