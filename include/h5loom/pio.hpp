// PIO's model of distributed arrays (docs/pio.md): a climate model hands each
// rank's part of a global array as a flat list of global offsets (a
// *decomposition*, PIO's `piodecomp*.dat` files), and an *I/O system* picks
// the ranks that touch the file (the I/O tasks). A *rearranger* moves the
// data between the ranks that hold it and the I/O tasks, so that each I/O
// task writes a few large pieces instead of every rank writing many small
// ones:
//  * box: the array is cut along its slowest dimension into one slab of
//    whole rows per I/O task; each I/O task writes its slab as one box (the
//    elements no rank holds - the decomposition's holes - as the fill value);
//  * subset: the ranks are dealt to the I/O tasks in contiguous groups; each
//    I/O task writes the elements its group holds, sorted by offset, as runs.
// Any engine stores the result: the rearranger writes and reads h5loom datasets.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "h5loom/h5loom.hpp"

namespace h5loom::pio {

// The ranks of `comm` that do the I/O: `num_iotasks` of them, `stride` apart,
// from rank `base` (PIO_Init_Intracomm's num_iotasks, stride, base).
struct IOSystem {
  MPI_Comm comm = MPI_COMM_WORLD;
  int num_iotasks = 1;
  int stride = 1;
  int base = 0;
  // The I/O tasks' ranks in comm; UsageError if they do not fit in it.
  std::vector<int> io_ranks() const;
};

enum class Rearranger { Box, Subset };
Rearranger rearranger_from_name(const std::string& name);  // "box" or "subset"
std::string rearranger_name(Rearranger r);

// A decomposition: the global shape (C order, slowest dimension first) and
// this rank's map - for each element it holds, in the order it holds them, the
// global offset in the flattened array (0-based; -1: a hole, an element the
// rank holds that is not stored).
class Decomposition {
 public:
  // Collective over comm. `map` counts from `base`: 0 (holes -1), or 1 as
  // PIO's Fortran maps do (holes 0). SelectionError naming the rank and the
  // offset if one lies outside the array or two ranks hold the same one.
  static Decomposition from_map(MPI_Comm comm, Dims global_shape, const std::vector<int64_t>& map, int base = 0);
  // Collective: a PIO "version 2001" file (the header, the dimensions fastest
  // first, then per task its count and 1-based offsets; any whitespace; what
  // follows the last task - PIO's stack-trace lines - ignored). The file's
  // tasks are dealt to the ranks: task t to rank t % size (a file of fewer
  // tasks than ranks leaves the other ranks empty). ConfigError naming the
  // file and what is wrong, on every rank.
  static Decomposition from_file(MPI_Comm comm, const std::string& path);

  MPI_Comm comm() const { return comm_; }
  const Dims& global_shape() const { return shape_; }
  const std::vector<int64_t>& map() const { return map_; }  // 0-based, -1 holes
  std::size_t local_size() const { return map_.size(); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  Dims shape_;
  std::vector<int64_t> map_;
};

// The plan that moves a decomposition's elements to the I/O tasks and back
// (computed once, at construction; collective over the decomposition's comm,
// which must be the I/O system's).
class Rearrangement {
 public:
  Rearrangement(const Decomposition& decomposition, const IOSystem& io, Rearranger kind);
  ~Rearrangement();
  Rearrangement(Rearrangement&&) noexcept;
  Rearrangement& operator=(Rearrangement&&) noexcept;

  // Collective: stores this rank's local_size() elements (in map order) into
  // `ds` - of the decomposition's shape, or with one more, leading dimension
  // (netCDF's record dimension), whose index `frame` is written. Only the I/O
  // tasks call the engine; the data moves at the dataset's next flush point.
  template <class T>
  void write(Dataset& ds, const std::vector<T>& local, uint64_t frame = 0) {
    write_raw(ds, datatype_of<T>(), local.data(), local.size(), frame);
  }
  // Collective: this rank's elements from `ds` into `local` (resized to
  // local_size(); holes: the dataset's fill value).
  template <class T>
  void read(Dataset& ds, std::vector<T>& local, uint64_t frame = 0) {
    local.resize(local_size());
    read_raw(ds, datatype_of<T>(), local.data(), local.size(), frame);
  }
  // The same with `n` elements of `dtype` at `local`: n must be local_size()
  // (SelectionError on every rank otherwise, before anything moves).
  void write_raw(Dataset& ds, Datatype dtype, const void* local, std::size_t n, uint64_t frame);
  void read_raw(Dataset& ds, Datatype dtype, void* local, std::size_t n, uint64_t frame);

  std::size_t local_size() const;

  Rearranger kind() const;
  // (local_size: the decomposition's, this rank's element count.)
  bool is_io_task() const;
  // The boxes (start, count in the decomposition's shape) this rank writes as an I/O task.
  std::vector<std::pair<Dims, Dims>> io_boxes() const;

 private:
  struct Plan;
  std::unique_ptr<Plan> plan_;
};

}  // namespace h5loom::pio
