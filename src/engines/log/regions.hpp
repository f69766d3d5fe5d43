// Regions: where a rank writes large writes at once, without asking the other
// ranks. Ranks cannot agree on a place without talking, so the log reserves
// space in advance: a round of regions starts at an aligned offset after
// everything placed so far (`base`), and rank r's region is
// [base + r * size, base + (r + 1) * size). Writes fill the rank's region from
// its start; a write that does not fit takes another way. The round ends at
// the next placement (a write-out or a commit), where the ranks agree on the
// last byte any of them wrote, and the log continues after it: unused ends of
// regions stay holes of a sparse file (docs/engines/log.md, "Regions").
#pragma once

#include <cstdint>
#include <string>

#include "engines/log/team.hpp"

namespace h5loom::logengine {

class Regions {
 public:
  // `largest`: the region_size knob (0: no regions); `alignment`: region_alignment.
  // The first round's size is agreed on by all ranks (collective): as large
  // as the last round of the previous file this process wrote settled on (a
  // code that writes a file per step writes about as much to each), else `largest`.
  Regions(const Team& team, uint64_t largest, uint64_t alignment);

  uint64_t size() const { return size_; }
  // The last rank's region ends the round: nothing follows it, so it grows as
  // far as that rank writes (one process writing alone is never short of room).
  bool has_room(uint64_t nbytes) const {
    return size_ > 0 && (team_.rank == team_.size - 1 || used_ + nbytes <= size_);
  }
  // Bytes this rank wanted to write to its region this round, whether they
  // fitted or not: the next round is sized by the largest demand.
  void add_demand(uint64_t nbytes) { demand_ += nbytes; }
  // Where this rank's next region write goes; `take` then claims n bytes there.
  uint64_t cursor() const { return base_ + uint64_t(team_.rank) * size_ + used_; }
  void take(uint64_t nbytes) { used_ += nbytes; }
  // A region write failed: kept (the first one) until close_round raises it on
  // every rank - a write is not a collective call, so raising it there could
  // leave the other ranks waiting in the next collective one.
  void fail(const std::string& error) {
    if (error_.empty()) error_ = error;
  }

  // Whether this rank wrote to (or wanted) its region this round, or a region write failed.
  bool busy() const { return used_ > 0 || demand_ > 0 || !error_.empty(); }
  bool failed() const { return !error_.empty(); }

  // Opens a round after `log_end` (every rank at the same point of the collective sequence).
  void open_round(uint64_t log_end);
  // What this rank tells the others when the round ends (the placement's
  // exchange carries it): where its bytes in the round end, counted from the
  // round's start (0: none), what it wanted there, and whether a write failed.
  struct RoundShare {
    uint64_t end = 0, demand = 0, failed = 0;
  };
  RoundShare share() const;
  // Ends the round, given the largest of every rank's share() (`most`, field
  // by field). `log_end` moves after the last byte any rank wrote in its
  // region; the next round's regions are as large as the largest demand of
  // this one (at most `largest`), so that a code that writes as much at every
  // step leaves almost no holes. A region write that failed on any rank is
  // raised here, on every rank (collective then; a new round is open by then).
  void close_round(const RoundShare& most, uint64_t& log_end);

  // Whether some rank wrote to a region since the last commit (all ranks
  // agree): then each node's first rank syncs the log before the commit record.
  bool written_in_epoch() const { return in_epoch_; }
  void new_epoch() { in_epoch_ = false; }

 private:
  static uint64_t round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

  Team team_;
  uint64_t largest_, alignment_;
  uint64_t base_ = 0, size_ = 0;
  uint64_t used_ = 0;    // this rank's bytes in its region this round
  uint64_t demand_ = 0;  // bytes this rank wanted there this round (used + what did not fit)
  bool in_epoch_ = false;
  std::string error_;
  // The region size the last round of this process's last file settled on
  // (0: none yet); a hint for the next file's first round.
  static inline uint64_t last_size_ = 0;
};

}  // namespace h5loom::logengine
