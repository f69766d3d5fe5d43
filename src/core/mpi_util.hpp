// Small MPI helpers shared by the object model and the engines.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace h5loom::mpi {

// Every rank's string, indexed by rank (collective).
std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& mine);

}  // namespace h5loom::mpi
