#include "engines/log/writer_lock.hpp"

#include <unistd.h>

#include <cerrno>

#include "engines/log/format.hpp"
#include "engines/log/log_store.hpp"
#include "h5loom/errors.hpp"

namespace h5loom::logengine {

void WriterLock::acquire(LogStore& store, const std::string& path) {
  const std::string p = logfmt::directory_of(path) + "/lock";
  auto locked = store.lock(p);
  if (!locked.file && locked.error == ENOENT) return;  // no log here: opening it says so
  if (!locked.file) throw IOError(with_reason("cannot open the writer lock " + p, locked.error));
  if (locked.held_by_other) {
    char holder[256] = {};
    const uint64_t n = locked.file->read_some(holder, sizeof holder - 1, 0);
    std::string who = n > 0 ? std::string(holder, std::size_t(n)) : std::string("an unknown process");
    while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
    throw IOError("cannot open log file '" + path + "' for writing: it is being written by " + who + " (lock " + p +
                  "); one writer at a time");
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string who = "host " + std::string(host) + ", pid " + std::to_string(::getpid()) + "\n";
  // Best effort: the lock holds whether or not its holder could be written down.
  if (locked.file->truncate(0) == 0) {
    try {
      locked.file->write(who.data(), who.size(), 0, p);
    } catch (const Error&) {
    }
  }
  file_ = std::move(locked.file);
}

void WriterLock::release() {
  if (!file_) return;
  (void)file_->truncate(0);  // no stale holder is shown once we are gone
  file_.reset();             // closing it releases the lock
}

}  // namespace h5loom::logengine
