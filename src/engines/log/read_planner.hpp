// The read planner: a rank's selection of a dataset, read from the log. The
// index gives the blocks that meet each box of the selection; they are
// applied oldest first (a later write wins), each reading only the checksum
// units it touches and checking them. Large blocks that land whole in the
// output are read straight into it; the others go through a staging buffer,
// in reads merged when they lie close together in the log.
#pragma once

#include <cstdint>
#include <string>

#include "h5loom/selection.hpp"

namespace h5loom::logengine {

class Index;
class StoredFile;
struct Tree;

class ReadPlanner {
 public:
  // `where` names the file in messages; blocks carry one CRC32C per `checksum_unit` bytes.
  ReadPlanner(const Tree& tree, const Index& index, StoredFile& log, uint64_t checksum_unit, std::string where)
      : tree_(tree), index_(index), log_(log), unit_(checksum_unit), where_(std::move(where)) {}

  // Reads `sel` of the dataset at `path` into the dense buffer `out`;
  // elements no block covers read as 0. A block whose bytes fail their
  // checksum raises CorruptionError naming it.
  void read(const std::string& path, const Selection& sel, void* out) const;

 private:
  void read_selection(const std::string& path, const Selection& sel, void* out) const;
  bool read_through_bounding_box(const std::string& path, const Selection& sel, void* out) const;

  const Tree& tree_;
  const Index& index_;
  StoredFile& log_;
  uint64_t unit_;
  std::string where_;
};

}  // namespace h5loom::logengine
