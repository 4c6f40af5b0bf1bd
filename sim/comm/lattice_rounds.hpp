// A folded ring's step lattice as plain data, and its round-by-round walk: the solver that times
// lattices too large for a transfer DAG (timing_method.hpp: above kDagFlowRanks). Internal to
// sim/comm; folded_ring.cpp builds the lattices and solves the smaller ones as DAGs.
#pragma once

#include <cstddef>
#include <vector>

namespace stepsim::comm {

// A folded ring as its step lattice sees it. Per hop: the start latency of one step; its routes,
// each a flow of the hop's step (equal-cost routes split the bytes, as step mode splits each
// transfer over them) over the links that can hold it back; and `busy`, the time the hop's
// busiest link needs for one step of every ring at the level. For the round-by-round walk, the
// hop's bottlenecks: the links with the most work per step from every folded ring at the level
// (staged PCIe routes have ties), each with the time it needs for this hop's own step.
struct Crossing {
  int link = 0;
  double work = 0;  // ps to move the flow's bytes at the link's full rate
};

struct LatticeRing {
  int steps = 0;
  std::vector<double> d{};
  std::vector<std::vector<Crossing>> crossings{};
  std::vector<double> busy{};
};

/// A bottleneck link that only one hop of the level crosses serves that hop's steps one after
/// another, so all such links of a hop finish its step at the same time (ties have equal work):
/// one of them stands for the rest in the walk.
void keep_one_private_crossing(std::vector<LatticeRing>& rings, std::size_t link_count);

/// Per ring, when its last step is in (ps from the level's start), walked round by round on each
/// hop's bottleneck links (lattice_rounds.cpp says how, and where it comes out fast).
std::vector<double> lattice_times_by_step(const std::vector<LatticeRing>& rings, std::size_t link_count);

}  // namespace stepsim::comm
