// How each dataset of the log appears in the front file (front_file.hpp):
// mapped onto the log's bytes with external storage or a virtual dataset, a
// plain dataset of fill values, or left in the log only - and the 1-D views of
// the log that the virtual datasets map from.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engines/log/metadata.hpp"
#include "h5loom/h5loom.hpp"

namespace h5loom::logengine {

class Index;

// The front file's group of the arrays that virtual datasets map (LogArrays).
constexpr const char* kFrontSources = "/_h5loom_blocks";

struct FrontPlan {
  enum Kind { Unwritten, External, Virtual, LogOnly } kind = LogOnly;
  std::vector<ExternalSegment> segments;  // External: the dataset's bytes, in order
  struct Box {
    Dims start, count;
    uint64_t offset = 0;  // of its first element in the log
  };
  std::vector<Box> boxes;  // Virtual: one per block
  std::string why_not;     // LogOnly: the reason, for the link's target
};

// Dataset `id` of the tree: a plain dataset of fill values if nothing of it is
// written (or every write is hidden by shrinks). External storage if its blocks
// tile it exactly once in at most 64 runs of the log (cheap to create, readable
// by any HDF5). Else a
// virtual dataset of its blocks if they do not overlap, number at most
// `max_pieces`, and no shrink hides part of one (never-written elements read as
// the fill value, as in the log). Else the data stays in the log only.
FrontPlan plan_front_dataset(const Tree& tree, const Index& index, int id, const std::string& log_name,
                             uint64_t max_pieces);

// The log seen as 1-D arrays, one per element type and byte offset modulo its
// size (so that every block starts at a whole element of one): each an
// external-storage dataset of one segment of the log, whose runs the virtual
// datasets map onto their boxes. A front file then costs one dataset per
// array, not one per block (2-D tiles of a hundred datasets made two hundred).
class LogArrays {
 public:
  explicit LogArrays(std::string log_name) : log_name_(std::move(log_name)) {}
  // First, every block that will be mapped: `elements` of `dtype` at `offset`.
  void add(const Datatype& dtype, uint64_t offset, uint64_t elements);
  // Then the mapping of such a block onto the box [start, start + count).
  VirtualMapping mapping(const Datatype& dtype, const Dims& start, const Dims& count, uint64_t offset) const;
  // The arrays to create (name under kFrontSources, spec), each as long as its last block needs.
  std::vector<std::pair<std::string, DatasetSpec>> arrays() const;

 private:
  struct Array {
    Datatype dtype;
    uint64_t base = 0;  // the byte of the log where element 0 starts
    uint64_t length = 0;
  };
  std::size_t find(const Datatype& dtype, uint64_t offset) const;  // arrays_.size() if none
  static std::string name_of(std::size_t k) { return std::string(kFrontSources) + "/" + std::to_string(k); }
  std::string log_name_;
  std::vector<Array> arrays_;
};

}  // namespace h5loom::logengine
