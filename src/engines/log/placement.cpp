#include "engines/log/placement.hpp"

#include <algorithm>

#include "engines/log/aggregator_transport.hpp"
#include "engines/log/regions.hpp"

namespace h5loom::logengine {

namespace {

// What each rank sends in the placement's exchange.
struct Share {
  Regions::RoundShare round;
  uint64_t through_aggregators = 0;
  uint64_t own = 0;  // the buffer's bytes it writes to its region at the write-out
  EntrySummary entries;
};
constexpr int kShareWords = 9;
static_assert(sizeof(Share) == kShareWords * sizeof(uint64_t), "Share is exchanged as uint64_t");

}  // namespace

Placement place(PieceList& pieces, Regions& regions, const AggregatorTransport& transport, const Team& team,
                uint64_t& log_end, uint64_t epoch, uint64_t unit, uint64_t own_region_min,
                const EntrySummary& entries) {
  using Bytes = Piece::Bytes;
  Placement pl;
  const uint64_t buffered = pieces.buffered_bytes();
  const unsigned char* buffer = pieces.buffer().data();
  bool buffer_in_region = false;
  if (regions.size() > 0 && buffered >= own_region_min) {
    regions.add_demand(buffered);
    if (regions.has_room(buffered)) {
      const uint64_t at = regions.cursor();
      for (auto& p : pieces.pieces())
        if (p.bytes == Bytes::Copied) seal(p.block, buffer + p.block.offset, at + p.block.offset, epoch, unit);
      pl.own = {buffer, buffered};
      pl.own_offset = at;
      regions.take(buffered);
      buffer_in_region = true;
    }
  }
  if (buffered > 0 && !buffer_in_region) pl.runs.push_back({buffer, buffered});
  for (const auto& p : pieces.pieces())
    if (p.bytes == Bytes::Borrowed || p.bytes == Bytes::Kept) pl.runs.push_back({p.data, p.block.nbytes});
  uint64_t through = 0;  // this rank's bytes through its aggregator
  for (const auto& r : pl.runs) through += r.nbytes;

  const std::size_t n = std::size_t(team.size);
  const Share mine{regions.share(), through, pl.own.nbytes, entries};
  std::vector<Share> all(n);
  MPI_Allgather(&mine, kShareWords, MPI_UINT64_T, all.data(), kShareWords, MPI_UINT64_T, team.comm);
  Regions::RoundShare most;
  pl.bytes_of.resize(n);
  pl.entries_of.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    most.end = std::max(most.end, all[r].round.end);
    most.demand = std::max(most.demand, all[r].round.demand);
    most.failed = std::max(most.failed, all[r].round.failed);
    pl.bytes_of[r] = all[r].through_aggregators;
    pl.entries_of[r] = all[r].entries;
    pl.total += all[r].through_aggregators;
    pl.written_at_write_out += all[r].through_aggregators + all[r].own;
  }
  regions.close_round(most, log_end);
  pl.offset = log_end + transport.start_of(pl.bytes_of, team.rank);
  if (pl.total == 0) return pl;

  uint64_t at = pl.offset;
  if (!buffer_in_region) {
    for (auto& p : pieces.pieces())
      if (p.bytes == Bytes::Copied) seal(p.block, buffer + p.block.offset, pl.offset + p.block.offset, epoch, unit);
    at += buffered;
  }
  for (auto& p : pieces.pieces())
    if (p.bytes == Bytes::Borrowed || p.bytes == Bytes::Kept) seal(p.block, p.data, at, epoch, unit), at += p.block.nbytes;
  return pl;
}

}  // namespace h5loom::logengine
