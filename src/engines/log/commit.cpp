#include "engines/log/commit.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>

#include "engines/log/front_file.hpp"
#include "engines/log/helper_threads.hpp"

namespace h5loom::logengine {

using namespace logfmt;

void record(LogFile& f, Json op) {
  f.catalog.apply(op, f.where());
  f.writing->epoch.ops.push_back(std::move(op));
}

void record_dataset(LogFile& f, Json op, DatasetInfo info, std::optional<uint64_t> type_token) {
  f.catalog.add_dataset(op.at("path").get_ref<const std::string&>(), std::move(info), type_token, f.where());
  f.writing->epoch.ops.push_back(std::move(op));
}

namespace {

// What the ranks' pieces make of the index: this rank's entries, encoded,
// and from the placement's exchange every rank's entry count and size.
struct Entries {
  Writer mine;
  uint64_t count = 0, total = 0;
  std::vector<uint64_t> bytes_of;  // each rank's
};

// This rank's entries for place(): what its pieces make, and the size and
// CRC32C of the epoch's metadata operations `meta`.
EntrySummary summarize(const LogFile& f, const std::vector<std::uint8_t>& meta) {
  EntrySummary s = f.writing->pipeline->entry_summary();
  s.meta_size = meta.size();
  s.meta_crc = crc32c(meta.data(), meta.size());
  return s;
}

// This rank's entries (its pieces are all placed by now), and the check that
// the epoch's metadata operations (collective calls: every rank makes the
// same ones) are the same on every rank, else the log (rank 0's) and the
// front file (the last rank's tree) would disagree.
Entries encode_entries(LogFile& f, const Placement& placed) {
  Entries out;
  for (const auto& p : f.writing->pipeline->pieces().pieces()) p.block.encode(out.mine), ++out.count;
  const std::vector<EntrySummary>& all = placed.entries_of;
  const EntrySummary& mine = all[std::size_t(f.team.rank)];
  if (out.count != mine.count || out.mine.bytes.size() != mine.bytes) {
    // A fault of this library, found on this rank alone while the others go
    // on into the exchange of entries sized as told: no way to agree on it.
    const std::string msg = f.where() + ": internal error: rank " + std::to_string(f.team.rank) +
                            "'s index entries (" + std::to_string(out.count) + ", " +
                            std::to_string(out.mine.bytes.size()) + " bytes) are not what it told the other ranks (" +
                            std::to_string(mine.count) + ", " + std::to_string(mine.bytes) + " bytes)";
    if (!mpi::abort_on_error()) throw Error(ErrorCode::Generic, msg);
    std::fprintf(stderr, "h5loom: %s; ending the job (MPI_Abort)\n", msg.c_str());
    std::fflush(stderr);
    MPI_Abort(f.team.comm, 1);
  }
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].meta_crc != all[0].meta_crc || all[r].meta_size != all[0].meta_size)
      throw CollectiveMismatchError(f.where() + ": rank " + std::to_string(r) +
                                    " made different collective calls than rank 0 in this epoch (groups, datasets, "
                                    "extents or attribute values differ); the epoch is not committed");
    out.total += all[r].count;
    out.bytes_of.push_back(all[r].bytes);
  }
  return out;
}

// Collective: every rank gets every rank's entries (reads may touch any
// block), into its index. Returns them, in rank order.
std::vector<unsigned char> exchange_entries(LogFile& f, const Entries& e) {
  std::vector<int> counts(std::size_t(f.team.size)), displs(std::size_t(f.team.size));
  uint64_t sum = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) sum += e.bytes_of[r];
  if (sum > uint64_t(INT32_MAX)) throw IOError(f.where() + ": the index of one epoch exceeds 2 GiB; flush more often");
  for (std::size_t r = 0, at = 0; r < counts.size(); at += e.bytes_of[r], ++r)
    counts[r] = int(e.bytes_of[r]), displs[r] = int(at);
  std::vector<unsigned char> all(sum);
  MPI_Allgatherv(e.mine.bytes.data(), int(e.mine.bytes.size()), MPI_BYTE, all.data(), counts.data(), displs.data(),
                 MPI_BYTE, f.team.comm);
  Reader r{all.data(), all.size(), 0, f.where()};
  f.catalog.index->deserialize(r, e.total);
  return all;
}

}  // namespace

