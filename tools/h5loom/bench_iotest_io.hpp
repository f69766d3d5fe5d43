// How `h5loom bench iotest` reaches storage: through h5loom's object model
// (--api h5loom, the default) or through HDF5's C API as hdf5-iotest itself
// does (--api hdf5) - natively, or through h5loom's VOL connector with an
// engine configuration - so that one run compares them (docs/benchmarks.md).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include <h5loom/types.hpp>

namespace h5loom::bench {

// One case of the sweep: its dataset rank and order, and the HDF5 properties it varies.
struct IotestCase {
  int rank;                 // dataset rank 2, 3, 4
  bool step_first;          // slowest dimension: step, else array
  bool chunked, fill;
  uint64_t align_inc, align_thr, meta_block;
  std::string libver, io;   // earliest|latest, independent|collective
};

// One file's tiles: create, then datasets and writes, close; open, reads, close.
class TileIO {
 public:
  virtual ~TileIO() = default;
  virtual void create(const std::string& path) = 0;
  virtual void create_dataset(const std::string& dataset, const Dims& shape, const Dims& chunk) = 0;
  // This rank's tile of doubles at `start` of `count` (the last two dimensions > 1).
  virtual void write(const std::string& dataset, const Dims& start, const Dims& count, const double* tile) = 0;
  virtual void open(const std::string& path) = 0;
  virtual void read(const std::string& dataset, const Dims& start, const Dims& count, double* tile) = 0;
  // Closes the file (the writes land here for engines that defer them).
  virtual void close() = 0;
  // A time step's writes are made, and a compute phase follows (--compute):
  // a flush point that returns at once, so that an async engine moves them
  // meanwhile (H5Fflush_async through HDF5's API).
  virtual void end_step() = 0;
};

// Through h5loom's object model with engine configuration `engine` (the case's
// properties become hdf5 engine knobs). With `lend` a write lends the tile
// (write(span): it must stay unchanged until the next flush has completed),
// else it is copied (write_copy).
std::unique_ptr<TileIO> object_model_io(const std::string& engine, const IotestCase& k, MPI_Comm comm, bool lend);
// Through HDF5's C API with the case's property lists; `engine` "native" is
// HDF5's own connector, anything else an h5loom engine configuration reached
// through the VOL connector (found as `h5loom config --vol-env` finds it).
std::unique_ptr<TileIO> hdf5_api_io(const std::string& engine, const IotestCase& k, MPI_Comm comm);

}  // namespace h5loom::bench
