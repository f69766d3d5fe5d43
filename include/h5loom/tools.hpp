// Whole-file operations behind `h5loom convert` and `h5loom verify`.
#pragma once

#include <string>
#include <vector>

#include "h5loom/h5loom.hpp"

namespace h5loom {

// Copies every group, attribute and dataset (type, shape, maximum shape,
// layout, chunks, values) of `in` into a new file `out`. Collective over the
// communicator of the options; the ranks share the data movement. The default
// engines: the one that wrote `in`, and hdf5 for `out` (a stock HDF5 file).
void convert_file(const std::string& in, const std::string& out, const FileOptions& in_options = {},
                  const FileOptions& out_options = {});

struct VerifyResult {
  std::string engine;
  uint64_t epochs = 0, blocks = 0, data_bytes = 0;
  uint64_t torn_log_bytes = 0, torn_commit_bytes = 0;  // log engine: an interrupted tail (ignored)
  std::vector<std::string> errors;                     // empty: the file is sound
  bool ok() const { return errors.empty(); }
};

// Checks a whole file. Log-engine files: every header, commit record, index
// record and data checksum, and reports a torn tail. Other files: opens the
// file and reads every dataset. Runs on the calling process alone.
VerifyResult verify_file(const std::string& path);

}  // namespace h5loom
