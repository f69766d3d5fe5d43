// h5loom error classes. Every error message names the file, the object path
// and the value that was wrong; the class says what kind of mistake it was, so
// callers (and the C and Python layers) can react to the kind, not the text.
#pragma once

#include <stdexcept>
#include <string>

namespace h5loom {

// Stable numeric codes, shared with the C API (loom_status) and Python
// (Error.code). The kinds, their codes and what they mean are the rows of
// error_codes.def, the one error table of C++, C and Python.
enum class ErrorCode : int {
  Ok = 0,
#define H5LOOM_ERROR_KIND(Kind, C_NAME, code, Class, PyBase, meaning) Kind = code,
#include "error_codes.def"
#undef H5LOOM_ERROR_KIND
};

// The base class: error_codes.def's first row (ErrorCode::Generic).
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// One class per kind of error_codes.def (NotFoundError, ExistsError, ...).
#define H5LOOM_ERROR_BASE(Kind, C_NAME, code, Class, PyBase, meaning)  // Error, above
#define H5LOOM_ERROR_KIND(Kind, C_NAME, code, Class, PyBase, meaning)                  \
  class Class : public Error {                                                          \
   public:                                                                              \
    explicit Class(const std::string& message) : Error(ErrorCode::Kind, message) {}     \
  };
#include "error_codes.def"
#undef H5LOOM_ERROR_KIND
#undef H5LOOM_ERROR_BASE

}  // namespace h5loom
