// MPI start-up for programs that did not call MPI_Init themselves: h5loom then
// initialises MPI (a program started without mpirun runs as one rank) and
// finalises it at exit.
#include <mpi.h>

#include <cstdlib>

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

}  // namespace h5loom
