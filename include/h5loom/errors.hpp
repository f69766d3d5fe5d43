// h5loom error classes. Every error message names the file, the object path
// and the value that was wrong; the class says what kind of mistake it was, so
// callers (and the C and Python layers) can react to the kind, not the text.
#pragma once

#include <stdexcept>
#include <string>

namespace h5loom {

// Stable numeric codes, shared with the C API (loom_status) and Python.
enum class ErrorCode : int {
  Ok = 0,
  Generic = 1,             // an error that fits no finer class
  NotFound = 2,            // missing file, group, dataset or attribute
  Exists = 3,              // creating a name that already exists
  Selection = 4,           // selection outside the dataspace, wrong rank, buffer size
  Datatype = 5,            // memory type differs from the dataset's type
  ReadOnly = 6,            // modifying a file opened read-only
  Config = 7,              // unknown engine, unknown configuration key or bad value
  Usage = 8,               // call on a closed object, calls in the wrong order
  IO = 9,                  // the storage layer failed (HDF5, MPI-IO, POSIX)
  CollectiveMismatch = 10, // ranks disagreed on a collective call
  Corruption = 11,         // a file's content fails its own consistency checks
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

#define H5LOOM_DEFINE_ERROR(Name, Code)                                   \
  class Name : public Error {                                            \
   public:                                                               \
    explicit Name(const std::string& message) : Error(Code, message) {}  \
  };

H5LOOM_DEFINE_ERROR(NotFoundError, ErrorCode::NotFound)
H5LOOM_DEFINE_ERROR(ExistsError, ErrorCode::Exists)
H5LOOM_DEFINE_ERROR(SelectionError, ErrorCode::Selection)
H5LOOM_DEFINE_ERROR(DatatypeError, ErrorCode::Datatype)
H5LOOM_DEFINE_ERROR(ReadOnlyError, ErrorCode::ReadOnly)
H5LOOM_DEFINE_ERROR(ConfigError, ErrorCode::Config)
H5LOOM_DEFINE_ERROR(UsageError, ErrorCode::Usage)
H5LOOM_DEFINE_ERROR(IOError, ErrorCode::IO)
H5LOOM_DEFINE_ERROR(CollectiveMismatchError, ErrorCode::CollectiveMismatch)
H5LOOM_DEFINE_ERROR(CorruptionError, ErrorCode::Corruption)

#undef H5LOOM_DEFINE_ERROR

}  // namespace h5loom
