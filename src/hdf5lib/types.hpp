// h5loom datatypes as HDF5 datatypes and back.
#pragma once

#include "hdf5lib/hid.hpp"

namespace h5loom::hdf5lib {

// The HDF5 type of elements in memory: native scalars, compounds at their
// C offsets, NUL-padded fixed strings, enums over their native base.
Hid memory_type(const Datatype& t);
// The HDF5 type stored in files: little-endian standard scalars whatever the
// host, the same compound layout (so that a memory buffer is a file element),
// strings and enums as in memory.
Hid file_type(const Datatype& t);
// The h5loom datatype of an HDF5 type; DatatypeError naming `object` for the
// HDF5 types h5loom does not model (variable-length, references, arrays, ...).
Datatype datatype_of_hdf5(hid_t type, const std::string& object);
// The path of the committed datatype `type` is (a dataset's or attribute's
// type shared from one); empty if it is not committed or no path leads to it.
std::string committed_type_path(hid_t type, const std::string& what);
// A 2-byte float of IEEE binary16's layout (Datatype::Float16; not, e.g., a
// float of 16 bits with another exponent size).
bool is_ieee_half(hid_t type);

// Variable-length strings between h5loom's memory form (std::string elements)
// and HDF5's (char* pointers, which HDF5 allocates on reads).
std::vector<const char*> string_pointers(const std::string* strings, std::size_t n);
// Moves HDF5-allocated strings into `out` and frees them (null reads as "").
void take_strings(std::vector<char*>& from, std::string* out);

}  // namespace h5loom::hdf5lib
