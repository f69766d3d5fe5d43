// An open log-engine file: the engine's handle, made of the parts that own
// its state - the committed state and the catalog (tree and index) every
// handle has, and, when it is open for writing, the writer's parts - and how
// it is opened and closed.
#pragma once

#include <optional>
#include <memory>
#include <string>

#include "h5loom/engine.hpp"
#include "engines/log/helper_threads.hpp"
#include "engines/log/log_store.hpp"
#include "engines/log/metadata.hpp"
#include "engines/log/replay.hpp"
#include "engines/log/settings.hpp"
#include "engines/log/team.hpp"
#include "engines/log/write_pipeline.hpp"
#include "engines/log/writer_lock.hpp"

namespace h5loom::logengine {

// The epoch being written, beyond its pieces (which the pipeline holds).
struct OpenEpoch {
  // Its metadata operations: every rank keeps them (the calls are collective;
  // the commit checks that all ranks made the same), rank 0 writes them.
  Json ops = Json::array();
  // Blocks made visible before the commit (make_visible): how many, and (on
  // rank 0, which writes the index record) their entries.
  uint64_t visible_count = 0;
  uint64_t visible_bytes = 0;  // their encoded size (every rank)
  std::vector<unsigned char> visible_entries;
};

// The outcome of a commit begun by begin_commit (commit.hpp), which its
// request reads: shared, since the request may outlive the file.
struct CommitOutcome {
  bool done = false;
  mpi::CaughtError error;  // code 0: committed

  // What a commit dropped unfinished reports (its file closed on an error first).
  static void abandon(const std::shared_ptr<CommitOutcome>& o) {
    if (o && !o->done)
      o->done = true, o->error = {int(ErrorCode::IO), "the flush's commit was abandoned: its file was closed "
                                                      "before the flush completed"};
  }
};

// A commit begun whose commit record is not written yet: the epoch's data and
// index record are written, their syncs run on helper threads, and the next
// epoch is open (commit.hpp: begin_commit, finish_commit).
struct PendingCommit {
  PendingCommit() = default;
  PendingCommit(PendingCommit&&) = default;
  PendingCommit& operator=(PendingCommit&&) = default;
  ~PendingCommit() { CommitOutcome::abandon(outcome); }  // dropped unfinished: its request says so
  uint64_t epoch = 0;                  // the epoch it commits
  uint64_t log_end = 0;                // where the log's valid bytes end once it is committed
  logfmt::CommitRecord record;         // rank 0's; the time and the front file's checksum come at the end
  HelperResult data_synced;            // the log's fdatasync (0 or errno); not valid: this rank does not sync
  // Rank 0: the index record's encoding or write failed (written with the
  // sync, on its helper thread: read once data_synced is).
  std::shared_ptr<mpi::CaughtError> index_error = std::make_shared<mpi::CaughtError>();
  HelperResult names_synced;           // rank 0 of a new file: its directories (sync_names)
  std::shared_ptr<CommitOutcome> outcome = std::make_shared<CommitOutcome>();
};

// A commit whose record is written and whose sync of the journal runs on a
// helper thread (finish_commit with RecordSync::Later): the epoch is on disk
// once that sync has succeeded, and its flush completes once every rank has
// heard so, at the next finish_commit (commit.hpp).
struct SyncingRecord {
  SyncingRecord() = default;
  SyncingRecord(SyncingRecord&&) = default;
  SyncingRecord& operator=(SyncingRecord&&) = default;
  ~SyncingRecord() { CommitOutcome::abandon(outcome); }  // dropped unconfirmed: its request says so
  uint64_t commits_start = 0;  // where its record begins in the journal (cut back to here if the sync fails)
  HelperResult synced;         // rank 0: the journal's fdatasync (0 or errno)
  std::shared_ptr<CommitOutcome> outcome;
};

// What only a writer has.
struct Writing {
  explicit Writing(const Settings& s) : settings(s) {}
  Settings settings;
  WriterLock lock;                          // rank 0: one writer at a time
  std::unique_ptr<StoredFile> commits;      // rank 0: the commit journal
  std::unique_ptr<WritePipeline> pipeline;  // every rank's writes on their way to the log
  OpenEpoch epoch;
  // Writes whose bytes are read at the next flush (the object model's deferred
  // writes: the value at the flush point is what gets written), and every
  // write put after one of them (to keep a rank's writes in order).
  std::vector<engine::Write> deferred;
  // Writes of datasets the metadata holds (held_values.hpp), owned, shared at the next flush.
  std::vector<engine::Write> held;
  // The last dataset written, by path (writes come in runs).
  std::string last_dataset;
  int last_dataset_id = -1;
  // Rank 0 of a new file with `sync`: the directories holding the new files'
  // names (NAME.loom, then its parent), synced before the first commit record
  // (sync_names), not at create: the first commit syncs them while the data
  // is synced. A close leaves the parent to the front file's publication.
  std::vector<std::string> names_to_sync;
  // A commit begun and not finished (at most one), and the one before it
  // whose record's sync has not been confirmed (at most one).
  std::optional<PendingCommit> committing;
  std::optional<SyncingRecord> syncing_record;
};


struct LogFile final : engine::FileHandle {
  std::string path;
  engine::OpenMode mode = engine::OpenMode::Read;
  Team team;
  LogStore* store = &posix_store();
  std::unique_ptr<StoredFile> log;  // every rank: the log
  Committed committed;
  Catalog catalog;
  std::unique_ptr<Writing> writing;  // null when open read-only
  // Set (on every rank) when a write or sync of the log failed: Linux may have
  // dropped the data of a failed sync, and the epoch's blocks may be partial,
  // so nothing more may be committed through this handle. Every later call
  // raises it; reopening continues from the last committed epoch.
  std::string failed;

  bool writable() const { return mode != engine::OpenMode::Read; }
  // Throws the failure that made this handle unusable, if any.
  void require_usable() const;
  std::string where() const { return "log file '" + path + "'"; }

  // Runs a step that writes or syncs the log. Its failures are raised on every
  // rank (the steps share them), so every rank marks the handle unusable and
  // drops what the open epoch held: nothing of it may be committed later (its
  // blocks may be partial, a failed sync may have lost pages, and borrowed
  // writes point into buffers the caller frees once we raise).
  template <class Fn>
  void writing_step(Fn&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      fail(e.what());
      throw;
    }
  }

 private:
  void fail(const std::string& why);
};

// Collective: opens the log-engine file `path` - creating its log and journal
// (rank 0), or reading its committed epochs (rank 0) and replaying them
// (every rank) - and, for a writer, takes the writer's lock, cuts a torn
// commit record and sets up the write pipeline.
std::unique_ptr<LogFile> open_log_file(const std::string& path, engine::OpenMode mode, MPI_Comm comm,
                                       const Settings& settings);
// Rank 0: makes the names of a new file's files durable (fsync of the
// directories in `Writing::names_to_sync`, then forgets them). Returns 0 or errno.
int sync_names(LogFile& f);

// Collective: a writer's last epoch and front file (close_epoch); the
// handle's files, lock and communicator go whatever happens. A handle made
// unusable by a failure raises that failure and commits nothing.
void close_log_file(LogFile& f);

}  // namespace h5loom::logengine
