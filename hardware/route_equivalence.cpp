#include "hardware/route_equivalence.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace stepsim::hw {
namespace {

// A one-to-one correspondence built up as pairs are seen; false once one would break it.
class Renaming {
 public:
  explicit Renaming(std::size_t expected) { forward_.reserve(expected), backward_.reserve(expected); }
  bool pair(int a, int b) {
    const auto [fwd, new_a] = forward_.try_emplace(a, b);
    const auto [bwd, new_b] = backward_.try_emplace(b, a);
    return fwd->second == b && bwd->second == a && new_a == new_b;
  }
  /// What `a` was paired with, if anything.
  std::optional<int> of(int a) const {
    const auto it = forward_.find(a);
    return it == forward_.end() ? std::nullopt : std::optional<int>(it->second);
  }

 private:
  std::unordered_map<int, int> forward_, backward_;
};

bool same_link(const Link& a, const Link& b) {
  return a.kind == b.kind && a.bytes_per_s == b.bytes_per_s && a.latency_ps == b.latency_ps;
}

}  // namespace

bool same_up_to_renaming(const Router& router, const std::vector<std::pair<int, int>>& pairs, const std::vector<int>& from,
                         const std::vector<int>& to) {
  const Cluster& cluster = router.cluster();
  if (from.size() != to.size()) return false;
  Renaming gpus(from.size()), servers(from.size()), links(4 * pairs.size());
  for (std::size_t i = 0; i < from.size(); ++i) {
    if (!gpus.pair(from[i], to[i])) return false;
    if (!servers.pair(cluster.server_of(from[i]), cluster.server_of(to[i]))) return false;
  }
  // Each renamed GPU sends over links like those of the GPU it renames.
  std::vector<std::pair<int, double>> before, after;  // (kind, rate) of each link leaving it, sorted
  auto outgoing = [&](int gpu, std::vector<std::pair<int, double>>& out) {
    out.clear();
    for (int l : router.links_from(gpu))
      out.emplace_back(static_cast<int>(cluster.links[static_cast<std::size_t>(l)].kind), cluster.links[static_cast<std::size_t>(l)].bytes_per_s);
    std::sort(out.begin(), out.end());
  };
  for (std::size_t i = 0; i < from.size(); ++i) {
    outgoing(from[i], before);
    outgoing(to[i], after);
    if (before != after) return false;
  }
  for (const auto& [a, b] : pairs) {
    const auto ra = gpus.of(a), rb = gpus.of(b);
    if (!ra || !rb) return false;
    const auto& before = router.routes(a, b);
    const auto& after = router.routes(*ra, *rb);
    if (before.size() != after.size()) return false;
    for (std::size_t r = 0; r < before.size(); ++r) {
      if (before[r].size() != after[r].size()) return false;
      for (std::size_t k = 0; k < before[r].size(); ++k) {
        const int x = before[r][k], y = after[r][k];
        if (!links.pair(x, y) || !same_link(cluster.links[static_cast<std::size_t>(x)], cluster.links[static_cast<std::size_t>(y)]))
          return false;
      }
    }
  }
  return true;
}

}  // namespace stepsim::hw
