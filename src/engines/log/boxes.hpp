// N-D boxes for the log engine: selections cut into boxes, box intersection,
// and copies of a sub-box between two row-major arrays.
#pragma once

#include <cstdint>
#include <vector>

#include "h5loom/selection.hpp"

namespace h5loom::logengine {

// One dense box of a selection: elements [start, start+count) of the dataset,
// found at dense_start in the selection's dense (row-major) buffer.
struct PlacedBox {
  Dims start, count, dense_start;
};

// The boxes of a selection of a dataset of `shape`, in dense-buffer order.
// Blocks that touch (stride == block) are merged along their dimension.
std::vector<PlacedBox> selection_boxes(const Selection& sel, const Dims& shape);

// The intersection of boxes a and b; false if it is empty.
bool intersect(const Dims& a_start, const Dims& a_count, const Dims& b_start, const Dims& b_count, Dims& start,
               Dims& count);

// True if box b continues box a in row-major order: a's elements followed by
// b's are, in row-major order, the elements of one box (a grown along one
// dimension; every dimension before it has extent 1 in both). Then `a_count`
// is grown to that box. Used to coalesce consecutive small writes (a row at a
// time, a run of a 1-D array) into one block.
bool append_box(const Dims& a_start, Dims& a_count, const Dims& b_start, const Dims& b_count);

// Copies the box [src_start, +count) of the row-major array src (of src_shape)
// to [dst_start, +count) of dst (of dst_shape). Byte positions in src are
// reduced by src_byte_shift (for a buffer that holds only part of the array).
void copy_subbox(const unsigned char* src, const Dims& src_shape, const Dims& src_start, unsigned char* dst,
                 const Dims& dst_shape, const Dims& dst_start, const Dims& count, std::size_t element_size,
                 uint64_t src_byte_shift = 0);

}  // namespace h5loom::logengine
