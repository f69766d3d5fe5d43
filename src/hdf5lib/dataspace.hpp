// h5loom selections as HDF5 dataspace selections.
#pragma once

#include "hdf5lib/hid.hpp"
#include "h5loom/selection.hpp"

namespace h5loom::hdf5lib {

// Applies `sel` to the file dataspace `file_space` (of a dataset shaped
// `shape`) and returns the matching dense memory dataspace.
Hid select(hid_t file_space, const Selection& sel, const Dims& shape);

}  // namespace h5loom::hdf5lib
