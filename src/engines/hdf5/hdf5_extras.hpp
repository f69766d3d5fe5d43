// Operations of the hdf5 engine beyond the engine interface, for other engines
// that write HDF5 files through it (the log engine's front file). The handle
// must come from an engine made by make_hdf5_engine.
#pragma once

#include <string>
#include <vector>

#include "h5loom/engine.hpp"

namespace h5loom::hdf5 {

// A piece of a dataset's bytes kept in another file (HDF5 external storage).
struct ExternalSegment {
  std::string file;  // as stored: relative names resolve against HDF5_EXTFILE_PREFIX or the working directory
  uint64_t offset = 0, size = 0;
};

// A contiguous dataset whose bytes, in row-major order, are the concatenation
// of the segments (H5Pset_external).
void create_external_dataset(engine::FileHandle& f, const std::string& path, Datatype dtype, const Dims& shape,
                             const std::vector<ExternalSegment>& segments);
// A soft link at `path` to `target` (which need not exist).
void create_soft_link(engine::FileHandle& f, const std::string& path, const std::string& target);

}  // namespace h5loom::hdf5
