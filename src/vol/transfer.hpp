// Moving elements between an HDF5 application and the object model: element
// conversion (the application's memory type against the dataset's h5loom
// datatype) and selections (HDF5 dataspaces against h5loom Selections).
#pragma once

#include <functional>

#include "vol/vol.hpp"

namespace h5loom::vol {

// Dense elements in the object model's memory form of `dtype`: bytes for
// fixed-size types, std::string objects for variable-length strings; the
// variable-length parts they point to are theirs (released with them).
struct Elements {
  Datatype dtype;
  std::size_t n = 0;
  std::shared_ptr<std::vector<unsigned char>> bytes;
  std::shared_ptr<std::vector<std::string>> strings;

  Elements(Datatype t, std::size_t count);  // zeroed (empty strings)
  void* data() { return strings ? (void*)strings->data() : (void*)bytes->data(); }
  const void* data() const { return strings ? (const void*)strings->data() : (const void*)bytes->data(); }
  std::shared_ptr<const void> owner() const {
    return strings ? std::shared_ptr<const void>(strings) : std::shared_ptr<const void>(bytes);
  }
  // Copies `count` elements from `src` at element `from` to this at element `to`.
  void copy_from(const Elements& src, std::size_t from, std::size_t to, std::size_t count);
};

// The h5loom datatype that stores elements of the HDF5 type `type` (hdf5lib's
// mapping; IEEE half precision is Float16, and 16-bit floats of other layouts,
// which h5loom does not have, are widened to 32 bits: every value converts back exactly). DatatypeError naming `what` for the
// rest (arrays, variable-length sequences, opaque, bitfields, ...).
Datatype model_type(hid_t type, const std::string& what);
// Does an application buffer of `mem_type` hold `dtype` elements as the object model does?
bool same_type(hid_t mem_type, const Datatype& dtype);
// `n` dense elements of `mem_type` at `src`, in the object model's form of
// `dtype`. `background` gives the current elements, for conversions that keep
// members the memory type lacks (a subset of a compound's members); null: refused.
Elements to_model(hid_t mem_type, const void* src, std::size_t n, const Datatype& dtype,
                  const std::function<Elements()>& background);
// The reverse, into `dst` (dense, `src.n` elements of `mem_type`), whose
// current contents are kept where the memory type has members `src` lacks.
// Variable-length parts are allocated as the transfer properties `dxpl` say.
void from_model(const Elements& src, hid_t mem_type, void* dst, hid_t dxpl = H5P_DEFAULT);

// Strings of an application buffer (variable-length char* or fixed-length,
// padding removed) and back.
std::vector<std::string> strings_from(hid_t mem_type, const void* src, std::size_t n);
void strings_to(const std::vector<std::string>& s, hid_t mem_type, void* dst);

// ---- selections ----------------------------------------------------------------

// The file side of one transfer: a Selection the object model takes as it
// is, or (points, unions of hyperslabs) row pieces in HDF5's element order,
// read through their bounding box.
struct FileSelection {
  Selection sel = Selection::none();  // regular: the selection; irregular: the bounding box
  bool irregular = false;
  std::vector<Dims> piece_start;      // irregular: pieces along the last dimension, in order
  std::vector<uint64_t> piece_len;
  uint64_t n = 0;                     // elements selected
};
FileSelection file_selection(hid_t file_space, const Dims& shape, const std::string& what);

// The memory side: a dense buffer, or elements to gather from (write) or
// scatter into (read) the application's buffer by its selection.
struct MemorySelection {
  hid_t space = H5I_INVALID_HID;  // the application's space; dense if invalid
  uint64_t n = 0;
};
MemorySelection memory_selection(hid_t mem_space, hid_t file_space, const FileSelection& file);
// Dense copy of the selected elements of `buf` (elements of `type`).
std::vector<unsigned char> gather(const MemorySelection& m, hid_t type, const void* buf);
// Puts dense `src` elements into `buf` at the selected places.
void scatter(const MemorySelection& m, hid_t type, const void* src, void* buf);

}  // namespace h5loom::vol
