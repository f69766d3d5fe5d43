// The log engine's knobs (docs/engines/log.md), as parsed by make_log_engine.
#pragma once

#include <cstdint>
#include <string>

namespace h5loom::logengine {

constexpr uint64_t MiB = 1024 * 1024;

// Rounds of regions start on page boundaries, and regions are whole pages, so
// that no two ranks write into one page (the least `region_alignment`).
constexpr uint64_t kRegionAlignment = 4096;

struct Settings {
  uint64_t buffer_size = 256 * MiB;  // per rank; reaching it writes the buffers out
  // A write of one box at least this large is a "large write": it is not
  // copied, but written to the rank's region at once, or out from the caller's
  // memory at the next write-out (knob `direct_threshold`). Below it a copy
  // into the buffer, written out in spills (spill_at), costs less than a
  // system call per write, and the program does not wait on the kernel at
  // every write; above it the copy is as dear as the pwrite it saves
  // (measured: docs/engines/log.md).
  uint64_t large_write = 256 * 1024;
  // A rank's buffer that reaches this many bytes is written into its region
  // at once, if it has room (knob `spill_at`; 0: never): small writes then
  // reach storage while the program goes on, not all at the commit.
  uint64_t spill_at = 256 * 1024;
  // At a write-out, a rank whose buffer holds at least this much writes it
  // into its own region; smaller buffers go to the aggregators, which join
  // many ranks' small pieces into large writes (knob `aggregate_below`).
  uint64_t own_region_min = 1 * MiB;
  uint64_t region_size = 64 * MiB;               // per rank, the first round of regions (0: no regions)
  uint64_t region_alignment = kRegionAlignment;  // where rounds start, what region sizes are multiples of
  std::string aggregators = "node";              // "node", "all", or a count
  int aggregator_count = 0;                      // when a count was given
  bool sync = true;                              // fdatasync before each commit record
  uint64_t checksum_unit = 64 * 1024;
  bool front_file = true;
  // "auto": the engine encodes the front file itself where the tree allows
  // (front_image.hpp), HDF5's library the rest; "hdf5": always the library.
  std::string front_encoder = "auto";
  uint64_t userblock = 0;  // of new files: bytes at the start of the front file that are the application's
  uint64_t max_external_segments = 2000;
};

}  // namespace h5loom::logengine
