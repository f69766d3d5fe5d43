// Built-in I/O profiling (H5LOOM_PROFILE=DIR): Darshan-style counters and a
// Recorder-style trace of every call, per rank, at the layers h5loom sees.
// The files it writes are specified in docs/formats/profile.md.
#pragma once

#include <cstdint>
#include <string>

#include "h5loom/selection.hpp"
#include "h5loom/types.hpp"

namespace h5loom::profile {

enum class Layer : uint8_t { Api = 0, Engine = 1, Posix = 2, MpiIo = 3 };
enum class Kind : uint8_t { Read = 0, Write = 1, Meta = 2 };

// True when H5LOOM_PROFILE names a directory (read once).
bool enabled();

// Records one call that ran from start_ns to end_ns (unix time, ns).
// For reads and writes, offset and size are in bytes (the file offset for
// system calls, the byte offset of the selection's first element in its
// dataset for the API and engine layers).
// counted: false when the accesses it carried were counted with count() already.
void record(Layer layer, Kind kind, const char* name, const std::string& file, uint64_t offset, uint64_t size,
            int64_t start_ns, int64_t end_ns, bool counted = true);
// Counts one access in the counters without a trace event of its own (the
// requests of an engine write batch, which is traced as one call).
void count(Layer layer, Kind kind, const std::string& file, uint64_t offset, uint64_t size);

int64_t now_ns();

// The byte offset, in a dataset's row-major order, of a selection's first
// element: the offset the api and engine layers record.
uint64_t byte_offset(const Selection& sel, const DatasetInfo& info);

// Times a scope and records it when it ends (if profiling is on).
class Scope {
 public:
  Scope(Layer layer, Kind kind, const char* name, std::string file, uint64_t offset = 0, uint64_t size = 0)
      : on_(enabled()), layer_(layer), kind_(kind), name_(name), file_(on_ ? std::move(file) : std::string()),
        offset_(offset), size_(size), start_(on_ ? now_ns() : 0) {}
  // The object `object` of file `file`, named "file:object" - joined only when
  // profiling is on, so that the calls pay nothing for it otherwise.
  Scope(Layer layer, Kind kind, const char* name, const std::string& file, const std::string& object,
        uint64_t offset = 0, uint64_t size = 0)
      : Scope(layer, kind, name, enabled() ? file + ":" + object : std::string(), offset, size) {}
  ~Scope() {
    if (on_) record(layer_, kind_, name_, file_, offset_, size_, start_, now_ns());
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  bool on_;
  Layer layer_;
  Kind kind_;
  const char* name_;
  std::string file_;
  uint64_t offset_, size_;
  int64_t start_;
};

// Writes this rank's files: the trace records since the last call, and - when
// forced, or a second has passed since it was last written - the counters.
// Called at every file close (not forced) and at exit (forced).
void dump(bool force = false);

}  // namespace h5loom::profile
