// Whole-file operations behind `h5loom convert`, `verify`, `info` and the
// benchmarks. They work for every engine: the engine that wrote a file is
// found by asking every registered engine (engine::detect_engine).
#pragma once

#include <string>
#include <vector>

#include "h5loom/h5loom.hpp"

namespace h5loom {

// Copies every group, attribute, dataset (type, shape, maximum shape,
// layout, chunks, fill value, values), named datatype and link of `in` into a
// new file `out`. Collective over the communicator of the options; the ranks
// share the data movement. The default engines: the one that wrote `in`, and
// hdf5 for `out` (a stock HDF5 file).
void convert_file(const std::string& in, const std::string& out, const FileOptions& in_options = {},
                  const FileOptions& out_options = {});

// What copy_object leaves out or follows (HDF5's H5Pset_copy_object flags).
struct CopyOptions {
  bool shallow = false;            // a group's members are copied, but not what is below them (H5O_COPY_SHALLOW_HIERARCHY_FLAG)
  bool attributes = true;          // false: no attributes (H5O_COPY_WITHOUT_ATTR_FLAG)
  bool expand_soft_links = false;  // a soft link inside becomes a copy of its target (H5O_COPY_EXPAND_SOFT_LINK_FLAG)
};

// Copies the object at `from_path` of `from` - a group with everything below
// it, a dataset with its values, a named datatype, with their attributes - to
// the new path `to_path` of `to` (the same file or another open one; missing
// parent groups are created). Inside the copy, soft and external links keep their targets,
// an object with several names stays one object with several names, and
// references to objects copied along name the copies; other references stay
// as they are in the same file and become null in another. Collective over
// both files (which have the same ranks). NotFoundError if `from_path` names
// nothing, ExistsError if `to_path` exists, UsageError if it lies inside
// `from_path` in the same file.
void copy_object(File& from, const std::string& from_path, File& to, const std::string& to_path,
                 const CopyOptions& options = {});

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
