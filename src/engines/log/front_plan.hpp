// How each dataset of the log appears in the front file (front_file.hpp):
// mapped onto the log's bytes with external storage or a virtual dataset, a
// plain dataset of fill values, or left in the log only - and the 1-D arrays of
// the log's bytes that the virtual datasets map from.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engines/log/metadata.hpp"
#include "h5loom/h5loom.hpp"

namespace h5loom::logengine {

class Index;

// The front file's group of the arrays that virtual datasets map (LogArrays).
constexpr const char* kFrontSources = "/_h5loom_blocks";

// `size` bytes at `offset` of the log.
struct LogBytes {
  uint64_t offset = 0, size = 0;
};

struct FrontPlan {
  enum Kind { Unwritten, External, Virtual, LogOnly } kind = LogOnly;
  // External: the dataset's bytes, in order, in the log (not ExternalSegments:
  // a file name per segment cost an allocation each, thousands per file).
  std::vector<LogBytes> segments;
  struct Box {
    Dims start, count;
    uint64_t offset = 0;  // of its first element in the log
    // Repeated: `repeat` copies of the box, each the next one along dimension
    // `dim` of the dataset, `stride` bytes further on in the log (a rank's
    // tile of one array at every step, those of the other arrays in between).
    uint64_t repeat = 1, stride = 0;
    std::size_t dim = 0;
  };
  std::vector<Box> boxes;  // Virtual: blocks, joined where they continue or repeat each other
  std::string why_not;     // LogOnly: the reason, for the link's target
};

// Dataset `id` of the tree: a plain dataset of fill values if nothing of it is
// written (or every write is hidden by shrinks). Blocks that continue each
// other in the log and in the dataset (a rank's tiles of successive steps)
// are joined into one box first. External storage if the boxes tile it
// exactly once in at most `max_runs` runs of the log (readable by any HDF5;
// kFewExternalSegments for HDF5's library, which makes a dataset of 64 of
// them faster than a virtual dataset of two boxes). Else a virtual dataset of its boxes if they do not overlap,
// number at most `max_pieces`, and no shrink hides part of one (never-written
// elements read as the fill value, as in the log). Else the data stays in the
// log only.
constexpr uint64_t kFewExternalSegments = 64;
FrontPlan plan_front_dataset(const Tree& tree, const Index& index, int id, const std::string& log_name,
                             uint64_t max_pieces, uint64_t max_runs = kFewExternalSegments);

// The bytes of the blocks that virtual datasets map, as 1-D arrays: each
// array a run of the log that mapped blocks of one element type fill end to
// end (an external-storage dataset of one segment), each block a run of its
// array. Only mapped bytes appear - no index record, no block that was
// overwritten or hidden by a shrink - and a front file costs one dataset per
// run, not one per block (2-D tiles of a hundred datasets made two hundred).
class LogArrays {
 public:
  struct Block {
    Datatype dtype;  // in memory: as the log holds it
    uint64_t offset = 0, elements = 0;
  };
  LogArrays(std::string log_name, std::vector<Block> blocks);
  // The mappings of a box whose blocks were given above: one (a regular
  // hyperslab if it repeats) if its copies lie in one array, else one per copy.
  std::vector<VirtualMapping> mappings(const Datatype& dtype, const FrontPlan::Box& box) const;
  // The arrays to create: name under kFrontSources, spec.
  std::vector<std::pair<std::string, DatasetSpec>> arrays() const;

 private:
  struct Run {
    uint64_t first = 0, end = 0;  // bytes of the log
    std::size_t array = 0;        // its number
  };
  struct Runs {
    Datatype dtype;
    std::vector<Run> runs;  // by offset
  };
  static std::string name_of(std::size_t k) { return std::string(kFrontSources) + "/" + std::to_string(k); }
  std::string log_name_;
  std::map<std::string, Runs> by_type_;  // by the type's name
  std::size_t count_ = 0;
};

}  // namespace h5loom::logengine
