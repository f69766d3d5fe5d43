// The commit protocol (docs/formats/log.md, "Epochs and the commit protocol").
// Every flush point ends an epoch, in this order: the epoch's data blocks
// (every rank's pieces placed and written; each aggregator, and each node's
// first rank if regions were written, syncs), then rank 0's index record
// (metadata operations and every rank's block entries; synced), then rank 0's
// commit record in the journal (synced). Until the commit record is on disk
// the epoch does not exist: a crash leaves it as a torn tail that readers
// ignore and the next writer overwrites.
#pragma once

#include <functional>
#include <optional>

#include "engines/log/log_file.hpp"

namespace h5loom::logengine {

// Every rank: applies a metadata operation of the open epoch to the catalog
// and keeps it for the epoch's index record (the calls are collective).
void record(LogFile& f, Json op);
// The same for a dataset's creation, applied from its values (Catalog::add_dataset)
// rather than parsed back from `op`, which is what the epoch keeps.
void record_dataset(LogFile& f, Json op, DatasetInfo info, std::optional<uint64_t> type_token);

// Collective: makes every rank's writes so far visible to reads - placed,
// written, and in every rank's index - without an index record, a commit
// record or a sync. The blocks are committed with the epoch at the next
// commit; a crash before it loses them (a torn tail), as it would have
// without this call. (For a "visible" flush that is not a durable one.)
void make_visible(LogFile& f);

// Collective: ends the epoch if anything happened in it, in two halves.
//
// begin_commit places and writes the epoch's data and index record, starts
// their syncs on helper threads, and opens the next epoch: every rank's index
// has the epoch's blocks, and writes made from here on belong to the next
// epoch. It first finishes a commit still pending (RecordSync::Later). Returns whether there was
// an epoch to commit (then it is pending in Writing::committing).
// `while_writing` (if given) runs on every rank once the index is complete,
// while the data moves (on a rank that writes its own bytes alone, after
// them); with `sync`, the data is synced meanwhile. `force` commits an epoch
// even if nothing happened (to record a front file's checksum).
// `syncs_urgency`: Urgency::Later when finish_commit comes only at a later
// collective part (flush_in_stages), so the syncs need not take the CPU from
// the caller (helper_threads.hpp).
bool begin_commit(LogFile& f, const std::function<void()>& while_writing = {}, bool force = false,
                  Urgency syncs_urgency = Urgency::Now);
// finish_commit waits for those syncs, agrees on them, and writes (and
// syncs) the commit record: the epoch exists from then on. `front_sum` (if
// given; collective) returns the checksum of the front file `while_writing`
// built (crc 0: none), for the commit record. Its outcome goes to the pending
// commit's CommitOutcome too.
//
// With RecordSync::Later the record's sync runs on a helper thread instead
// (Writing::syncing_record), and the commit's outcome is known at the next
// finish_commit, whose agreement carries it: the async wrapper's flushes,
// whose collective part runs on the program's thread, do not wait for the
// journal's sync (0.2-1 ms on the test machine's disk). With RecordSync::Now
// nothing is left pending when it returns: a record still syncing is
// confirmed too, even if no commit is pending.
enum class RecordSync { Now, Later };
void finish_commit(LogFile& f, const std::function<FrontSum()>& front_sum = {},
                   RecordSync record_sync = RecordSync::Now);
// Collective: a record left syncing (RecordSync::Later) is confirmed, in
// whatever state the handle is: its flush completes, or fails (raised here,
// the record cut from the journal). Nothing to do if there is none.
void confirm_record(LogFile& f);
// Local (the close of a handle a failure made unusable, which makes no
// collective call): a record left syncing is given up. Rank 0 waits for its
// sync and cuts it from the journal if it failed; its flush reports, on
// every rank, that it was abandoned (it may be on disk or not).
void drop_record(LogFile& f);
// Both at once: after it returns the epoch is on disk with its commit record
// (and so is every earlier one: a record still syncing is confirmed).
bool commit(LogFile& f, const std::function<void()>& while_writing = {},
            const std::function<FrontSum()>& front_sum = {}, bool force = false);

// Collective, at close: the last epoch, and (knob front_file) the front file,
// built by the last rank while the last epoch is written, checksummed in it,
// and put in place only once its commit record is on disk.
void close_epoch(LogFile& f);

}  // namespace h5loom::logengine
