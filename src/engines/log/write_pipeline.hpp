// The write pipeline of an open log: how a rank's writes reach the log.
//
// put() appends a write to the ordered piece list (pieces.hpp), one piece per
// box of its selection, and may write it out at once:
//  * a large write (one whole box of at least `large_write` bytes) goes
//    straight from the caller's memory to the rank's region (regions.hpp) if
//    it has room - no copy, no message, no waiting for the other ranks;
//  * else a large write whose memory may be kept is a borrowed (or kept)
//    piece, written out from the caller's memory at the next write-out;
//  * anything else is copied into the coalescing buffer (and may grow the
//    block before it); a buffer that reaches `spill_at` bytes goes into the
//    rank's region at once (a spill), so that its bytes reach storage while
//    the program goes on.
// write_out() - collective - places every piece (placement.hpp) and moves the
// bytes to the log (aggregator_transport.hpp). The commit protocol (commit.hpp)
// places, exchanges the blocks' entries, then writes, so that the index is
// known before the data moves.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "engines/log/aggregator_transport.hpp"
#include "engines/log/pieces.hpp"
#include "engines/log/placement.hpp"
#include "engines/log/regions.hpp"
#include "engines/log/settings.hpp"
#include "engines/log/team.hpp"
#include "h5loom/selection.hpp"

namespace h5loom::logengine {

class StoredFile;

class WritePipeline {
 public:
  // How long the caller's memory stays valid.
  enum class Hold {
    DuringCall,     // only during put(): copied, or written at once - or not taken
    UntilWriteOut,  // until the next write_out() returns (a large write stays uncopied till then)
    Shared,         // a reference the pipeline keeps as long as it needs the bytes
  };

  // Collective: forms the aggregation groups and agrees on the first round of
  // regions. `path` names the file in messages; blocks are written to `log`,
  // sealed for epoch `open_epoch` with one CRC32C per `checksum_unit` bytes,
  // placed from `log_end` on.
  WritePipeline(const Team& team, const std::string& path, StoredFile& log, const Settings& settings,
                uint64_t checksum_unit, uint64_t log_end, uint64_t open_epoch);

  // Takes one write of dataset `id` (of path `dataset`, shaped `info`): the
  // elements of `sel`, dense in `data`. Not collective; a failed region write
  // is raised at the next placement, on every rank. With Hold::DuringCall
  // returns false, having taken nothing, if the write can neither be written
  // at once nor fit in the buffer (then it must come again with a longer hold).
  bool put(uint32_t id, const std::string& dataset, const DatasetInfo& info, const Selection& sel,
           const unsigned char* data, Hold hold, std::shared_ptr<const void> keep = {});
  // Syncs the region writes made since the last such sync, early, on the
  // node's first rank (a sync covers the node's pages of the log): the async
  // wrapper's prepare_flush calls it on its background thread, so that the
  // commit's sync finds the bytes on storage already. Not collective,
  // no MPI call. A failure is kept like a failed region write (Regions::fail)
  // and raised at the next placement, on every rank - the kernel reports a
  // write-back error to one sync only, so the commit's sync may not see it again.
  void sync_region_writes();
  // Whether such a sync failed: it may have been the sync that saw a
  // write-back error of a commit still pending (the kernel reports it once),
  // so that commit may not complete either (finish_commit).
  bool early_sync_failed() const { return early_sync_failed_; }
  // Whether this rank needs a write-out: its buffer is full, or borrowed
  // memory is waiting (the callers agree on it: write_out is collective).
  bool wants_write_out() const;
  // Collective: every piece goes to the log; a new round of regions opens.
  void write_out();

  // Whether this rank has anything a placement would move or settle: pieces,
  // or region writes of this round. Not collective.
  bool has_work() const { return !pieces_.pieces().empty() || regions_.busy(); }

  // How many index entries this rank's pieces make, and their encoded size
  // (the metadata fields left 0). Not collective.
  EntrySummary entry_summary() const;

  // The two halves of a write-out, for the commit protocol. Collective.
  // `entries`: this rank's index entries, told to every rank with the placement.
  Placement place(const EntrySummary& entries = {});
  // Moves the placed bytes; `meanwhile` (if given) runs on every rank while
  // they move. A failed write does not stop the bytes moving (no rank is left
  // waiting): it is raised on every rank at the end, and the pieces of this
  // placement are dropped (their data may be incomplete); else they are in the log.
  // `written` (if given) runs once this rank's own writes have returned
  // (AggregatorTransport::move), before the ranks agree that all went well -
  // which they do only if some rank wrote here (Placement::written_at_write_out).
  void write_placed(const Placement& placement, const std::function<void()>& meanwhile = {},
                    const std::function<void()>& written = {});

  // After a commit: the next epoch starts, with the log's valid length.
  void start_epoch(uint64_t open_epoch, uint64_t log_end);
  void open_round() { regions_.open_round(log_end_); }
  // After a visible flush (every rank, collectively): later writes are
  // ordered after every rank's earlier ones (BlockEntry::round).
  void next_visible_round() { ++round_; }
  uint32_t visible_round() const { return round_; }
  uint64_t open_epoch() const { return epoch_; }
  uint64_t log_end() const { return log_end_; }  // everything placed so far ends here

  PieceList& pieces() { return pieces_; }
  const Regions& regions() const { return regions_; }
  const AggregatorTransport& transport() const { return transport_; }
  // Frees the aggregation group's communicator (at close).
  void free() { transport_.free(); }

 private:
  void add_block(uint32_t id, const std::string& dataset, const Dims& start, const Dims& count,
                 const unsigned char* src, const Dims& dense, const Dims* dense_start, std::size_t es, bool may_keep,
                 const std::shared_ptr<const void>& keep);
  void write_to_region(BlockEntry e, const std::string& dataset, const unsigned char* src);
  std::optional<uint64_t> write_into_region(const unsigned char* src, uint64_t n, const std::string& what);
  void spill_if_full();

  Team team_;
  std::string path_;
  StoredFile& log_;
  Settings settings_;
  uint64_t unit_, log_end_, epoch_;
  uint64_t counter_ = 0;  // this rank's write order (BlockEntry::counter)
  uint32_t round_ = 0;    // visible flushes so far in the open epoch (BlockEntry::round)
  uint64_t unsynced_region_bytes_ = 0;  // region writes since the last sync_region_writes
  bool early_sync_failed_ = false;
  PieceList pieces_;
  // In this order: both are built collectively at open.
  AggregatorTransport transport_;
  Regions regions_;
};

}  // namespace h5loom::logengine
