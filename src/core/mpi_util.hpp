// Small MPI helpers shared by the object model and the engines.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "h5loom/errors.hpp"

namespace h5loom::mpi {

// Every rank's string, indexed by rank (collective).
std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& mine);
// Root's string, on every rank (collective).
std::string bcast_string(MPI_Comm comm, int root, std::string s);

// ---- error agreement: an error on some ranks is raised on every rank ----

// Throws the h5loom error class of `code` with `message`.
[[noreturn]] void throw_error(int code, const std::string& message);

// An error caught on one rank, to be raised on every rank later (share_error).
struct CaughtError {
  int code = 0;
  std::string msg;
  template <class Fn>
  void run(Fn&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      code = int(e.code()), msg = e.what();
    } catch (const std::exception& e) {
      code = int(ErrorCode::Generic), msg = e.what();
    }
  }
};

// Collective: raises on every rank the error `root` caught, if any.
void share_error(MPI_Comm comm, int root, CaughtError& e);
// Collective: raises on every rank the error of the lowest rank that caught
// one, if any rank did.
void share_first_error(MPI_Comm comm, int rank, CaughtError& e);

// H5LOOM_ABORT_ON_ERROR (default on): whether an error that the ranks cannot
// agree on ends the job (MPI_Abort) rather than risk a rank waiting forever.
bool abort_on_error();

// A barrier that gives up: true if every rank of comm enters it within
// `seconds` (< 0: waits as long as it takes), false if some rank did not come
// (it is elsewhere: in another collective call, say). comm must serve nothing
// else. For a rank that leaves because of an error and does not know whether
// the others do too.
bool all_arrive_within(MPI_Comm comm, double seconds);

// Collective: runs fn on every rank; if it failed on any, every rank raises
// the error of the lowest rank that failed (nobody is left waiting).
template <class Fn>
void agree(MPI_Comm comm, Fn&& fn) {
  CaughtError e;
  e.run(fn);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  share_first_error(comm, rank, e);
}

}  // namespace h5loom::mpi
