// Aggregation: ranks are grouped, and the first rank of each group - its
// aggregator - writes the group's small pieces to the log in one sequential
// run, so that the log sees few large writes instead of many small ones.
// "node": one group per shared-memory node; "all": every rank its own;
// a count M: M groups of consecutive ranks.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engines/log/pieces.hpp"
#include "engines/log/team.hpp"

namespace h5loom::logengine {

class AggregatorTransport {
 public:
  // Collective over the team: forms the groups (`aggregators`: the knob,
  // "node", "all" or "count" with `count`).
  AggregatorTransport(const Team& team, const std::string& aggregators, int count);
  AggregatorTransport(const AggregatorTransport&) = delete;
  AggregatorTransport& operator=(const AggregatorTransport&) = delete;
  // Frees the group's communicator (at close, while MPI is surely up).
  void free();

  bool is_aggregator() const { return group_rank_ == 0; }
  int aggregators() const { return aggregators_; }
  // The lowest rank of its shared-memory node (it syncs its node's region writes).
  bool node_leader() const { return node_leader_; }

  // Where the aggregated bytes of team rank `rank` start, counted from the
  // first aggregated byte of a write-out, given every rank's (`bytes_of`, by
  // team rank): groups follow each other in aggregator order, and within a
  // group the ranks follow each other. Local: the placement exchanged `bytes_of`.
  uint64_t start_of(const std::vector<uint64_t>& bytes_of, int rank) const;

  // Collective over the group: this rank's runs reach the log at `offset`
  // and on (`bytes_of`: every team rank's bytes, as for start_of, which
  // tells an aggregator what its members send) - a member sends them to its aggregator, an
  // aggregator writes each member's, the last member's first, and then its own, with
  // `write_at(data, n, log offset)`, receiving the next message while
  // writing one. `meanwhile` (if given) runs while the bytes move: on a
  // member once its messages have gone, on an aggregator before it writes
  // (after, if it has no members: nothing moves meanwhile). `written` (if
  // given) runs once this rank's own writes have returned, before
  // `meanwhile` where it can: a sync started there runs while `meanwhile` does.
  void move(const std::vector<ByteRun>& runs, const std::vector<uint64_t>& bytes_of, uint64_t offset,
            const std::function<void(const unsigned char*, uint64_t, uint64_t)>& write_at,
            const std::function<void()>& meanwhile, const std::function<void()>& written = {});

 private:
  MPI_Comm group_ = MPI_COMM_NULL;
  int group_rank_ = 0, group_size_ = 1, aggregators_ = 1;
  bool node_leader_ = false;
  std::vector<int> leader_of_;  // each team rank's aggregator (the lowest team rank of its group)
  std::vector<int> members_;    // the team ranks of this rank's group, in group order
  // An aggregator's two receive buffers, kept between flushes: fresh pages
  // cost as much as the copy.
  std::unique_ptr<unsigned char[]> receive_[2];
  uint64_t receive_size_ = 0;
};

}  // namespace h5loom::logengine
