#include "engines/log/regions.hpp"

#include <algorithm>

namespace h5loom::logengine {

Regions::Regions(const Team& team, uint64_t largest, uint64_t alignment)
    : team_(team), largest_(round_up(largest, alignment)), alignment_(alignment) {
  uint64_t first = largest_;
  if (first > 0 && last_size_ > 0) first = std::min(first, last_size_);
  MPI_Allreduce(&first, &size_, 1, MPI_UINT64_T, MPI_MAX, team_.comm);  // the ranks' histories may differ
}

void Regions::open_round(uint64_t log_end) {
  base_ = round_up(log_end, alignment_);
  used_ = 0;
  demand_ = 0;
}

Regions::RoundShare Regions::share() const {
  return {used_ ? uint64_t(team_.rank) * size_ + used_ : 0, demand_, uint64_t(error_.empty() ? 0 : 1)};
}

void Regions::close_round(const RoundShare& most, uint64_t& log_end) {
  if (most.end > 0) {
    log_end = base_ + most.end;
    in_epoch_ = true;
  }
  if (most.demand > 0) {
    size_ = std::min(round_up(most.demand, alignment_), largest_);
    last_size_ = size_;
  }
  used_ = demand_ = 0;
  if (most.failed) {
    // The round is over either way: the blocks written in it keep their
    // places, and the next writes go to a new round after them.
    open_round(log_end);
    mpi::CaughtError e;
    if (!error_.empty()) e.code = int(ErrorCode::IO), e.msg = error_;
    error_.clear();
    mpi::share_first_error(team_.comm, team_.rank, e);
  }
}

}  // namespace h5loom::logengine
