// same_up_to_renaming: groups of GPUs that the router answers for alike, and groups it does not,
// each case read off the preset's layout (hardware/presets/*.yaml).
#include <doctest/doctest.h>

#include "hardware/hardware_yaml.hpp"
#include "hardware/route_equivalence.hpp"

namespace stepsim::hw {
namespace {

// Every ordered pair of `gpus`: what a computation on the whole group could ask.
std::vector<std::pair<int, int>> all_pairs(const std::vector<int>& gpus) {
  std::vector<std::pair<int, int>> out;
  for (int a : gpus)
    for (int b : gpus)
      if (a != b) out.emplace_back(a, b);
  return out;
}

bool alike(const Router& router, const std::vector<int>& from, const std::vector<int>& to) {
  return same_up_to_renaming(router, all_pairs(from), from, to);
}

TEST_CASE("GPUs at the same places of other servers under the same leaf are alike") {
  // dgx-h100: 32 servers per leaf (rail-optimized), so 64 servers make two leaf groups.
  const Cluster c = load_cluster("dgx-h100", {.nodes = 64, .gpus_per_node = std::nullopt});
  const Router router(c);
  CHECK(alike(router, {0, 8, 16}, {1, 9, 17}));        // rail 0 -> rail 1 of the same servers
  CHECK(alike(router, {0, 8}, {256, 264}));            // servers 0, 1 -> 32, 33: the other leaf group
  CHECK(alike(router, {0, 1, 8}, {16, 17, 24}));       // a server's two GPUs and a third's
  // Servers 0 and 1 share a leaf; 0 and 32 meet only at the spines: longer routes.
  CHECK_FALSE(alike(router, {0, 8}, {0, 256}));
  // Two GPUs of one server are not two of different servers.
  CHECK_FALSE(alike(router, {0, 1}, {0, 8}));
  // Rails 0 and 1 meet at the spines (four routes); rail 0 with itself at its leaf (one).
  CHECK_FALSE(alike(router, {0, 9}, {0, 8}));
}

TEST_CASE("a renaming must be one to one and cover every GPU asked about") {
  const Cluster c = load_cluster("dgx-h100", {.nodes = 2, .gpus_per_node = std::nullopt});
  const Router router(c);
  CHECK_FALSE(same_up_to_renaming(router, all_pairs({0, 8}), {0, 8}, {1, 1}));
  CHECK_FALSE(same_up_to_renaming(router, all_pairs({0, 8}), {0}, {1}));
  CHECK_FALSE(same_up_to_renaming(router, all_pairs({0, 8}), {0, 8}, {1}));
  CHECK(same_up_to_renaming(router, {}, {0, 8}, {1, 9}));  // nothing asked: only servers and own links
}

TEST_CASE("inside a PCIe server, GPUs behind one switch are not GPUs across sockets") {
  const Cluster c = load_cluster("a100-pcie");
  const Router router(c);
  // Both pairs' bottleneck is the x16 link (router_test), yet their routes differ in length.
  CHECK_FALSE(alike(router, {0, 1}, {0, 7}));
  CHECK(alike(router, {0, 1}, {1, 0}));  // a pair with itself, swapped
}

}  // namespace
}  // namespace stepsim::hw
