// Writes that are runs: many small writes to one dataset in one H5Dwrite.
//
// A rank often queues many writes to a dataset whose elements are each one run
// of the dataset's row-major order - a row, a piece of a row, whole planes:
// PIO's subset rearranger sends each I/O task thousands of such runs, and
// codes write row by row. One H5Dwrite each costs a call into HDF5, a
// selection, and a pwrite each; gathered into one selection (the union of the
// runs) they go out in one call that MPI-IO can turn into few writes.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "h5loom/selection.hpp"

namespace h5loom::hdf5 {

// A run of a dataset's row-major order: the elements [begin, end).
struct Run {
  uint64_t begin = 0, end = 0;
};

// The run a box selection's elements form in a dataset of `shape`, if they
// form one: all dimensions before some d select one index, dimension d any
// range, and every later dimension all of it. None for other selections.
bool run_of(const Selection& sel, const Dims& shape, Run& run);

// The fewest boxes (start, count) that cover the run [begin, end) of `shape`,
// in row-major order: at most a partial head, a block of whole slabs and a
// partial tail at each level.
std::vector<std::pair<Dims, Dims>> boxes_of(Run run, const Dims& shape);

}  // namespace h5loom::hdf5
