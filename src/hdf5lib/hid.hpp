// HDF5 C-API plumbing shared by everything in h5loom that calls HDF5 (the hdf5
// engine, the log engine's front file): identifiers that close themselves,
// HDF5 errors turned into h5loom errors, dimension conversions.
#pragma once

#include <hdf5.h>

#include <string>
#include <utility>
#include <vector>

#include "h5loom/types.hpp"

namespace h5loom::hdf5lib {

// The deepest message of HDF5's error stack (the actual cause, not the API
// call); clears the stack.
std::string hdf5_error_text();
// Raises IOError: `what` failed, with HDF5's reason.
[[noreturn]] void fail(const std::string& what);

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Hid {
 public:
  Hid() = default;
  Hid(hid_t id, herr_t (*closer)(hid_t)) : id_(id), closer_(closer) {}
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  Hid(Hid&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = H5I_INVALID_HID; }
  Hid& operator=(Hid&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(closer_, o.closer_);
    return *this;
  }
  ~Hid() {
    if (id_ >= 0 && closer_) closer_(id_);
  }
  hid_t get() const { return id_; }
  // Gives up ownership without closing.
  hid_t release() {
    hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*closer_)(hid_t) = nullptr;
};

// An identifier HDF5 returned, owned; fail(what) if it is invalid.
Hid checked(hid_t id, herr_t (*closer)(hid_t), const std::string& what);
void check(herr_t status, const std::string& what);

std::vector<hsize_t> to_hsize(const Dims& d);  // kUnlimited becomes H5S_UNLIMITED
Dims from_hsize(const hsize_t* d, int n);

}  // namespace h5loom::hdf5lib