void make_visible(LogFile& f) {
  WritePipeline& pipe = *f.writing->pipeline;
  // Nothing to place on any rank - a flush point right after another, as when
  // an HDF5 program closes its datasets one after another, each a flush point
  // through the connector: one collective instead of a placement round, and
  // the round stays open.
  int mine = pipe.has_work() ? 1 : 0, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, f.team.comm);
  if (!any) return;
  // First: the index is exchanged before the bytes move.
  const Placement placed = pipe.place(summarize(f, encode_ops(f.writing->epoch.ops)));
  // Dataset ids mean the same on every rank only if the ranks made the same
  // collective calls: else the blocks would land in other datasets.
  const Entries entries = encode_entries(f, placed);
  if (entries.total > 0) {
    std::vector<unsigned char> all = exchange_entries(f, entries);
    pipe.write_placed(placed);
    pipe.pieces().clear();
    pipe.next_visible_round();
    OpenEpoch& epoch = f.writing->epoch;
    epoch.visible_count += entries.total;
    epoch.visible_bytes += all.size();
    if (f.team.rank == 0) epoch.visible_entries.insert(epoch.visible_entries.end(), all.begin(), all.end());
  }
  pipe.open_round();
}

bool begin_commit(LogFile& f, const std::function<void()>& while_writing, bool force, Urgency syncs_urgency) {
  if (!f.writable()) return false;
  // One at a time: this one's epoch number follows that one's. Its record
  // syncs while this one moves; the next finish_commit confirms it.
  finish_commit(f, {}, RecordSync::Later);
  Writing& w = *f.writing;
  WritePipeline& pipe = *w.pipeline;
  // The blocks get their places first, so that the index is exchanged
  // before the bytes move and `while_writing` can use it meanwhile.
  const std::vector<std::uint8_t> meta = encode_ops(w.epoch.ops);
  const Placement placed = pipe.place(summarize(f, meta));
  const Entries entries = encode_entries(f, placed);
  if (entries.total == 0 && w.epoch.ops.empty() && w.epoch.visible_count == 0 && !force) {
    pipe.open_round();  // nothing was placed either
    return false;
  }
  std::vector<unsigned char> all = exchange_entries(f, entries);

  // Rank 0 writes the index record where the placed bytes will end, once its
  // own writes of them are out, and syncs the log after it: data and index
  // are durable after one sync round, and only when all have done so does
  // the commit record go out. Every rank knows where it ends (the record's
  // size follows from what every rank has: the metadata and the entries'
  // sizes). The write goes with the sync, on a helper thread; its failure is
  // agreed on with the syncs' (finish_commit): no collective call here.
  PendingCommit p;
  p.epoch = f.committed.epoch + 1;
  const uint64_t index_offset = pipe.log_end() + placed.total;  // after the bytes write_placed moves
  const uint64_t index_size = kIndexHeaderSize + meta.size() + w.epoch.visible_bytes + all.size();
  p.log_end = index_offset + index_size;
  std::vector<unsigned char> index_bytes;
  if (f.team.rank == 0)
    p.index_error->run([&] {
      if (!w.epoch.visible_entries.empty()) {  // blocks made visible earlier in the epoch come first
        w.epoch.visible_entries.insert(w.epoch.visible_entries.end(), all.begin(), all.end());
        all.swap(w.epoch.visible_entries);
      }
      IndexRecord rec;
      rec.epoch = p.epoch;
      rec.entry_count = w.epoch.visible_count + entries.total;
      rec.meta = meta.data(), rec.meta_size = meta.size();
      rec.entries = all.data(), rec.entries_size = all.size();
      index_bytes = rec.encode();
      if (index_bytes.size() != index_size)
        throw Error(ErrorCode::Generic, f.where() + ": internal error: the index record of epoch " +
                                            std::to_string(p.epoch) + " has " + std::to_string(index_bytes.size()) +
                                            " bytes, not the " + std::to_string(index_size) + " the ranks expect");
      CommitRecord& c = p.record;
      c.epoch = p.epoch;
      c.index_offset = index_offset;
      c.index_size = index_bytes.size();
      c.index_crc = crc32c(index_bytes.data(), index_bytes.size());
      c.log_end = p.log_end;
    });
  // Written by rank 0 (with its sync, if it syncs): a failure is kept for
  // finish_commit's agreement.
  auto write_index = [&f, index_offset, error = p.index_error](const std::vector<unsigned char>& bytes) {
    if (error->code == 0)
      error->run([&] { f.log->write(bytes.data(), bytes.size(), index_offset, "writing an index record to " + f.where()); });
  };

  // Who makes the data durable: every aggregator its own writes, rank 0 the
  // index record, one rank per node the region writes of its node (a sync
  // flushes the node's pages of the file, whoever wrote them), and a rank
  // whose buffer went to its region in this write-out (its node's first rank
  // may have started before that write). Each starts its sync on a helper
  // thread as soon as its own writes are out: the data reaches the device
  // while a front file is built (`while_writing`), and - under the async
  // wrapper, which finishes the commit later - while the program computes.
  // So does rank 0 with the directories of a new file.
  const AggregatorTransport& transport = pipe.transport();
  const bool syncs = w.settings.sync &&
                     (transport.is_aggregator() || f.team.rank == 0 ||
                      (transport.node_leader() && pipe.regions().written_in_epoch()) || placed.own.nbytes > 0);
  auto start_syncs = [&] {
    if (syncs)
      p.data_synced = run_on_helper(
          [&f, write_index, bytes = std::move(index_bytes)] {
            if (!bytes.empty()) write_index(bytes);  // rank 0
            return f.log->sync();
          },
          syncs_urgency);
    else if (f.team.rank == 0)
      write_index(index_bytes);
    if (w.settings.sync && !w.names_to_sync.empty())
      p.names_synced = run_on_helper([&f] { return sync_names(f); }, syncs_urgency);
  };
  pipe.write_placed(placed, while_writing, start_syncs);
  pipe.pieces().clear();

  // The next epoch opens now, after this one's index record: writes made
  // before this commit finishes belong to it.
  w.epoch = OpenEpoch{};
  pipe.start_epoch(p.epoch + 1, p.log_end);
  w.committing = std::move(p);
  return true;
}

