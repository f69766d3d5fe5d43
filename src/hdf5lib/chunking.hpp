// Chunk dimensions as h5loom chooses them for HDF5 datasets: the hdf5 engine's,
// and the log engine's (which keeps them for conversion to native HDF5).
#pragma once

#include <string>

#include "h5loom/types.hpp"

namespace h5loom::hdf5lib {

// About `target_bytes` per chunk, cut along the slowest dimension first (as the
// HDF5 DAOS connector does): faster dimensions are kept whole as long as one
// slab of them fits, so a chunk is a run of whole rows whenever possible.
// Extendable dimensions count as open-ended, so a dataset created empty and
// grown step by step still gets chunks of about the target size.
Dims auto_chunk_dims(const Dims& shape, const Dims& max_shape, std::size_t element_size,
                     uint64_t target_bytes);

// The chunks a new dataset gets, or none (empty) for a contiguous one: chunked
// when asked, or - with layout_auto - when extendable or chunked_by_default;
// never when a fixed dimension is 0. The chunks asked for, else automatic ones
// of about target_bytes. Throws SelectionError (naming `path`) if a chunk
// exceeds max_shape (the spec's, or its shape when fixed).
Dims resolve_chunks(const std::string& path, const DatasetSpec& spec, bool chunked_by_default, uint64_t target_bytes);

}  // namespace h5loom::hdf5lib
