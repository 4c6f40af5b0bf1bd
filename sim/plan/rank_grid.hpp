// The parallel grid: which GPU holds which (tp, dp, pp) coordinate, and the groups that talk.
// rank_order names the dimensions innermost first; "tp-dp-pp" (Megatron-LM's default) puts a TP
// group on consecutive GPUs, DP replicas next, pipeline stages outermost. Rank r runs on GPU r.
// Context parallelism (Megatron-Core's order tp-cp-ep-dp-pp) sits inside the data dimension: its
// cp ranks are consecutive there, so "tp-dp-pp" with cp > 1 is Megatron-Core's "tp-cp-dp-pp".
// Header-only, O(1) per query.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace stepsim::plan {

struct Coord {
  int tp = 0, dp = 0, pp = 0;
};

class RankGrid {
 public:
  /// Requires: order is a permutation of "tp", "dp", "pp" joined by '-' (check_strategy ensures it).
  /// `dp` replicas of `cp` context-parallel ranks each make the data dimension (dp·cp ranks).
  RankGrid(int tp, int pp, int dp, const std::string& order, int cp = 1) : size_{tp, dp * cp, pp}, cp_(cp) {
    for (int i = 0; i < 3; ++i) {
      const std::string part = order.substr(static_cast<std::size_t>(i) * 3, 2);
      dim_[i] = part == "tp" ? 0 : part == "dp" ? 1 : 2;
    }
    int stride = 1;
    for (int i = 0; i < 3; ++i) {
      stride_[dim_[i]] = stride;
      stride *= size_[dim_[i]];
    }
  }

  int size() const { return size_[0] * size_[1] * size_[2]; }
  int tp() const { return size_[0]; }
  /// Ranks of the data dimension: DP replicas × CP ranks, which hold the same parameters and
  /// reduce their gradients together (Megatron-Core's data-parallel group with context parallel).
  int dp() const { return size_[1]; }
  int pp() const { return size_[2]; }
  int cp() const { return cp_; }

  int rank(Coord c) const { return c.tp * stride_[0] + c.dp * stride_[1] + c.pp * stride_[2]; }
  Coord coord(int rank) const {
    return {rank / stride_[0] % size_[0], rank / stride_[1] % size_[1], rank / stride_[2] % size_[2]};
  }
  std::vector<int> tp_group(int rank) const { return group(rank, 0); }
  std::vector<int> dp_group(int rank) const { return group(rank, 1); }
  std::vector<int> pp_group(int rank) const { return group(rank, 2); }
  /// The cp consecutive data indices around `rank` that share its sequences (ring attention).
  std::vector<int> cp_group(int rank) const { return ep_group(rank, cp_); }
  /// Expert parallelism splits DP (Megatron-Core's parallel_state.py, EP inside DP): the expert-
  /// parallel group is the `ep` consecutive DP indices around `rank` (it exchanges tokens), the
  /// expert-data-parallel group the dp/ep indices with the same position in their EP group (they
  /// hold the same experts and reduce their gradients). Requires: ep divides dp.
  std::vector<int> ep_group(int rank, int ep) const {
    Coord c = coord(rank);
    std::vector<int> out;
    for (int i = c.dp / ep * ep; i < (c.dp / ep + 1) * ep; ++i) out.push_back(this->rank({c.tp, i, c.pp}));
    return out;
  }
  std::vector<int> expert_dp_group(int rank, int ep) const {
    Coord c = coord(rank);
    std::vector<int> out;
    for (int i = c.dp % ep; i < size_[1]; i += ep) out.push_back(this->rank({c.tp, i, c.pp}));
    return out;
  }

  /// MoE parallel folding (Megatron-Core with --expert-tensor-parallel-size 1, parallel_state's
  /// expert grid etp-ep-dp over the attention's tp × dp ranks): the ranks of a stage numbered
  /// tp-innermost, f = tp + t·dp; the EP group is the `ep` consecutive f around `rank`, the
  /// expert-data-parallel group the t·dp/ep with the same position in theirs. Requires: ep divides
  /// t·dp.
  std::vector<int> folded_ep_group(int rank, int ep) const {
    const Coord c = coord(rank);
    const int f = c.tp + size_[0] * c.dp;
    std::vector<int> out;
    for (int g = f / ep * ep; g < (f / ep + 1) * ep; ++g) out.push_back(this->rank({g % size_[0], g / size_[0], c.pp}));
    return out;
  }
  std::vector<int> folded_expert_dp_group(int rank, int ep) const {
    const Coord c = coord(rank);
    std::vector<int> out;
    for (int g = (c.tp + size_[0] * c.dp) % ep; g < size_[0] * size_[1]; g += ep)
      out.push_back(this->rank({g % size_[0], g / size_[0], c.pp}));
    return out;
  }

  static bool is_valid_order(const std::string& order) {
    if (order.size() != 8 || order[2] != '-' || order[5] != '-') return false;
    std::array<bool, 3> seen{};
    for (int i = 0; i < 3; ++i) {
      const std::string part = order.substr(static_cast<std::size_t>(i) * 3, 2);
      const int d = part == "tp" ? 0 : part == "dp" ? 1 : part == "pp" ? 2 : -1;
      if (d < 0 || seen[d]) return false;
      seen[d] = true;
    }
    return true;
  }

 private:
  std::vector<int> group(int rank, int d) const {
    Coord c = coord(rank);
    std::vector<int> out;
    for (int i = 0; i < size_[d]; ++i) {
      (d == 0 ? c.tp : d == 1 ? c.dp : c.pp) = i;
      out.push_back(this->rank(c));
    }
    return out;
  }

  std::array<int, 3> size_{};    // tp, dp·cp, pp
  int cp_ = 1;
  std::array<int, 3> dim_{};     // order position -> dimension
  std::array<int, 3> stride_{};  // dimension -> stride in ranks
};

}  // namespace stepsim::plan