namespace {

// Rank 0: the errno of the journal's write and sync of a record left syncing
// by an earlier finish_commit (RecordSync::Later); 0 if they succeeded, or
// on another rank, or if there is none. Waits for the sync.
int earlier_record_error(Writing& w) {
  if (!w.syncing_record || !w.syncing_record->synced.valid()) return 0;
  return w.syncing_record->synced.get();
}

// Every rank, once the ranks agreed on `error` (earlier_record_error's): the
// flush of the record left syncing completes - or, if the journal lost it,
// fails, the record is cut from the journal (as far as the storage still
// lets us: a reader must not see an epoch we report lost) and the commit
// under way fails too (raised here): its record would follow a lost one.
void settle_earlier_record(LogFile& f, int error) {
  Writing& w = *f.writing;
  if (!w.syncing_record) return;
  SyncingRecord s = std::move(*w.syncing_record);
  w.syncing_record.reset();
  if (error) {
    s.outcome->error = {int(ErrorCode::IO), with_reason("cannot write or sync a commit record to the journal of '" +
                                                            f.path + "' (" + commits_path(f.path) + ")",
                                                        error)};
    if (f.team.rank == 0) (void)w.commits->truncate(s.commits_start);
  }
  s.outcome->done = true;
  if (error) throw IOError(s.outcome->error.msg);
}

}  // namespace

void drop_record(LogFile& f) {
  Writing& w = *f.writing;
  if (!w.syncing_record) return;
  if (earlier_record_error(w)) (void)w.commits->truncate(w.syncing_record->commits_start);  // rank 0
  w.syncing_record.reset();  // reports its flush abandoned
}

void confirm_record(LogFile& f) {
  if (!f.writing->syncing_record) return;
  int mine = earlier_record_error(*f.writing), error = 0;
  MPI_Allreduce(&mine, &error, 1, MPI_INT, MPI_MAX, f.team.comm);
  settle_earlier_record(f, error);
}

