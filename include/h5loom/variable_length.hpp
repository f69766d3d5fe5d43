// Elements with variable-length parts: sequences (Datatype::sequence, HDF5's
// H5T_VLEN) anywhere in an element, and variable-length strings inside a
// compound or a sequence (Datatype::has_variable_length_parts()).
//
// In memory they have HDF5's layout, so that an HDF5 program's buffers are
// h5loom's as they are: a sequence is a VarSequence {length, data} (hvl_t)
// whose data holds `length` elements; a string inside is a NUL-terminated
// `char*` (null allowed). A read allocates these parts; the program releases
// them with reclaim_variable_length (HDF5: H5Treclaim). A write never keeps
// the program's parts: the object model deep-copies them.
//
// The packed form is how such elements are stored and sent between ranks: a
// flat byte string holding no pointers, the same for equal values (no
// padding bytes), read back by unpack_variable_length, which checks every
// length against the bytes there are: a damaged packed element raises
// CorruptionError, never a read past its end or a huge allocation.
//   element   = the element's fixed-size leaves in order: scalars, enums,
//               fixed strings, references, opaque bytes as in memory;
//               compound members in declaration order; array elements in order
//   sequence  = u64 length, then `length` packed elements
//   string    = u64 byte count (no NUL), then the bytes; 2^64-1 for a null char*
// (u64 in the host's byte order, as the log engine's other records).
#pragma once

#include <cstddef>
#include <vector>

#include "h5loom/datatype.hpp"

namespace h5loom {

// How the parts of elements are allocated and released - HDF5's
// H5Pset_vlen_mem_manager pair; null functions mean malloc and free.
struct PartMemory {
  void* (*allocate)(std::size_t size, void* info) = nullptr;
  void* allocate_info = nullptr;
  void (*release)(void* p, void* info) = nullptr;
  void* release_info = nullptr;
};

// Object references in a type with variable-length parts (anywhere: a
// member, inside a sequence). Datasets and attributes refuse such types: the
// references would not be translated where files are copied or shown.
bool references_with_parts(const Datatype& t);

// `n` elements of `t` at `data`, packed (appended to `out`).
void pack_variable_length(const Datatype& t, const void* data, std::size_t n, std::vector<unsigned char>& out);
std::vector<unsigned char> pack_variable_length(const Datatype& t, const void* data, std::size_t n);

// The fewest bytes a packed element of `t` takes (at least 1): `n` elements
// need at least n times this many (checked before anything is allocated for them).
std::size_t min_packed_element_size(const Datatype& t);

// Bytes the first packed element of `t` at `packed` takes; CorruptionError
// if it is malformed or runs past `size`.
std::size_t packed_element_size(const Datatype& t, const unsigned char* packed, std::size_t size);

// `n` elements from `size` packed bytes into `out` (overwritten, padding
// zeroed), their parts allocated with `memory`. CorruptionError if the bytes
// are not exactly `n` packed elements of `t` (nothing stays allocated then).
void unpack_variable_length(const Datatype& t, const unsigned char* packed, std::size_t size, void* out,
                            std::size_t n, const PartMemory& memory = {});

// Releases the parts of `n` elements of `t` at `data` with `memory` and
// leaves them empty (null pointers, length 0).
void reclaim_variable_length(const Datatype& t, void* data, std::size_t n, const PartMemory& memory = {});

// Deep copy of `n` elements from `src` to `dst` (overwritten: release what it held first), parts allocated with `memory`.
void copy_variable_length(const Datatype& t, const void* src, void* dst, std::size_t n, const PartMemory& memory = {});

// Bytes the parts of `n` elements take in memory (what a read allocates;
// HDF5's H5Dvlen_get_buf_size counts the same, and adds the elements themselves).
std::size_t variable_length_bytes(const Datatype& t, const void* data, std::size_t n);

}  // namespace h5loom
