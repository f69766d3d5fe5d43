// The hdf5 engine's knobs and their defaults (docs/engines/hdf5.md).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <map>
#include <string>

#include "engine/registry.hpp"

namespace h5loom::hdf5 {

constexpr uint64_t MiB = 1024 * 1024;

struct Settings {
  bool collective_transfer = false;  // measured: docs/engines/hdf5.md
  bool collective_metadata = true;
  uint64_t alignment_threshold = 1 * MiB;
  uint64_t alignment = 1 * MiB;
  uint64_t meta_block_size = 64 * 1024;
  bool chunked_by_default = false;
  uint64_t chunk_target_bytes = 1 * MiB;
  // HDF5's default: no fill values are written at allocation (h5loom sets no
  // fill value), and never-written elements read as 0. "never" leaves a read of
  // storage never allocated untouched: readers then see whatever their buffer held.
  std::string fill_time = "ifset";
  std::string libver_low = "earliest";
  std::string driver = "mpio";  // or "sec2" (POSIX) or "core" (in memory, written at close): one rank only
  bool sync = false;            // make the file durable at close (as the log engine does by default)
  uint64_t userblock = 0;       // of new files (H5Pset_userblock)
  std::map<std::string, std::string> mpi_info;

  // Reads the engine's section of the configuration (docs/engines/hdf5.md).
  static Settings from(engine::Knobs& k);
};


// HDF5's library version bound of a libver_low name.
H5F_libver_t libver_of(const std::string& name);

}  // namespace h5loom::hdf5