void finish_commit(LogFile& f, const std::function<FrontSum()>& front_sum, RecordSync record_sync) {
  if (!f.writing) return;
  Writing& w = *f.writing;
  // Nothing to commit, or nothing more (a handle a failure made unusable,
  // below): a record still syncing is confirmed on its own.
  mpi::CaughtError earlier;
  if ((!w.committing && record_sync == RecordSync::Now) || (w.committing && !f.failed.empty()))
    earlier.run([&] { confirm_record(f); });
  if (!w.committing) {
    if (earlier.code) mpi::throw_error(earlier.code, earlier.msg);
    return;
  }
  PendingCommit p = std::move(*w.committing);
  w.committing.reset();
  // Its outcome goes to the commit's request too (the same on every rank:
  // every error here is raised on every rank). The request shares it, so it
  // outlives `p`'s pointer when the record left syncing takes that over.
  mpi::CaughtError& failed = p.outcome->error;
  // The record's sync is left to a helper thread (and the write too: no rank
  // waits to hear that it went well) only where a later finish_commit
  // confirms it.
  const bool later = record_sync == RecordSync::Later && w.settings.sync;
  failed.run([&] {
    f.require_usable();  // a handle a failure made unusable since the commit began commits nothing
    // Any rank's failure: [0] the log's sync, [1] the new file's names
    // (rank 0), [2] the errno of the record left syncing before (rank 0),
    // [3] the index record (rank 0: its encoding or its write).
    int failures[4] = {0, 0, 0, 0}, any[4] = {0, 0, 0, 0};
    if (p.data_synced.valid()) failures[0] = p.data_synced.get() != 0;
    // A sync of the log made meanwhile for the next epoch (prepare_flush)
    // that failed may have been the one the kernel told of this epoch's lost pages.
    if (w.pipeline->early_sync_failed()) failures[0] = 1;
    if (p.names_synced.valid()) failures[1] = p.names_synced.get() != 0;
    failures[2] = earlier_record_error(w);
    failures[3] = p.index_error->code != 0;
    MPI_Allreduce(failures, any, 4, MPI_INT, MPI_MAX, f.team.comm);
    settle_earlier_record(f, any[2]);
    if (any[3]) mpi::share_first_error(f.team.comm, f.team.rank, *p.index_error);
    if (any[0]) throw IOError("cannot sync the log of '" + f.path + "' to storage (fdatasync failed)");
    if (any[1])
      throw IOError("cannot sync the directories holding the new files of '" + f.path + "' (" +
                    directory_of(f.path) + " and its parent) to storage");
    // A front file built while the data moved is named in the commit record (its CRC32C).
    FrontSum front;
    if (front_sum) front = front_sum(), p.record.front_crc = front.crc;

    CommitRecord& c = p.record;
    c.unix_time_ns = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count());
    // The commit record goes last: until it is on disk, the epoch does not exist.
    const uint64_t at = f.committed.commits_end;
    if (later) {
      SyncingRecord s;
      s.commits_start = at;
      if (f.team.rank == 0)
        s.synced = run_on_helper([&w, bytes = c.encode(), at, where = "writing a commit record of " + f.where()] {
          try {
            w.commits->write(bytes.data(), bytes.size(), at, where);
          } catch (const std::exception&) {
            return EIO;
          }
          return w.commits->sync();
        }, Urgency::Later);
      s.outcome = std::move(p.outcome);  // no longer `p`'s to report done (or abandoned)
      w.syncing_record = std::move(s);
    } else {
      on_root(f.team, [&] {
        const auto bytes = c.encode();
        try {
          w.commits->write(bytes.data(), bytes.size(), at, "writing a commit record of " + f.where());
          if (w.settings.sync)
            if (const int err = w.commits->sync())
              throw IOError(with_reason(
                  "cannot sync the commit journal of '" + f.path + "' (" + commits_path(f.path) + ")", err));
        } catch (const Error&) {
          // The flush failed: its record is taken back (as far as the storage
          // still lets us), so that a reader does not see an epoch we reported lost.
          (void)w.commits->truncate(at);
          throw;
        }
      });
    }
    f.committed.log_end = p.log_end;
    f.committed.epoch = p.epoch;
    f.committed.commits_end += kCommitRecordSize;
    if (front.crc) f.catalog.tree.fronts.push_back(front);
  });
  if (p.outcome) p.outcome->done = true;  // else the record left syncing reports it
  if (failed.code) mpi::throw_error(failed.code, failed.msg);
}

bool commit(LogFile& f, const std::function<void()>& while_writing, const std::function<FrontSum()>& front_sum,
            bool force) {
  const bool begun = begin_commit(f, while_writing, force);
  finish_commit(f, front_sum);  // a record left syncing is confirmed even if nothing was begun
  return begun;
}

