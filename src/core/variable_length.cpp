// Elements with variable-length parts: packing, unpacking, copying and
// releasing them (the formats are in variable_length.hpp).
#include "h5loom/variable_length.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace h5loom {

namespace {

constexpr uint64_t kNullString = std::numeric_limits<uint64_t>::max();
// No one part may take more memory than this (1 TiB): a damaged length times a
// large element size fails as damage, not as an allocation of the impossible.
constexpr std::size_t kMaxPartBytes = std::size_t(1) << 40;

// The type of an element inside a variable-length part (a compound's member,
// a sequence's element): a variable-length string is a char* there.
std::size_t part_size(const Datatype& t) { return member_size(t); }

void put_u64(std::vector<unsigned char>& out, uint64_t v) {
  const auto* b = reinterpret_cast<const unsigned char*>(&v);
  out.insert(out.end(), b, b + sizeof v);
}

// ---- packing ----------------------------------------------------------------------

void pack_part(const Datatype& t, const unsigned char* p, std::vector<unsigned char>& out);

void pack_string(const unsigned char* p, std::vector<unsigned char>& out) {
  const char* s = nullptr;
  std::memcpy(&s, p, sizeof s);
  if (!s) return put_u64(out, kNullString);
  const std::size_t n = std::strlen(s);
  put_u64(out, n);
  out.insert(out.end(), s, s + n);
}

void pack_part(const Datatype& t, const unsigned char* p, std::vector<unsigned char>& out) {
  switch (t.type_class()) {
    case Datatype::Class::VarString: return pack_string(p, out);
    case Datatype::Class::Sequence: {
      VarSequence v;
      std::memcpy(&v, p, sizeof v);
      const std::size_t length = v.data ? v.length : 0;
      put_u64(out, length);
      const Datatype& e = t.sequence_element();
      for (std::size_t i = 0; i < length; ++i) pack_part(e, static_cast<const unsigned char*>(v.data) + i * part_size(e), out);
      return;
    }
    case Datatype::Class::Compound:
      for (const auto& m : t.members()) pack_part(m.type, p + m.offset, out);
      return;
    case Datatype::Class::Array: {
      const Datatype& e = t.array_element();
      for (uint64_t i = 0; i < t.array_count(); ++i) pack_part(e, p + i * e.size(), out);
      return;
    }
    default: out.insert(out.end(), p, p + t.size());
  }
}

// ---- reading packed bytes -----------------------------------------------------------

// A cursor over packed bytes that refuses to read past their end.
struct Packed {
  const unsigned char* p;
  std::size_t left;
  [[noreturn]] void bad(const Datatype& t, const std::string& why) const {
    throw CorruptionError("a packed element of type " + t.name() + " is damaged: " + why);
  }
  const unsigned char* take(std::size_t n, const Datatype& t) {
    if (n > left) bad(t, "it needs " + std::to_string(n) + " more bytes, " + std::to_string(left) + " are left");
    const unsigned char* at = p;
    p += n;
    left -= n;
    return at;
  }
  uint64_t u64(const Datatype& t) {
    uint64_t v;
    std::memcpy(&v, take(sizeof v, t), sizeof v);
    return v;
  }
  // A packed string part: its bytes and their count, or null for a null string.
  const char* string(const Datatype& t, std::size_t& n) {
    const uint64_t count = u64(t);
    if (count == kNullString) return nullptr;
    const unsigned char* s = take(std::size_t(std::min<uint64_t>(count, left + 1)), t);  // (fails past the end)
    n = std::size_t(count);
    if (std::memchr(s, 0, n)) bad(t, "a string holds a NUL byte");
    return reinterpret_cast<const char*>(s);
  }
};

// The fewest packed bytes an element of `t` takes (at least 1 for every type:
// a sequence's length check divides by it).
std::size_t min_packed(const Datatype& t);

// Whether parts can be released: an allocator without a release function
// (HDF5's counting one, for H5Dvlen_get_buf_size) owns what it gave.
bool can_release(const PartMemory& memory) { return memory.release || !memory.allocate; }

std::size_t min_packed(const Datatype& t) {
  switch (t.type_class()) {
    case Datatype::Class::VarString:
    case Datatype::Class::Sequence: return sizeof(uint64_t);
    case Datatype::Class::Compound: {
      std::size_t n = 0;
      for (const auto& m : t.members()) n += min_packed(m.type);
      return n;
    }
    case Datatype::Class::Array: return std::size_t(t.array_count()) * min_packed(t.array_element());
    default: return t.size();
  }
}

uint64_t sequence_length(Packed& in, const Datatype& t) {
  const uint64_t length = in.u64(t);
  if (length > in.left / min_packed(t.sequence_element()))
    in.bad(t, "a sequence of " + std::to_string(length) + " elements in " + std::to_string(in.left) + " bytes");
  return length;
}

void skip_part(const Datatype& t, Packed& in) {
  switch (t.type_class()) {
    case Datatype::Class::VarString: {
      std::size_t n = 0;
      in.string(t, n);
      return;
    }
    case Datatype::Class::Sequence: {
      const uint64_t length = sequence_length(in, t);
      for (uint64_t i = 0; i < length; ++i) skip_part(t.sequence_element(), in);
      return;
    }
    case Datatype::Class::Compound:
      for (const auto& m : t.members()) skip_part(m.type, in);
      return;
    case Datatype::Class::Array:
      for (uint64_t i = 0; i < t.array_count(); ++i) skip_part(t.array_element(), in);
      return;
    default: in.take(t.size(), t);
  }
}

void* allocate(const PartMemory& memory, std::size_t size) {
  void* p = memory.allocate ? memory.allocate(size, memory.allocate_info) : std::malloc(size);
  if (!p) throw IOError("out of memory for a variable-length part of " + std::to_string(size) + " bytes");
  return p;
}

void release(const PartMemory& memory, void* p) {
  if (!p) return;
  if (memory.release) memory.release(p, memory.release_info);
  else if (!memory.allocate) std::free(p);
}

void reclaim_part(const Datatype& t, unsigned char* p, const PartMemory& memory);

// Unpacks one part into `p`, whose bytes are zero: a failure part-way leaves
// it a valid element for reclaim_part.
void unpack_part(const Datatype& t, Packed& in, unsigned char* p, const PartMemory& memory) {
  switch (t.type_class()) {
    case Datatype::Class::VarString: {
      std::size_t n = 0;
      const char* s = in.string(t, n);
      if (!s) return;  // stays null
      auto* text = static_cast<char*>(allocate(memory, n + 1));  // (n < the bytes there are)
      std::memcpy(text, s, n);
      text[n] = '\0';
      std::memcpy(p, &text, sizeof text);
      return;
    }
    case Datatype::Class::Sequence: {
      const uint64_t length = sequence_length(in, t);
      if (length == 0) return;  // {0, null}, as HDF5 reads an empty sequence
      const Datatype& e = t.sequence_element();
      const std::size_t esize = part_size(e);
      if (length > kMaxPartBytes / esize)
        in.bad(t, "a sequence of " + std::to_string(length) + " elements of " + std::to_string(esize) + " bytes");
      // Children first, then the block that holds them, filled once: HDF5's
      // order, which its counting allocator (one block, reallocated at every
      // call) relies on.
      std::vector<unsigned char> elements(std::size_t(length) * esize, 0);
      try {
        for (uint64_t i = 0; i < length; ++i) unpack_part(e, in, elements.data() + i * esize, memory);
      } catch (...) {
        if (can_release(memory))
          for (uint64_t i = 0; i < length; ++i) reclaim_part(e, elements.data() + i * esize, memory);
        throw;
      }
      VarSequence v{std::size_t(length), allocate(memory, elements.size())};
      std::memcpy(v.data, elements.data(), elements.size());
      std::memcpy(p, &v, sizeof v);
      return;
    }
    case Datatype::Class::Compound:
      for (const auto& m : t.members()) unpack_part(m.type, in, p + m.offset, memory);
      return;
    case Datatype::Class::Array: {
      const Datatype& e = t.array_element();
      for (uint64_t i = 0; i < t.array_count(); ++i) unpack_part(e, in, p + i * e.size(), memory);
      return;
    }
    default: std::memcpy(p, in.take(t.size(), t), t.size());
  }
}

void reclaim_part(const Datatype& t, unsigned char* p, const PartMemory& memory) {
  switch (t.type_class()) {
    case Datatype::Class::VarString: {
      char* s = nullptr;
      std::memcpy(&s, p, sizeof s);
      release(memory, s);
      s = nullptr;
      std::memcpy(p, &s, sizeof s);
      return;
    }
    case Datatype::Class::Sequence: {
      VarSequence v;
      std::memcpy(&v, p, sizeof v);
      if (v.data) {
        const Datatype& e = t.sequence_element();
        if (e.has_variable_length_parts() || e.is_varstring())
          for (std::size_t i = 0; i < v.length; ++i) reclaim_part(e, static_cast<unsigned char*>(v.data) + i * part_size(e), memory);
        release(memory, v.data);
      }
      v = VarSequence{0, nullptr};
      std::memcpy(p, &v, sizeof v);
      return;
    }
    case Datatype::Class::Compound:
      for (const auto& m : t.members()) reclaim_part(m.type, p + m.offset, memory);
      return;
    case Datatype::Class::Array: {
      const Datatype& e = t.array_element();
      if (e.has_variable_length_parts())
        for (uint64_t i = 0; i < t.array_count(); ++i) reclaim_part(e, p + i * e.size(), memory);
      return;
    }
    default: return;
  }
}

std::size_t part_bytes(const Datatype& t, const unsigned char* p) {
  switch (t.type_class()) {
    case Datatype::Class::VarString: {
      const char* s = nullptr;
      std::memcpy(&s, p, sizeof s);
      return s ? std::strlen(s) + 1 : 0;
    }
    case Datatype::Class::Sequence: {
      VarSequence v;
      std::memcpy(&v, p, sizeof v);
      if (!v.data || v.length == 0) return 0;
      const Datatype& e = t.sequence_element();
      std::size_t n = v.length * part_size(e);
      for (std::size_t i = 0; i < v.length; ++i) n += part_bytes(e, static_cast<const unsigned char*>(v.data) + i * part_size(e));
      return n;
    }
    case Datatype::Class::Compound: {
      std::size_t n = 0;
      for (const auto& m : t.members()) n += part_bytes(m.type, p + m.offset);
      return n;
    }
    case Datatype::Class::Array: {
      std::size_t n = 0;
      for (uint64_t i = 0; i < t.array_count(); ++i) n += part_bytes(t.array_element(), p + i * t.array_element().size());
      return n;
    }
    default: return 0;
  }
}

// Whole elements: a variable-length string element is a std::string, not a part.
void require_parts(const Datatype& t) {
  if (t.is_varstring())
    throw DatatypeError("variable-length string elements are std::string objects, not variable-length parts");
}

}  // namespace

