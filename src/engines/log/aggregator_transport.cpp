#include "engines/log/aggregator_transport.hpp"

#include <algorithm>

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
  int leader = group_rank_ == 0 ? 1 : 0;
  MPI_Allreduce(&leader, &aggregators_, 1, MPI_INT, MPI_SUM, team.comm);
}

void AggregatorTransport::free() {
  if (group_ != MPI_COMM_NULL) MPI_Comm_free(&group_);
}

void AggregatorTransport::move(const std::vector<ByteRun>& runs, uint64_t mine, uint64_t offset,
                               const std::function<void(const unsigned char*, uint64_t, uint64_t)>& write_at,
                               const std::function<void()>& meanwhile, const std::function<void()>& written) {
  constexpr uint64_t kMessage = 64 * MiB;  // MPI counts are int; also the aggregator's pipeline step
  constexpr int kTag = 77;
  std::vector<uint64_t> sizes(static_cast<std::size_t>(group_size_));
  if (group_size_ > 1) MPI_Gather(&mine, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, 0, group_);
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
    if (meanwhile) meanwhile();
    MPI_Waitall(int(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
    return;
  }
  uint64_t off = offset;
  if (group_size_ == 1) {
    for (const auto& r : runs) write_at(r.data, r.nbytes, off), off += r.nbytes;
    if (written) written();
    if (meanwhile) meanwhile();
    return;
  }
  if (meanwhile) meanwhile();
  for (const auto& r : runs) write_at(r.data, r.nbytes, off), off += r.nbytes;
  // Then each member's bytes, receiving the next message while writing one.
  uint64_t biggest = 0;
  for (int r = 1; r < group_size_; ++r) biggest = std::max(biggest, sizes[std::size_t(r)]);
  const uint64_t cap = std::min(kMessage, biggest);
  if (receive_size_ < cap) {
    for (auto& b : receive_) b.reset(new unsigned char[cap]);
    receive_size_ = cap;
  }
  for (int r = 1; r < group_size_; ++r) {
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
  if (written) written();
}

}  // namespace h5loom::logengine
