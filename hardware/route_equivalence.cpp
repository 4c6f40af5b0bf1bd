#include "hardware/route_equivalence.hpp"

#include <algorithm>
#include <optional>
#include <vector>

namespace stepsim::hw {
namespace {

// A one-to-one correspondence over the ids 0 .. domain−1, built up as pairs are seen. Flat: the
// links of a 16,384-GPU cluster number 180k, and a hash node per pair was most of a check's time.
class Renaming {
 public:
  /// What pair() found: a pair that would break the correspondence, one seen before, or a new one.
  enum class Paired { conflict, known, fresh };

  explicit Renaming(std::size_t domain) : forward_(domain, kNone), backward_(domain, kNone) {}
  Paired pair(int a, int b) {
    int& to = forward_[static_cast<std::size_t>(a)];
    int& from = backward_[static_cast<std::size_t>(b)];
    if (to == kNone && from == kNone) {
      to = b, from = a;
      return Paired::fresh;
    }
    return to == b && from == a ? Paired::known : Paired::conflict;
  }
  bool pairs(int a, int b) { return pair(a, b) != Paired::conflict; }
  /// What `a` was paired with, if anything.
  std::optional<int> of(int a) const {
    const int to = forward_[static_cast<std::size_t>(a)];
    return to == kNone ? std::nullopt : std::optional<int>(to);
  }

 private:
  static constexpr int kNone = -1;
  std::vector<int> forward_, backward_;
};

}  // namespace

bool same_up_to_renaming(const Router& router, const std::vector<std::pair<int, int>>& pairs, const std::vector<int>& from,
                         const std::vector<int>& to) {
  const Cluster& cluster = router.cluster();
  if (from.size() != to.size()) return false;
  const auto is_gpu = [&](int g) { return g >= 0 && g < cluster.gpu_count(); };
  if (!std::all_of(from.begin(), from.end(), is_gpu) || !std::all_of(to.begin(), to.end(), is_gpu)) return false;
  // Servers are numbered below the GPUs' count (Cluster::server_of).
  const auto gpu_count = static_cast<std::size_t>(cluster.gpu_count());
  Renaming gpus(gpu_count), servers(gpu_count), links(cluster.links.size());
  for (std::size_t i = 0; i < from.size(); ++i) {
    if (!gpus.pairs(from[i], to[i])) return false;
    if (!servers.pairs(cluster.server_of(from[i]), cluster.server_of(to[i]))) return false;
  }
  // Each renamed GPU sends over links like those of the GPU it renames.
  std::vector<std::pair<int, double>> sends, renamed_sends;  // (kind, rate) of each link leaving it, sorted
  auto outgoing = [&](int gpu, std::vector<std::pair<int, double>>& out) {
    out.clear();
    for (int l : router.links_from(gpu))
      out.emplace_back(static_cast<int>(cluster.links[static_cast<std::size_t>(l)].kind), cluster.links[static_cast<std::size_t>(l)].bytes_per_s);
    std::sort(out.begin(), out.end());
  };
  for (std::size_t i = 0; i < from.size(); ++i) {
    outgoing(from[i], sends);
    outgoing(to[i], renamed_sends);
    if (sends != renamed_sends) return false;
  }
  for (const auto& [a, b] : pairs) {
    if (!is_gpu(a) || !is_gpu(b)) return false;
    const auto ra = gpus.of(a), rb = gpus.of(b);
    if (!ra || !rb) return false;
    const auto& before = router.routes(a, b);
    const auto& after = router.routes(*ra, *rb);
    if (before.size() != after.size()) return false;
    for (std::size_t r = 0; r < before.size(); ++r) {
      if (before[r].size() != after[r].size()) return false;
      for (std::size_t k = 0; k < before[r].size(); ++k) {
        const int x = before[r][k], y = after[r][k];
        const Renaming::Paired paired = links.pair(x, y);
        if (paired == Renaming::Paired::conflict || (paired == Renaming::Paired::fresh && router.link_class(x) != router.link_class(y)))
          return false;
      }
    }
  }
  return true;
}

}  // namespace stepsim::hw
