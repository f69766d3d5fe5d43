// One writer at a time: rank 0 of a writer holds an advisory lock on
// NAME.loom/lock, which names its host and process. A second writer gets an
// IOError naming the holder; readers are never locked out. The lock goes with
// the process (no stale locks after a crash). On storage without locks there
// is no exclusion.
#pragma once

#include <memory>
#include <string>

namespace h5loom::logengine {

class LogStore;
class StoredFile;

class WriterLock {
 public:
  WriterLock() = default;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  ~WriterLock() { release(); }

  // Takes the lock of the log-engine file `path`; IOError if another writer
  // holds it. Does nothing if NAME.loom does not exist (opening says why).
  void acquire(LogStore& store, const std::string& path);
  // Empties the lock file (no stale holder is shown once we are gone) and lets go.
  void release();

 private:
  std::unique_ptr<StoredFile> file_;
};

}  // namespace h5loom::logengine
