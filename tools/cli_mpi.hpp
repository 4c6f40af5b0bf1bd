// A sweep split over the processes of `mpirun -n N stepsim sweep ...` (Open MPI, optional at build
// time: STEPSIM_HAVE_MPI). Rank r runs the plans of shard r+1 of N, as --shard does, and rank 0
// gathers every rank's outcome and prints the merge, which is what one process prints. Without MPI
// built in, or outside mpirun, there is one process.
#pragma once

#include <string>
#include <vector>

namespace stepsim::cli {

/// This process's place among those mpirun started: rank 0 of 1 outside mpirun.
struct MpiWorld {
  int rank = 0;
  int size = 1;
};

/// Whether this binary was built with MPI.
bool mpi_built_in();
/// Starts MPI when this process runs under mpirun and MPI is built in (finalized at exit), else
/// {0, 1}. Calling it again returns the same world.
MpiWorld mpi_world();
/// Every rank's `text` in rank order, on rank 0; empty on the others. Every rank must call it.
std::vector<std::string> gather_at_root(const std::string& text);

}  // namespace stepsim::cli
