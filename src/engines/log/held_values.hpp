// Datasets the log engine keeps in its metadata instead of its data log:
// variable-length strings and elements with variable-length parts (sequences,
// strings inside compounds: no fixed element size to place in blocks; held
// packed, variable_length.hpp) and
// elements holding object references (their tokens are the log's, and the
// front file must show HDF5's: it writes them translated, which needs their
// values when it is built, before the last epoch's blocks are on disk).
// Their writes travel with the metadata operations of the epoch (an
// `elements` operation per write, every rank's, in rank order), so they are
// committed, replayed and checked like the rest of the metadata. They are
// meant for what such datasets hold - names, labels, dimension-scale lists -
// not bulk data: every rank keeps them in memory.
#pragma once

#include <cstdint>
#include <functional>

#include "engines/log/metadata.hpp"
#include "h5loom/engine.hpp"

namespace h5loom::logengine {

// Whether the log keeps datasets of this type in its metadata.
inline bool held_in_metadata(const Datatype& t) {
  return t.is_varstring() || t.has_references() || t.has_variable_length_parts();
}

// The `elements` operation: `n` elements of `dtype` at `data` (std::string
// elements for variable-length strings) for `sel` of the dataset at `path`.
Json elements_op(const std::string& path, const Selection& sel, const Datatype& dtype, const void* data, uint64_t n);

// Calls fn(index in the dataset, index in the dense buffer) for every element
// of `sel` of a dataset of `shape` (both row-major).
void for_each_selected(const Selection& sel, const Dims& shape, const std::function<void(uint64_t, uint64_t)>& fn);

// Applies an `elements` operation to the dataset `id` (apply_op's part);
// `bad(why)` raises CorruptionError for a damaged one.
void apply_elements(Tree& tree, int id, const Json& op, const std::function<void(const std::string&)>& bad);
// After the dataset `id` changed shape from `old_shape`: its held elements move to
// their new row-major places, and those outside the new shape are gone.
void regrid_held(Tree& tree, int id, const Dims& old_shape);
// Reads `sel` of the held dataset `id` into the dense buffer `out` (std::string
// elements for variable-length strings; parts allocated with malloc);
// unwritten elements read as "", empty sequences or zeros.
void read_held(const Tree& tree, int id, const Selection& sel, void* out);

// Collective, at a flush point: every rank's held writes (put since the last
// one) become `elements` operations (call it only when the tree has a held
// dataset: Tree::held_datasets, the same on every rank), rank 0's first, recorded on every rank
// through `record`.
void share_held_writes(MPI_Comm comm, std::vector<engine::Write>& mine, const std::function<void(Json)>& record);

}  // namespace h5loom::logengine
