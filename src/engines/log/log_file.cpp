#include "engines/log/log_file.hpp"

#include <cerrno>
#include <filesystem>
#include <random>

#include "engines/log/commit.hpp"
#include "engines/log/helper_threads.hpp"

namespace h5loom::logengine {

using engine::OpenMode;
using namespace logfmt;

void LogFile::require_usable() const {
  if (!failed.empty())
    throw IOError(where() + " is unusable: an earlier write or sync of its log failed (" + failed +
                  "); nothing after its last committed epoch is kept. Reopen the file to continue from there");
}

void LogFile::fail(const std::string& why) {
  if (failed.empty()) failed = why;
  if (!writing) return;
  if (writing->pipeline) writing->pipeline->pieces().clear();
  writing->epoch = OpenEpoch{};
}

namespace {

// Rank 0 of a new file: the log and the journal with their headers, no front
// file (an old one, of any engine, must not describe this file, and a log
// whose front file is missing is recognised as a log), and - with `sync` -
// their names durable before any epoch can be (a commit syncs file contents,
// not directories): the first commit syncs them (sync_names), or, for the
// parent directory, the first close's front file (close_epoch).
void create_files(LogFile& f, bool sync) {
  LogStore& store = *f.store;
  const std::string dir = directory_of(f.path);
  if (f.mode == OpenMode::CreateExclusive && (store.exists(f.path) || store.exists(dir)))
    throw ExistsError("cannot create file '" + f.path + "': it already exists (use create() to overwrite)");
  if (int err = store.make_directories(dir)) throw IOError(with_reason("cannot create directory '" + dir + "'", err));
  f.writing->lock.acquire(store, f.path);  // before anything is truncated: another writer may be at work
  // An old front file goes first, and durably, before the log it may describe
  // is truncated: a crash must not leave it naming bytes of the new log.
  const std::string parent = std::filesystem::absolute(f.path).parent_path().string();
  if (int err = store.remove(f.path); err && err != ENOENT) {
    throw IOError(with_reason("cannot remove old file '" + f.path + "'", err));
  } else if (!err && sync) {
    if (const int e = fsync_path(store, parent, LogStore::Access::Directory))
      throw IOError(with_reason("cannot sync directory '" + parent + "' after removing old file '" + f.path + "'", e));
  }
  auto make = [&](const std::string& p, const std::vector<unsigned char>& header) {
    auto o = store.open(p, LogStore::Access::Create);
    if (!o.file) throw IOError(with_reason("cannot create '" + p + "'", o.error));
    o.file->write(header.data(), header.size(), 0, "writing the header of '" + p + "'");
    // (made durable by the first commit's syncs)
  };
  make(log_path(f.path), f.committed.header.encode());
  Writer ch;
  ch.raw(kCommitsMagic, 8);
  ch.u32(kVersion);
  ch.raw(f.committed.header.file_id, 16);
  ch.u32(crc32c(ch.bytes.data(), ch.bytes.size()));
  ch.bytes.resize(kCommitsHeaderSize, 0);
  make(commits_path(f.path), ch.bytes);
  if (sync) f.writing->names_to_sync = {dir, parent};
}

}  // namespace

int sync_names(LogFile& f) {
  for (const std::string& d : f.writing->names_to_sync) {
    if (const int err = fsync_path(*f.store, d, LogStore::Access::Directory)) return err;
  }
  f.writing->names_to_sync.clear();
  return 0;
}

std::unique_ptr<LogFile> open_log_file(const std::string& path, OpenMode mode, MPI_Comm comm,
                                       const Settings& settings) {
  auto f = std::make_unique<LogFile>();
  f->path = path;
  f->mode = mode;
  f->team.comm = comm;
  MPI_Comm_rank(comm, &f->team.rank);
  MPI_Comm_size(comm, &f->team.size);
  if (f->writable()) f->writing = std::make_unique<Writing>(settings);
  if (f->writable() && settings.sync) start_helper_threads();  // the commits' syncs run on them
  const bool creating = mode == OpenMode::Create || mode == OpenMode::CreateExclusive;
  if (creating) {
    f->committed.header.checksum_unit = settings.checksum_unit;
    std::random_device rd;
    for (auto& b : f->committed.header.file_id) b = static_cast<unsigned char>(rd());
    MPI_Bcast(f->committed.header.file_id, 16, MPI_UNSIGNED_CHAR, 0, comm);  // rank 0's: it writes the header
    on_root(f->team, [&] { create_files(*f, settings.sync); });
  } else {
    std::vector<unsigned char> packed;  // rank 0 reads the log's index; everyone replays it
    on_root(f->team, [&] {
      if (f->writable()) f->writing->lock.acquire(*f->store, path);
      packed = read_committed(*f->store, path, f->writable());
    });
    bcast_bytes(comm, packed);
    replay_committed(packed, f->committed, f->catalog, f->where());
  }
  auto log = f->store->open(log_path(path), f->writable() ? LogStore::Access::ReadWrite : LogStore::Access::Read,
                            /*profiled=*/true);
  int ok = log.file != nullptr, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
  if (!all_ok) throw IOError("cannot open the log of '" + path + "' on every rank (" + log_path(path) + ")");
  f->log = std::move(log.file);
  if (!f->writable()) return f;

  Writing& w = *f->writing;
  on_root(f->team, [&] {
    auto commits = f->store->open(commits_path(path), LogStore::Access::ReadWrite, /*profiled=*/true);
    if (!commits.file) throw IOError(with_reason("opening " + commits_path(path), commits.error));
    // A torn commit record at the end is cut off, so the next one follows the last valid one.
    if (int err = commits.file->truncate(f->committed.commits_end))
      throw IOError(with_reason("trimming " + commits_path(path), err));
    w.commits = std::move(commits.file);
  });
  w.pipeline = std::make_unique<WritePipeline>(f->team, path, *f->log, w.settings, f->committed.header.checksum_unit,
                                               f->committed.log_end, f->committed.epoch + 1);
  if (creating) record(*f, group_op("/"));  // the first epoch records the root
  if (creating && settings.userblock) record(*f, userblock_op(settings.userblock));
  return f;
}

void close_log_file(LogFile& f) {
  struct Release {  // whatever happens below, the handle's resources go
    LogFile& f;
    ~Release() {
      if (f.writing) {  // their helper threads sync the log and the journal: joined first
        f.writing->committing.reset();
        f.writing->syncing_record.reset();
      }
      f.log.reset();
      if (!f.writing) return;
      f.writing->commits.reset();
      if (f.writing->pipeline) f.writing->pipeline->free();
      f.writing->lock.release();
    }
  } release{f};
  // A record left syncing by an earlier flush (commit.hpp, RecordSync::Later)
  // is settled whatever happens here. Once every rank is committing the last
  // epoch, it is confirmed (collective; a failure there is raised on every
  // rank), so that its flush reports whether it is on disk. The close of a
  // handle already unusable stays local, as it was: the record is given up
  // (drop_record). Its error is its flush's, not the close's.
  struct SettleRecord {
    LogFile& f;
    bool collective = false;
    ~SettleRecord() {
      if (!f.writing || !f.writing->syncing_record) return;
      mpi::CaughtError ignored;
      ignored.run([&] { collective ? confirm_record(f) : drop_record(f); });
    }
  } settle{f};
  f.require_usable();  // a failed handle commits nothing more
  settle.collective = true;
  if (f.writable()) f.writing_step([&] { close_epoch(f); });
}

}  // namespace h5loom::logengine
