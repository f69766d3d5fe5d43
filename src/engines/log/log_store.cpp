// The POSIX implementation of the log engine's storage seam.
#include "engines/log/log_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>

#include "core/memory_copy.hpp"
#include "h5loom/errors.hpp"
#include "profile/profiler.hpp"

namespace h5loom::logengine {

std::string with_reason(const std::string& what, int error) { return what + ": " + std::strerror(error); }

namespace {

// Transfers are cut at 1 GiB: Linux moves at most 2 GiB - 4 KiB per call.
constexpr uint64_t kMaxTransfer = uint64_t(1) << 30;

// A transfer whose caller's memory and file offset the kernel would copy
// between slowly (page_aliased, core/memory_copy.hpp: a malloc'd buffer
// read from a page-aligned offset runs at a third of the speed) goes through
// this thread's staging buffer instead, in pieces of kStagePiece, each placed
// 64 bytes past the file offset's place in a page: then neither the kernel's
// copy nor the one to or from the caller's memory is the slow case. Below
// kStagedFrom the extra copy is not worth it.
constexpr uint64_t kStagePiece = 128 << 10, kStagedFrom = 16 << 10;

// The kernel's copy runs from the page cache to the memory for a read, the
// other way for a write (a page cache page sits where `offset` does in a page).
bool staged_read(const void* memory, uint64_t n, uint64_t offset) {
  return n >= kStagedFrom && page_aliased(reinterpret_cast<std::uintptr_t>(memory), std::uintptr_t(offset));
}
bool staged_write(const void* memory, uint64_t n, uint64_t offset) {
  return n >= kStagedFrom && page_aliased(std::uintptr_t(offset), reinterpret_cast<std::uintptr_t>(memory));
}

unsigned char* stage_for(uint64_t offset) {
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<unsigned char, Free> stage;
  if (!stage) {
    stage.reset(static_cast<unsigned char*>(std::aligned_alloc(4096, kStagePiece + 4096)));
    if (!stage) throw std::bad_alloc();
  }
  return stage.get() + ((offset + 64) & 4095);
}

class PosixFile final : public StoredFile {
 public:
  PosixFile(std::string path, int fd, bool profiled) : StoredFile(std::move(path)), fd_(fd), profiled_(profiled) {}
  ~PosixFile() override { ::close(fd_); }

  void write(const void* data, uint64_t n, uint64_t offset, const std::string& what) override {
    Trace trace(*this, profile::Kind::Write, "pwrite", offset, n);
    auto* p = static_cast<const unsigned char*>(data);
    const bool staged = staged_write(p, n, offset);
    while (n > 0) {
      const unsigned char* from = p;
      uint64_t want = std::min(n, kMaxTransfer);
      if (staged) {
        want = std::min(n, kStagePiece);
        unsigned char* stage = stage_for(offset);
        copy_bytes(stage, p, want);
        from = stage;
      }
      ssize_t k = ::pwrite(fd_, from, want, static_cast<off_t>(offset));
      if (k < 0) {
        if (errno == EINTR) continue;
        throw IOError(with_reason(what, errno));
      }
      p += k, n -= uint64_t(k), offset += uint64_t(k);
    }
  }

  void read(void* data, uint64_t n, uint64_t offset, const std::string& what) override {
    Trace trace(*this, profile::Kind::Read, "pread", offset, n);
    auto* p = static_cast<unsigned char*>(data);
    const bool staged = staged_read(p, n, offset);
    while (n > 0) {
      unsigned char* into = staged ? stage_for(offset) : p;
      ssize_t k = ::pread(fd_, into, std::min(n, staged ? kStagePiece : kMaxTransfer), static_cast<off_t>(offset));
      if (k < 0) {
        if (errno == EINTR) continue;
        throw IOError(with_reason(what, errno));
      }
      if (k == 0) throw CorruptionError(what + ": the file ends early (truncated?)");
      if (staged) copy_bytes(p, into, uint64_t(k));
      p += k, n -= uint64_t(k), offset += uint64_t(k);
    }
  }

