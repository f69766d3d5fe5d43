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
// One box of a virtual dataset whose bytes, row-major, are one run of another file.
struct VirtualBlock {
  Dims start, count;
  ExternalSegment bytes;
};

// A virtual dataset (HDF5 1.10's VDS) made of boxes: each box is a small
// contiguous dataset `<sources>/<k>` with external storage (one segment),
// mapped onto its place. Elements no box covers read as the fill value 0.
// Costs one dataset per box, whatever the shape of the box; external storage
// alone needs a segment per contiguous run (a 256-row tile of a wider
// dataset is 256 runs), and HDF5 copies the whole list at every
// H5Pset_external, so that many-run lists cost quadratic time.
void create_virtual_dataset(engine::FileHandle& f, const std::string& path, Datatype dtype, const Dims& shape,
                            const std::vector<VirtualBlock>& boxes, const std::string& sources);

// A soft link at `path` to `target` (which need not exist).
void create_soft_link(engine::FileHandle& f, const std::string& path, const std::string& target);

}  // namespace h5loom::hdf5
