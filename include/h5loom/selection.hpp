// Selections: which elements of a dataset a rank transfers.
//
// A hyperslab follows HDF5's definition: in each dimension d, `count[d]` blocks
// of `block[d]` elements, the blocks `stride[d]` apart, starting at `start[d]`.
// The memory buffer that goes with a selection is dense and row-major, of shape
// count[d] * block[d] (the selected elements in file order).
#pragma once

#include <string>

#include "h5loom/types.hpp"

namespace h5loom {

class Selection {
 public:
  enum class Kind { All, None, Hyperslab };

  // The whole dataset.
  static Selection all() { return Selection(Kind::All); }
  // Nothing: for a rank that takes part in a collective transfer without data.
  static Selection none() { return Selection(Kind::None); }
  // A dense box: `count` elements from `start` in each dimension.
  static Selection box(Dims start, Dims count);
  // HDF5-style regular hyperslab; empty stride/block mean all ones.
  static Selection hyperslab(Dims start, Dims count, Dims stride = {}, Dims block = {});

  Kind kind() const { return kind_; }
  const Dims& start() const { return start_; }
  const Dims& count() const { return count_; }
  // All ones unless given (shared, not stored: a box is the common case, and
  // a code writing row by row makes one per write).
  const Dims& stride() const { return stride_.empty() ? ones(start_.size()) : stride_; }
  const Dims& block() const { return block_.empty() ? ones(start_.size()) : block_; }

  // Throws SelectionError (naming `object`) unless the selection fits a dataset of `shape`.
  void validate(const Dims& shape, const std::string& object) const;
  // The dense shape of the selected elements, given the dataset's shape.
  Dims selected_shape(const Dims& shape) const;
  uint64_t num_elements(const Dims& shape) const;
  // True if the selection is one dense box (stride and block do not leave gaps).
  bool is_box() const;

  std::string to_string() const;

 private:
  explicit Selection(Kind k) : kind_(k) {}
  static const Dims& ones(std::size_t n);
  Kind kind_;
  Dims start_, count_, stride_, block_;  // stride_, block_ empty: all ones
};

}  // namespace h5loom