bool references_with_parts(const Datatype& t) { return t.has_variable_length_parts() && holds_references(t); }

std::size_t min_packed_element_size(const Datatype& t) {
  require_parts(t);
  return min_packed(t);
}

void pack_variable_length(const Datatype& t, const void* data, std::size_t n, std::vector<unsigned char>& out) {
  require_parts(t);
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) pack_part(t, p + i * t.size(), out);
}

std::vector<unsigned char> pack_variable_length(const Datatype& t, const void* data, std::size_t n) {
  std::vector<unsigned char> out;
  pack_variable_length(t, data, n, out);
  return out;
}

std::size_t packed_element_size(const Datatype& t, const unsigned char* packed, std::size_t size) {
  require_parts(t);
  Packed in{packed, size};
  skip_part(t, in);
  return size - in.left;
}

void unpack_variable_length(const Datatype& t, const unsigned char* packed, std::size_t size, void* out,
                            std::size_t n, const PartMemory& memory) {
  require_parts(t);
  Packed in{packed, size};
  if (n > size / min_packed(t))  // (before anything is touched: `n` may come from a damaged record)
    in.bad(t, std::to_string(n) + " elements cannot be packed in " + std::to_string(size) + " bytes");
  auto* p = static_cast<unsigned char*>(out);
  std::memset(p, 0, n * t.size());
  std::size_t done = 0;
  try {
    for (; done < n; ++done) unpack_part(t, in, p + done * t.size(), memory);
    if (in.left != 0) in.bad(t, std::to_string(in.left) + " bytes are left after " + std::to_string(n) + " elements");
  } catch (...) {
    if (can_release(memory)) reclaim_variable_length(t, p, std::min(done + 1, n), memory);
    throw;
  }
}

void reclaim_variable_length(const Datatype& t, void* data, std::size_t n, const PartMemory& memory) {
  require_parts(t);
  auto* p = static_cast<unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) reclaim_part(t, p + i * t.size(), memory);
}

void copy_variable_length(const Datatype& t, const void* src, void* dst, std::size_t n, const PartMemory& memory) {
  const std::vector<unsigned char> packed = pack_variable_length(t, src, n);
  unpack_variable_length(t, packed.data(), packed.size(), dst, n, memory);
}

std::size_t variable_length_bytes(const Datatype& t, const void* data, std::size_t n) {
  std::size_t total = 0;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) total += part_bytes(t, p + i * t.size());
  return total;
}

// ---- ElementBuffer (datatype.hpp) ----------------------------------------------------

void ElementBuffer::release_parts() {
  if (type_.has_variable_length_parts()) reclaim_variable_length(type_, bytes_.data(), bytes_.size() / type_.size());
}

std::size_t ElementBuffer::payload_bytes() const {
  std::size_t n = bytes_.size();
  for (const auto& s : strings_) n += s.size();
  if (type_.has_variable_length_parts()) n += variable_length_bytes(type_, bytes_.data(), bytes_.size() / type_.size());
  return n;
}

}  // namespace h5loom