void close_epoch(LogFile& f) {
  Writing& w = *f.writing;
  if (!w.settings.front_file) {
    commit(f);  // (a commit begun by an earlier flush is finished first)
    return;
  }
  int idle = w.pipeline->pieces().pieces().empty() && w.epoch.ops.empty() && w.epoch.visible_count == 0,
      all_idle = 0;
  MPI_Allreduce(&idle, &all_idle, 1, MPI_INT, MPI_MIN, f.team.comm);
  // Nothing new since a flush whose commit is still pending (the async
  // wrapper finishes it at the next call, here the close): that commit's
  // record names the front file, built now for its epoch, instead of a new,
  // empty epoch whose index record, commit record and syncs would come after
  // it (1-2 ms of a close with no computation left to hide behind).
  const bool name_in_pending = all_idle && w.committing.has_value();
  // A commit begun by an earlier flush, first; its record syncs while the
  // last epoch is written, and the last commit confirms it.
  if (!name_in_pending) finish_commit(f, {}, RecordSync::Later);
  // Nothing new and the front file is the one the log recorded: keep it.
  if (all_idle && !name_in_pending) {
    int current = 0;
    if (f.team.rank == 0) current = front_is_current(*f.store, f.path, f.catalog.tree, f.committed.epoch);
    MPI_Bcast(&current, 1, MPI_INT, 0, f.team.comm);
    if (current) {
      finish_commit(f);  // a record still syncing is confirmed
      return;
    }
  }
  // The last rank builds the front file while the aggregators write the last
  // epoch (it has the whole tree and index once the epoch's blocks are placed
  // and exchanged; a member, it builds once its bytes are sent, and its
  // aggregator takes them first: AggregatorTransport::move), or while a
  // pending epoch's syncs run. Its
  // checksum is in the epoch's commit record
  // (so verify can check it), and it replaces the old front file only once
  // the commit record is on disk, so the front file never shows an epoch
  // that a crash could still lose. Its error, if any, is raised on every
  // rank after the commit.
  const int builder = f.team.size - 1;
  mpi::CaughtError front;
  FrontSum sum;
  const uint64_t epoch = name_in_pending ? w.committing->epoch : f.committed.epoch + 1;
  HelperResult front_synced;  // the built file's fsync, while the epoch commits
  auto build = [&] {
    if (f.team.rank == builder)
      front.run([&] {
        sum = build_front_file(*f.store, f.path, f.committed.header, f.catalog.tree, *f.catalog.index, epoch,
                               w.settings.max_external_segments,
                               w.settings.front_encoder == "hdf5" ? FrontEncoder::Library : FrontEncoder::Direct);
        if (w.settings.sync)
          front_synced = run_on_helper([&f] {
            sync_front_file(*f.store, f.path);
            return 0;
          });
      });
  };
  auto checksum = [&]() -> FrontSum {  // the builder's, on every rank (none if the build failed)
    uint64_t v[3] = {uint64_t(front.code == 0), sum.size, sum.crc};
    MPI_Bcast(v, 3, MPI_UINT64_T, builder, f.team.comm);
    if (!v[0]) return FrontSum{};
    return FrontSum{epoch, v[1], uint32_t(v[2])};
  };
  // A new file's parent directory, which names NAME.loom, is synced once:
  // after the rename that names NAME in it too (publish_front_file), not also
  // before the commit record. Nothing is promised before close returns, and a
  // crash before then loses the whole new file, never a part of it.
  if (name_in_pending) {
    build();
    finish_commit(f, checksum);
  } else {
    if (w.settings.sync && w.names_to_sync.size() == 2) w.names_to_sync.pop_back();  // rank 0: {NAME.loom, parent}
    commit(f, build, checksum, /*force=*/true);
  }
  if (f.team.rank == builder) {
    if (front.code == 0) {
      front.run([&] {
        if (front_synced.valid()) front_synced.get();
        publish_front_file(*f.store, f.path, w.settings.sync);
      });
    } else if (w.settings.sync) {
      // No front file: the parent is synced all the same (the epoch is
      // committed); the build's error is the one raised.
      mpi::CaughtError ignored;
      ignored.run([&] { sync_front_directory(*f.store, f.path); });
    }
  }
  mpi::share_error(f.team.comm, builder, front);
}

}  // namespace h5loom::logengine
