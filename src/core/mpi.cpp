// MPI start-up for programs that did not call MPI_Init themselves: h5loom then
// initialises MPI (a program started without mpirun runs as one rank) and
// finalises it at exit.
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "core/mpi_util.hpp"
#include "h5loom/h5loom.hpp"

namespace h5loom {

namespace {
void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// Whether a launcher (mpirun, mpiexec, srun, ...) started this process: they
// all leave their process manager's variables in its environment.
bool started_by_a_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "PMI_FD"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace

void ensure_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  // A program started without a launcher is an MPI singleton: one process
  // that talks to no other. Open MPI would still fork a daemon for dynamic
  // processes (MPI_Comm_spawn) and probe every network transport, about 0.3 s
  // of a script's first file on this machine (docs/benchmarks.md): an isolated
  // singleton with the loopback transport alone starts in a few milliseconds.
  // Nor does it need the I/O devices in its hardware topology (hwloc reads
  // every PCI device's configuration from /sys: 10-15 ms of a singleton's
  // 30 ms MPI_Init here). Each setting the user made wins; they hold for
  // MPI_Init only, so that the program's child processes (an mpirun it
  // starts) do not inherit them.
  std::vector<const char*> isolating;
  if (!started_by_a_launcher())
    for (const auto& [name, value] :
         {std::pair{"OMPI_MCA_ess_singleton_isolated", "1"}, std::pair{"OMPI_MCA_btl", "self"},
          std::pair{"OMPI_MCA_pml", "ob1"}, std::pair{"HWLOC_COMPONENTS", "-pci,-linuxio"}})
      if (!std::getenv(name)) {
        ::setenv(name, value, 0);
        isolating.push_back(name);
      }
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  for (const char* name : isolating) ::unsetenv(name);
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

std::string bcast_string(MPI_Comm comm, int root, std::string s) {
  int n = int(s.size());
  MPI_Bcast(&n, 1, MPI_INT, root, comm);
  s.resize(std::size_t(n));
  MPI_Bcast(s.data(), n, MPI_CHAR, root, comm);
  return s;
}

bool abort_on_error() {
  const char* v = std::getenv("H5LOOM_ABORT_ON_ERROR");
  return !(v && std::string(v) == "0");
}

bool all_arrive_within(MPI_Comm comm, double seconds) {
  MPI_Request barrier;
  MPI_Ibarrier(comm, &barrier);
  if (seconds < 0) return MPI_Wait(&barrier, MPI_STATUS_IGNORE), true;
  const double deadline = MPI_Wtime() + seconds;
  for (;;) {
    int done = 0;
    MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (MPI_Wtime() > deadline) return false;  // the request stays: the caller ends the job or leaks the file
    struct timespec pause {0, 1000000};
    nanosleep(&pause, nullptr);
  }
}

void throw_error(int code, const std::string& msg) {
  switch (static_cast<ErrorCode>(code)) {
    case ErrorCode::NotFound: throw NotFoundError(msg);
    case ErrorCode::Exists: throw ExistsError(msg);
    case ErrorCode::Selection: throw SelectionError(msg);
    case ErrorCode::Datatype: throw DatatypeError(msg);
    case ErrorCode::ReadOnly: throw ReadOnlyError(msg);
    case ErrorCode::Config: throw ConfigError(msg);
    case ErrorCode::Usage: throw UsageError(msg);
    case ErrorCode::IO: throw IOError(msg);
    case ErrorCode::CollectiveMismatch: throw CollectiveMismatchError(msg);
    case ErrorCode::Corruption: throw CorruptionError(msg);
    default: throw Error(static_cast<ErrorCode>(code), msg);
  }
}

void share_error(MPI_Comm comm, int root, CaughtError& e) {
  MPI_Bcast(&e.code, 1, MPI_INT, root, comm);
  if (e.code == 0) return;
  int n = int(e.msg.size());
  MPI_Bcast(&n, 1, MPI_INT, root, comm);
  e.msg.resize(std::size_t(n));
  MPI_Bcast(e.msg.data(), n, MPI_CHAR, root, comm);
  throw_error(e.code, e.msg);
}

void share_first_error(MPI_Comm comm, int rank, CaughtError& e) {
  int failed = e.code != 0 ? rank : INT32_MAX, first = 0;
  MPI_Allreduce(&failed, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first != INT32_MAX) share_error(comm, first, e);
}

}  // namespace mpi
}  // namespace h5loom
