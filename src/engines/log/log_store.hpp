// The log engine's storage seam: the only code of the engine that touches
// file descriptors. Everything the engine asks of storage - opening and
// creating files, bytes written and read at offsets, syncs, truncation,
// renames, removal, directory syncs, write-back hints, the writer's lock -
// goes through these two small classes, so that another storage (an object
// store) or an observer of what reaches the disk (the crash-state explorer,
// tests/crash) can stand in at one place. POSIX is the one implementation.
//
// Failures of calls the ranks must agree on (a sync) or that callers word
// themselves (an open) are returned as errno values, not thrown.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace h5loom::logengine {

// One open file of the store.
class StoredFile {
 public:
  explicit StoredFile(std::string path) : path_(std::move(path)) {}
  StoredFile(const StoredFile&) = delete;
  StoredFile& operator=(const StoredFile&) = delete;
  virtual ~StoredFile() = default;  // closes it
  const std::string& path() const { return path_; }

  // Writes all n bytes at `offset` (short writes are continued); a failure
  // raises IOError "what: <reason>".
  virtual void write(const void* data, uint64_t n, uint64_t offset, const std::string& what) = 0;
  // Reads exactly n bytes at `offset`. A file that ends first raises
  // CorruptionError: the log's records promised those bytes.
  virtual void read(void* data, uint64_t n, uint64_t offset, const std::string& what) = 0;
  // Reads at most n bytes at `offset`; returns how many (0 at the end or on a failure).
  virtual uint64_t read_some(void* data, uint64_t n, uint64_t offset) = 0;
  // Makes what was written durable: the data (fdatasync), or also the file's
  // metadata (fsync; a directory's entries). Returns 0 or the errno of the failure.
  virtual int sync(bool with_metadata = false) = 0;
  // Sets the file's size. Returns 0 or errno.
  virtual int truncate(uint64_t size) = 0;
  virtual uint64_t size() const = 0;
  // Asks storage to start writing [offset, +n) back now, so that a later sync
  // has little left to wait for. A hint: nothing fails.
  virtual void start_write_back(uint64_t offset, uint64_t n) = 0;

 private:
  std::string path_;
};

class LogStore {
 public:
  enum class Access {
    Read,          // an existing file, read-only
    ReadWrite,     // an existing file
    Create,        // created, or truncated to nothing if it exists
    OpenOrCreate,  // read-write, created if missing, kept if not
    Directory,     // a directory, only to sync its entries
  };
  struct Opened {
    std::unique_ptr<StoredFile> file;  // null if the open failed
    int error = 0;                     // then its errno
  };
  // A file with an exclusive advisory lock, held until it is closed.
  struct Locked {
    std::unique_ptr<StoredFile> file;  // null if it could not be opened (error)
    int error = 0;
    bool held_by_other = false;  // the file is open but another process holds the lock
  };

  virtual ~LogStore() = default;
  // `profiled`: the profile's POSIX layer records the file's writes, reads and
  // syncs (the engine's log and journal as a writer and reader use them, the
  // front file and directory syncs; not the headers at creation, scans,
  // verify or checksums).
  virtual Opened open(const std::string& path, Access access, bool profiled = false) = 0;
  // Opens (creating if missing) `path` and takes an exclusive lock on it. On
  // storage without locks the file is opened and no exclusion is given.
  virtual Locked lock(const std::string& path) = 0;
  virtual bool exists(const std::string& path) = 0;
  // The directory and its missing parents. Returns 0 or errno.
  virtual int make_directories(const std::string& dir) = 0;
  // Return 0 or errno (ENOENT if there was nothing to remove).
  virtual int remove(const std::string& path) = 0;
  virtual int rename(const std::string& from, const std::string& to) = 0;
};

// The POSIX store (pwrite, pread, fdatasync, fsync, ftruncate, rename, unlink,
// sync_file_range, open-file-description locks).
LogStore& posix_store();

// Opens `path` (`access`: Read for a file, Directory for a directory) and
// syncs it with its metadata (fsync): a file before it is renamed into place,
// a directory once names in it changed. Returns 0 or errno; recorded by the
// profile's POSIX layer.
int fsync_path(LogStore& store, const std::string& path, LogStore::Access access);

// "what: <strerror(error)>", for messages about a failed call.
std::string with_reason(const std::string& what, int error);

}  // namespace h5loom::logengine
