// Which chunks of a regular chunk grid a selection touches, and where its
// elements are: in the chunk, and in the dense buffer that goes with the
// selection (selection.hpp). A hyperslab is a product of one index set per
// dimension, and so is a chunk, so everything is worked out per dimension.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "h5loom/selection.hpp"

namespace h5loom::zarr {

// `n` consecutive selected indices of one dimension: from `at` in the chunk
// (counted from the chunk's start), the `mem`-th selected index on.
struct Run {
  uint64_t at = 0, mem = 0, n = 0;
};

// The selected indices of one dimension that fall in chunk `index` along it.
struct ChunkSlice {
  uint64_t index = 0;
  std::vector<Run> runs;
  uint64_t count() const;  // selected indices in it
};

// Per dimension, the chunks `sel` touches in a dataset of `shape` cut into
// `chunk`s, in order. Empty dimensions (or Selection::none) give no slices.
std::vector<std::vector<ChunkSlice>> slice_by_chunks(const Selection& sel, const Dims& shape, const Dims& chunk);

// One chunk the selection touches: a slice per dimension.
using ChunkPart = std::vector<const ChunkSlice*>;

// Calls fn for every chunk the selection touches (the product of the slices).
void for_each_chunk(const std::vector<std::vector<ChunkSlice>>& slices, const std::function<void(const ChunkPart&)>& fn);

// Calls fn(chunk_offset, mem_offset, n) (in elements) for each run of the last
// dimension of `part`: the elements [chunk_offset, +n) of a dense chunk of
// shape `chunk` are the elements [mem_offset, +n) of the dense buffer of
// shape `mem` (the selection's selected_shape).
void for_each_row(const ChunkPart& part, const Dims& chunk, const Dims& mem,
                  const std::function<void(uint64_t, uint64_t, uint64_t)>& fn);

// The same part with its `mem` positions counted within the part alone (its
// own dense buffer: the shape `packed_shape(part)`), for sending it on.
std::vector<ChunkSlice> packed(const ChunkPart& part);
Dims packed_shape(const ChunkPart& part);

}  // namespace h5loom::zarr
