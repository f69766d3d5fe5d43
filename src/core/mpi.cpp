// MPI start-up for programs that did not call MPI_Init themselves: h5loom then
// initialises MPI (a program started without mpirun runs as one rank) and
// finalises it at exit.
#include <mpi.h>

#include <cstdlib>

#include "core/mpi_util.hpp"
#include "h5loom/h5loom.hpp"

namespace h5loom {

namespace {
void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}
}  // namespace

void ensure_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  std::atexit(finalize_at_exit);
}

namespace mpi {

std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& mine) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(size), displs(size);
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[r] = total;
    total += lens[r];
  }
  std::string joined(static_cast<std::size_t>(total), '\0');
  MPI_Allgatherv(mine.data(), len, MPI_CHAR, joined.data(), lens.data(), displs.data(), MPI_CHAR, comm);
  std::vector<std::string> out(size);
  for (int r = 0; r < size; ++r) out[r] = joined.substr(displs[r], lens[r]);
  return out;
}

}  // namespace mpi
}  // namespace h5loom
