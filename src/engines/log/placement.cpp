#include "engines/log/placement.hpp"

#include "engines/log/aggregator_transport.hpp"
#include "engines/log/regions.hpp"

namespace h5loom::logengine {

namespace {

// Collective: where this rank's `mine` bytes start after `log_end`, and all
// ranks' bytes. Groups follow each other in aggregator order; within a
// group, ranks in order.
void group_offsets(const Team& team, MPI_Comm group, int group_rank, uint64_t mine, uint64_t log_end,
                   uint64_t& offset, uint64_t& total) {
  uint64_t in_group = 0, group_total = 0, group_base = 0;
  MPI_Exscan(&mine, &in_group, 1, MPI_UINT64_T, MPI_SUM, group);
  if (group_rank == 0) in_group = 0;  // Exscan leaves the first rank's result undefined
  MPI_Allreduce(&mine, &group_total, 1, MPI_UINT64_T, MPI_SUM, group);
  uint64_t contribution = group_rank == 0 ? group_total : 0;
  MPI_Exscan(&contribution, &group_base, 1, MPI_UINT64_T, MPI_SUM, team.comm);
  if (team.rank == 0) group_base = 0;
  MPI_Bcast(&group_base, 1, MPI_UINT64_T, 0, group);
  MPI_Allreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, team.comm);
  offset = log_end + group_base + in_group;
}

}  // namespace

Placement place(PieceList& pieces, Regions& regions, const AggregatorTransport& transport, const Team& team,
                uint64_t& log_end, uint64_t epoch, uint64_t unit, uint64_t own_region_min) {
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
  regions.close_round(log_end);

  if (buffered > 0 && !buffer_in_region) pl.runs.push_back({buffer, buffered});
  for (const auto& p : pieces.pieces())
    if (p.bytes == Bytes::Borrowed || p.bytes == Bytes::Kept) pl.runs.push_back({p.data, p.block.nbytes});
  for (const auto& r : pl.runs) pl.mine += r.nbytes;
  group_offsets(team, transport.group(), transport.group_rank(), pl.mine, log_end, pl.offset, pl.total);
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
