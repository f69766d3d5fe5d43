// The ranks that share an open log file, and the collective helpers the log
// engine's parts have in common (errors are agreed on with core's mpi_util).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/mpi_util.hpp"

namespace h5loom::logengine {

struct Team {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
};

// Runs fn on rank 0 only; its error (if any) is raised on every rank.
template <class Fn>
void on_root(const Team& team, Fn&& fn) {
  mpi::CaughtError e;
  if (team.rank == 0) e.run(fn);
  mpi::share_error(team.comm, 0, e);
}

// Rank 0's bytes, on every rank (in pieces of at most 1 GiB: MPI counts are int).
inline void bcast_bytes(MPI_Comm comm, std::vector<unsigned char>& bytes) {
  uint64_t n = bytes.size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm);
  bytes.resize(n);
  for (uint64_t at = 0; at < n; at += (1u << 30))
    MPI_Bcast(bytes.data() + at, int(std::min<uint64_t>(n - at, 1u << 30)), MPI_BYTE, 0, comm);
}

}  // namespace h5loom::logengine
