// Whole-file operations behind `h5loom convert`, `verify`, `info` and the
// benchmarks. They work for every engine: the engine that wrote a file is
// found by asking every registered engine (engine::detect_engine).
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

using VerifyResult = engine::VerifyReport;

// Checks a whole file: the engine's own checks (the log engine: every header,
// commit record, index record and data checksum, and a torn tail), else opens
// the file and reads every dataset. Runs on the calling process alone.
VerifyResult verify_file(const std::string& location);

// The storage an existing file is made of, by the engine that wrote it (or
// `engine`, a name or configuration, if given); empty if nothing is there.
std::vector<engine::StoragePiece> file_storage(const std::string& location, const std::string& engine = "");
// Removes every piece of an existing file; NotFoundError if nothing is there.
void remove_file(const std::string& location, const std::string& engine = "");

}  // namespace h5loom
