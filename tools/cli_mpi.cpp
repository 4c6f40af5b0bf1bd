#include "tools/cli_mpi.hpp"

#include <cstdlib>

#ifdef STEPSIM_HAVE_MPI
#include <mpi.h>

#include <stdexcept>
#endif

namespace stepsim::cli {

#ifdef STEPSIM_HAVE_MPI

namespace {

// mpirun tells its processes who they are in the environment (Open MPI: OMPI_COMM_WORLD_SIZE;
// PMIx and PMI launchers: PMIX_RANK, PMI_SIZE). Outside it MPI is not started at all, so a plain
// `stepsim sweep` neither pays for MPI_Init nor needs a launcher.
bool under_launcher() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(var) != nullptr) return true;
  return false;
}

struct Session {
  MpiWorld world;
  Session() {
    if (!under_launcher()) return;
    MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  }
  ~Session() {
    int started = 0, finished = 0;
    MPI_Initialized(&started);
    MPI_Finalized(&finished);
    if (started && !finished) MPI_Finalize();
  }
};

const Session& session() {
  static const Session s;
  return s;
}

}  // namespace

bool mpi_built_in() { return true; }

MpiWorld mpi_world() { return session().world; }

std::vector<std::string> gather_at_root(const std::string& text) {
  const MpiWorld world = mpi_world();
  if (world.size == 1) return {text};
  int length = static_cast<int>(text.size());
  if (static_cast<std::size_t>(length) != text.size()) throw std::length_error("a sweep outcome over 2 GiB cannot be gathered");
  std::vector<int> lengths(static_cast<std::size_t>(world.size)), offsets(static_cast<std::size_t>(world.size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (world.rank == 0) {
    long long total = 0;
    for (int r = 0; r < world.size; ++r) {
      offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
      total += lengths[static_cast<std::size_t>(r)];
    }
    if (total > 2147483647LL) throw std::length_error("the ranks' sweep outcomes exceed 2 GiB together");
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (world.rank == 0)
    for (int r = 0; r < world.size; ++r)
      out.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                               static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
  return out;
}

#else

bool mpi_built_in() { return false; }

MpiWorld mpi_world() { return {}; }

std::vector<std::string> gather_at_root(const std::string& text) { return {text}; }

#endif

}  // namespace stepsim::cli