  uint64_t read_some(void* data, uint64_t n, uint64_t offset) override {
    ssize_t k = ::pread(fd_, data, std::min(n, kMaxTransfer), static_cast<off_t>(offset));
    return k > 0 ? uint64_t(k) : 0;
  }

  int sync(bool with_metadata) override {
    Trace trace(*this, profile::Kind::Meta, with_metadata ? "fsync" : "fdatasync", 0, 0);
    return (with_metadata ? ::fsync(fd_) : ::fdatasync(fd_)) == 0 ? 0 : errno;
  }

  int truncate(uint64_t size) override { return ::ftruncate(fd_, static_cast<off_t>(size)) == 0 ? 0 : errno; }

  uint64_t size() const override {
    struct stat sb;
    return ::fstat(fd_, &sb) == 0 ? uint64_t(sb.st_size) : 0;
  }

  // Only the pages the range covers whole: a page under write-back cannot be
  // changed until it is on disk, and the next write (the next block, another
  // aggregator's run, the index record) often begins in the page where this
  // one ended. The sync at the commit writes those.
  void start_write_back(uint64_t offset, uint64_t n) override {
    constexpr uint64_t page = 4096;
    const uint64_t first = (offset + page - 1) / page * page, end = (offset + n) / page * page;
    if (end > first) ::sync_file_range(fd_, off_t(first), off_t(end - first), SYNC_FILE_RANGE_WRITE);
  }

 private:
  // The call as the profile's POSIX layer sees it (if this file is profiled).
  struct Trace {
    std::optional<profile::Scope> scope;
    Trace(const PosixFile& f, profile::Kind kind, const char* name, uint64_t offset, uint64_t n) {
      if (f.profiled_) scope.emplace(profile::Layer::Posix, kind, name, f.path(), offset, n);
    }
  };

  int fd_;
  bool profiled_;
};

class PosixStore final : public LogStore {
 public:
  Opened open(const std::string& path, Access access, bool profiled) override {
    int flags = O_CLOEXEC;
    switch (access) {
      case Access::Read: flags |= O_RDONLY; break;
      case Access::ReadWrite: flags |= O_RDWR; break;
      case Access::Create: flags |= O_RDWR | O_CREAT | O_TRUNC; break;
      case Access::OpenOrCreate: flags |= O_RDWR | O_CREAT; break;
      case Access::Directory: flags |= O_RDONLY | O_DIRECTORY; break;
    }
    Opened out;
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) out.error = errno;
    else out.file = std::make_unique<PosixFile>(path, fd, profiled);
    return out;
  }

  // An open-file-description lock: it goes with the file's last descriptor
  // (and with the process), so a crash leaves no stale lock.
  Locked lock(const std::string& path) override {
    Locked out;
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      out.error = errno;
      return out;
    }
    out.file = std::make_unique<PosixFile>(path, fd, false);
    struct flock lk {};
    lk.l_type = F_WRLCK;
    lk.l_whence = SEEK_SET;
    if (::fcntl(fd, F_OFD_SETLK, &lk) != 0) out.held_by_other = errno == EAGAIN || errno == EACCES;
    // (ENOLCK, EINVAL...: a file system without locks; the caller goes on without exclusion.)
    return out;
  }

  bool exists(const std::string& path) override {
    std::error_code ec;
    return std::filesystem::exists(path, ec);
  }

  int make_directories(const std::string& dir) override {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    return ec ? ec.value() : 0;
  }

  int remove(const std::string& path) override { return ::unlink(path.c_str()) == 0 ? 0 : errno; }

  int rename(const std::string& from, const std::string& to) override {
    return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
  }
};

}  // namespace

int fsync_path(LogStore& store, const std::string& path, LogStore::Access access) {
  auto o = store.open(path, access, /*profiled=*/true);
  return o.file ? o.file->sync(/*with_metadata=*/true) : o.error;
}

LogStore& posix_store() {
  static PosixStore store;
  return store;
}

}  // namespace h5loom::logengine
