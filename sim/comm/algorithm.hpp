// The family of collective algorithms: each writes the StepPlan of an operation over a group.
// NVI (STYLE.md 3): plan() checks the input and the plan's invariants, do_plan() does the work.
//
//   ring          NCCL's ring: all-reduce = reduce-scatter + all-gather in 2(n−1) steps of S/n per
//                 rank; one ring per local GPU when the group spans servers, so that every NIC
//                 carries one ring each way (NCCL's channels); broadcast is a pipelined chain.
//   tree          NCCL's double binary tree: per channel (one per local GPU across servers) a
//                 chain inside each server, rotated so each channel leaves through a different
//                 NIC, and two binary trees over the servers, each carrying half the channel's
//                 data, reduce up then broadcast down, pipelined in slices.
//   nvls          in-switch reduction on NVSwitch (H100 and later): every GPU sends its buffer up
//                 once and receives the reduced buffer down once.
//   hierarchical  reduce-scatter inside each server, all-reduce of the 1/L shards across servers
//                 (one ring per local index), all-gather inside each server.
//   direct        every rank sends straight to every peer: all-to-all, send/recv.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "sim/comm/ops.hpp"
#include "sim/comm/step_plan.hpp"

namespace stepsim::comm {

class CollectiveAlgorithm {
 public:
  virtual ~CollectiveAlgorithm() = default;

  /// Whether this algorithm can run `input.op` on this group (NVLS needs one server and
  /// params.nvls; hierarchical needs several servers with the same number of ranks each).
  bool supports(const PlanInput& input) const;
  /// supports(input) and the algorithm runs under `protocol` (NVLS is Simple only).
  bool supports(const PlanInput& input, hw::Protocol protocol) const;
  /// Requires: supports(input), input.ranks >= 1, bytes >= 0, server_of.size() == ranks.
  /// Throws std::invalid_argument otherwise.
  StepPlan plan(const PlanInput& input) const;
  /// Throws std::invalid_argument, saying what is needed, unless supports(input, protocol) (or
  /// supports(input) when no protocol is named).
  void require(const PlanInput& input, std::optional<hw::Protocol> protocol) const;
  /// What supports() needs, in words, for the error when it is false.
  std::string requirement() const { return do_requirement(); }

 private:
  virtual bool do_supports(const PlanInput& input) const = 0;
  virtual std::string do_requirement() const = 0;
  virtual StepPlan do_plan(const PlanInput& input) const = 0;
  virtual bool do_supports_protocol(hw::Protocol) const { return true; }
};

/// Requires: algorithm != Algorithm::automatic.
std::unique_ptr<CollectiveAlgorithm> make_algorithm(Algorithm algorithm);

// One per file (ring.cpp, tree.cpp, nvls.cpp, hierarchical.cpp, direct.cpp).
std::unique_ptr<CollectiveAlgorithm> make_ring();
std::unique_ptr<CollectiveAlgorithm> make_tree();
std::unique_ptr<CollectiveAlgorithm> make_nvls();
std::unique_ptr<CollectiveAlgorithm> make_hierarchical();
std::unique_ptr<CollectiveAlgorithm> make_direct();

}  // namespace stepsim::comm
