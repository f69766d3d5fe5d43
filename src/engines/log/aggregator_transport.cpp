#include "engines/log/aggregator_transport.hpp"

#include <algorithm>
#include <map>

#include "engines/log/settings.hpp"

namespace h5loom::logengine {

AggregatorTransport::AggregatorTransport(const Team& team, const std::string& aggregators, int count) {
  MPI_Comm node;
  MPI_Comm_split_type(team.comm, MPI_COMM_TYPE_SHARED, team.rank, MPI_INFO_NULL, &node);
  int node_leader_world = team.rank;
  MPI_Bcast(&node_leader_world, 1, MPI_INT, 0, node);
  MPI_Comm_free(&node);
  node_leader_ = node_leader_world == team.rank;
  int color = 0;
  if (aggregators == "node") {
    color = node_leader_world;
  } else {
    const int m = aggregators == "all" ? team.size : std::clamp(count, 1, team.size);
    color = int((int64_t(team.rank) * m) / team.size);  // contiguous groups of ranks, as even as possible
  }
  MPI_Comm_split(team.comm, color, team.rank, &group_);
  MPI_Comm_rank(group_, &group_rank_);
  MPI_Comm_size(group_, &group_size_);
  // Every rank's group, once: each write-out's placement then needs only
  // every rank's byte count to know where each rank's bytes go.
  std::vector<int> colors(std::size_t(team.size));
  MPI_Allgather(&color, 1, MPI_INT, colors.data(), 1, MPI_INT, team.comm);
  std::map<int, int> leader_of_color;  // the lowest team rank of each color
  for (int r = 0; r < team.size; ++r) leader_of_color.try_emplace(colors[std::size_t(r)], r);
  leader_of_.resize(std::size_t(team.size));
  for (int r = 0; r < team.size; ++r) {
    leader_of_[std::size_t(r)] = leader_of_color.at(colors[std::size_t(r)]);
    if (colors[std::size_t(r)] == color) members_.push_back(r);
  }
  aggregators_ = int(leader_of_color.size());
}

uint64_t AggregatorTransport::start_of(const std::vector<uint64_t>& bytes_of, int rank) const {
  const int leader = leader_of_[std::size_t(rank)];
  uint64_t start = 0;
  for (std::size_t r = 0; r < bytes_of.size(); ++r)
    if (leader_of_[r] < leader || (leader_of_[r] == leader && int(r) < rank)) start += bytes_of[r];
  return start;
}

void AggregatorTransport::free() {
  if (group_ != MPI_COMM_NULL) MPI_Comm_free(&group_);
}

void AggregatorTransport::move(const std::vector<ByteRun>& runs, const std::vector<uint64_t>& bytes_of, uint64_t offset,
                               const std::function<void(const unsigned char*, uint64_t, uint64_t)>& write_at,
                               const std::function<void()>& meanwhile, const std::function<void()>& written) {
  constexpr uint64_t kMessage = 64 * MiB;  // MPI counts are int; also the aggregator's pipeline step
  constexpr int kTag = 77;
  std::vector<uint64_t> sizes;  // the group's members', in group order
  for (int r : members_) sizes.push_back(bytes_of[std::size_t(r)]);
  if (group_rank_ != 0) {
    // Members send their runs in messages of at most kMessage bytes, in
    // order (MPI keeps the order of messages between two ranks).
    std::vector<MPI_Request> sends;
    for (const auto& r : runs)
      for (uint64_t done = 0; done < r.nbytes; done += kMessage) {
        sends.emplace_back();
        MPI_Isend(r.data + done, int(std::min(kMessage, r.nbytes - done)), MPI_BYTE, 0, kTag, group_,
                  &sends.back());
      }
    if (written) written();  // a member writes nothing here: its aggregator writes its bytes
    // The sends complete before `meanwhile`: a message past the eager size
    // moves only while this rank is in MPI too, so the aggregator would wait
    // for the whole of `meanwhile` (the front file's build: 0.6 ms of a 2 ms
    // close, 2 ranks) before it could write and sync. The aggregator takes
    // its members' bytes first (below), so this wait is short.
    MPI_Waitall(int(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
    if (meanwhile) meanwhile();
    return;
  }
  if (group_size_ == 1) {
    uint64_t off = offset;
    for (const auto& r : runs) write_at(r.data, r.nbytes, off), off += r.nbytes;
    if (written) written();
    if (meanwhile) meanwhile();
    return;
  }
  if (meanwhile) meanwhile();
  // The members' bytes first, so that members wait as little as they can,
  // and the last member's first of all: the team's last rank builds the
  // front file at close once its bytes are taken (commit.cpp). Each member's
  // go where start_of puts them, receiving the next message while writing
  // one. Then its own, at `offset`.
  const uint64_t first_byte = offset - start_of(bytes_of, members_[0]);  // of this write-out
  uint64_t biggest = 0;
  for (int r = 1; r < group_size_; ++r) biggest = std::max(biggest, sizes[std::size_t(r)]);
  const uint64_t cap = std::min(kMessage, biggest);
  if (receive_size_ < cap) {
    for (auto& b : receive_) b.reset(new unsigned char[cap]);
    receive_size_ = cap;
  }
  for (int r = group_size_ - 1; r >= 1; --r) {
    uint64_t off = first_byte + start_of(bytes_of, members_[std::size_t(r)]);
    uint64_t left = sizes[std::size_t(r)];
    int cur = 0, got = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    if (left > 0) MPI_Irecv(receive_[cur].get(), int(receive_size_), MPI_BYTE, r, kTag, group_, &req);
    while (left > 0) {
      MPI_Status st;
      MPI_Wait(&req, &st);
      MPI_Get_count(&st, MPI_BYTE, &got);
      left -= uint64_t(got);
      if (left > 0) MPI_Irecv(receive_[1 - cur].get(), int(receive_size_), MPI_BYTE, r, kTag, group_, &req);
      write_at(receive_[cur].get(), uint64_t(got), off);
      off += uint64_t(got);
      cur = 1 - cur;
    }
  }
  uint64_t off = offset;
  for (const auto& r : runs) write_at(r.data, r.nbytes, off), off += r.nbytes;
  if (written) written();
}

}  // namespace h5loom::logengine
