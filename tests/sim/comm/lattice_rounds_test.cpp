// The round-by-round lattice walk ends early once its state repeats up to a shift, and
// extrapolates. Held here to the same walk taken to the last step: a ring with more steps (and
// no links) beside the others turns the early end off, since it needs every ring to have as
// many steps, and leaves the other rings' times as they are.
#include <doctest/doctest.h>

#include "sim/comm/lattice_rounds.hpp"

using stepsim::comm::Crossing;
using stepsim::comm::lattice_times_by_step;
using stepsim::comm::LatticeRing;

namespace {

// `sharing` rings of `servers` × 8 hops each, seven per server on private NVLink-like links and
// one on the server's NIC link, which all rings cross, ring r at its hop r of the server (as
// NCCL's channels leave a server through different GPUs). Where the NIC's busy time sets the pace
// the walk settles into a one-step repeat; where latency does, a longer one (the last cases).
std::vector<LatticeRing> rings_on_servers(int servers, int sharing, int steps, std::size_t& links, double nic_latency = 5000.0) {
  std::vector<LatticeRing> rings(static_cast<std::size_t>(sharing));
  const int hops = servers * 8;
  links = static_cast<std::size_t>(sharing * hops + servers);
  for (int r = 0; r < sharing; ++r) {
    auto& ring = rings[static_cast<std::size_t>(r)];
    ring.steps = steps;
    for (int p = 0; p < hops; ++p) {
      const bool nic = p % 8 == r % 8;
      ring.d.push_back(nic ? nic_latency : 800.0);
      const int link = nic ? sharing * hops + p / 8 : r * hops + p;
      const double work = nic ? 30000.0 : 9000.0;
      ring.crossings.push_back({Crossing{link, work}});
      ring.busy.push_back(nic ? work * sharing : work);
    }
  }
  return rings;
}

void check_early_end_matches_the_whole_walk(int servers, int sharing, int steps, double nic_latency = 5000.0) {
  std::size_t links = 0;
  auto rings = rings_on_servers(servers, sharing, steps, links, nic_latency);
  const auto early = lattice_times_by_step(rings, links);
  rings.push_back(LatticeRing{.steps = steps + 1});
  const auto whole = lattice_times_by_step(rings, links);
  REQUIRE(early.size() + 1 == whole.size());
  for (std::size_t i = 0; i < early.size(); ++i) {
    CAPTURE(i);
    CHECK(early[i] == doctest::Approx(whole[i]).epsilon(1e-9));
  }
}

}  // namespace

TEST_CASE("the lattice walk's early end gives the whole walk's time: one ring, NVLink and NIC hops") {
  check_early_end_matches_the_whole_walk(4, 1, 400);
}

TEST_CASE("the lattice walk's early end gives the whole walk's time: rings sharing the NICs") {
  check_early_end_matches_the_whole_walk(16, 2, 2 * (16 * 8 - 1));
  check_early_end_matches_the_whole_walk(3, 4, 1000);
}

TEST_CASE("the lattice walk's early end gives the whole walk's time where latency sets the pace") {
  // Once the latencies around the ring outweigh every hop's own busy time, the ring is the
  // critical circuit of the max-plus recurrence, and the regime repeats every several steps, not
  // every step (Baccelli et al. 1992, ch. 3): the early end must find a period above 1 here.
  check_early_end_matches_the_whole_walk(2, 1, 400, 300000.0);
}

TEST_CASE("a lattice with fewer steps than the walk needs to settle is walked to its end") {
  check_early_end_matches_the_whole_walk(2, 2, 3);
  check_early_end_matches_the_whole_walk(2, 1, 1);
}
