// Placement: where the bytes of a write-out go in the log, decided for every
// rank's pieces before any byte moves, so that the index is known (and can be
// exchanged while the data moves). Two strategies over the ordered piece list:
//  * a rank whose copied bytes add up to a large write writes its buffer into
//    its own region, like any large write (aggregation pays for the small
//    pieces of many ranks, not for a rank's megabytes);
//  * everything else - the buffer, then the borrowed and kept pieces in list
//    order - goes through the aggregators: each group's bytes follow those of
//    the groups before it, and within a group the ranks follow each other.
// Placement ends the round of regions.
#pragma once

#include <cstdint>
#include <vector>

#include "engines/log/pieces.hpp"
#include "engines/log/team.hpp"

namespace h5loom::logengine {

class AggregatorTransport;
class Regions;

// What a rank's index entries come to at a commit or a visible flush. It
// rides on the placement's exchange, with what the commit checks: that the
// ranks made the same collective calls (the size and CRC32C of the epoch's
// metadata operations are the same on every rank).
struct EntrySummary {
  uint64_t count = 0, bytes = 0;  // this rank's pieces' entries, as encoded
  uint64_t meta_size = 0, meta_crc = 0;
};

struct Placement {
  std::vector<ByteRun> runs;        // this rank's bytes through its aggregator, in log order
  uint64_t offset = 0;              // where they start in the log
  uint64_t total = 0;               // every rank's bytes through the aggregators
  std::vector<uint64_t> bytes_of;   // each rank's bytes through the aggregators (by team rank)
  std::vector<EntrySummary> entries_of;  // each rank's EntrySummary, as given to place()
  ByteRun own;                      // this rank's buffer, if it goes to its region instead
  uint64_t own_offset = 0;
  uint64_t written_at_write_out = 0;  // every rank's bytes that the write-out writes (0: nothing to agree on)
};

// Collective, in one exchange (MPI_Allgather of a few numbers per rank; each
// collective call is a wait for the slowest rank): places every piece of
// `pieces` that is not in the log yet, sealing each block (log offset, epoch
// `epoch`, checksums per `unit` bytes), ends the round of `regions` (moving
// `log_end` past the regions' bytes, and raising a failed region write on
// every rank), and returns this rank's share. `log_end` itself moves past the
// aggregated bytes only once they are written. `own_region_min`: the size
// from which a buffer goes to the rank's region (knob aggregate_below).
// `entries`: this rank's, passed on to every rank (Placement::entries_of).
Placement place(PieceList& pieces, Regions& regions, const AggregatorTransport& transport, const Team& team,
                uint64_t& log_end, uint64_t epoch, uint64_t unit, uint64_t own_region_min,
                const EntrySummary& entries = {});

}  // namespace h5loom::logengine
