// Element datatypes: HDF5's data model, the part h5loom keeps.
//
//  * scalars: the ten native numeric types (Datatype::Int8 ... Float64) and
//    IEEE half precision (Datatype::Float16, held as the Float16 class);
//  * compound: named members at byte offsets, each of any datatype (nested
//    compounds included) - a C struct, a numpy structured dtype;
//  * fixed-length strings: `length` bytes per element, ASCII or UTF-8, padded
//    as HDF5 says (NUL-padded by default; NUL-terminated; space-padded) - the
//    bytes are kept as written, the padding says how readers trim them;
//  * variable-length strings: each element a std::string in memory (HDF5's
//    variable-length strings in files); inside a compound or a sequence, a char*;
//  * variable-length sequences of any type (HDF5's H5T_VLEN): each a
//    VarSequence (hvl_t) in memory (variable_length.hpp);
//  * enums: names for the values of an integer scalar;
//  * object references: an ObjectRef (8 bytes) naming a group or dataset of
//    the same file (Group::reference / Group::dereference); usable in
//    datasets, attributes and compound members (what dimension scales need);
//  * arrays: a fixed N-D block of elements of another fixed-size type in each
//    element (HDF5's array datatype; numpy's sub-array dtype `('f8', (3,))`),
//    e.g. a particle's position as one element of array<float64>[3];
//  * opaque: `size` uninterpreted bytes per element with a tag saying what
//    they are (HDF5's opaque datatype; numpy's void dtype 'V<n>'), copied as
//    they are and never converted.
//
// A Datatype is a small value (a class, a scalar, and a shared description of
// members or names); copies are cheap and compare by value. Memory layout is
// the C one: a compound element is `size()` bytes with its members at their
// offsets (numpy's `dtype.fields`, C's offsetof).
//
// Byte order: in memory every number is in the host's order. A scalar or an
// enum may say that files store it big-endian (with_byte_order(ByteOrder::Big):
// HDF5's H5T_STD_I32BE, numpy's '>i4'); engines that convert on the way (the
// hdf5 engine) store it so and report it back, the log engine records it. It
// never changes the values a program reads or writes: in_memory() is the type
// without it, and transfers compare types by in_memory().
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "h5loom/errors.hpp"

namespace h5loom {

// A reference to a group or dataset of one file, as an engine numbers it: an
// opaque token, 0 for "no object". Only the file that made it resolves it
// (Group::dereference); copies between files translate it (h5loom convert).
struct ObjectRef {
  uint64_t token = 0;
  bool is_null() const { return token == 0; }
  bool operator==(const ObjectRef& o) const { return token == o.token; }
  bool operator!=(const ObjectRef& o) const { return token != o.token; }
};
static_assert(sizeof(ObjectRef) == 8, "an ObjectRef is stored as 8 bytes");

// IEEE 754 half precision (binary16: HDF5's H5T_IEEE_F16LE, numpy's
// float16), held as its 16 bits: C++17 has no half-precision type. Made from
// any number by rounding to the nearest half, ties to even (too large: an
// infinity, as numpy does); converts to every number type through float,
// which holds every half exactly.
class Float16 {
 public:
  constexpr Float16() = default;
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  explicit Float16(T value) : bits_(from_double(static_cast<double>(value))) {}
  static constexpr Float16 from_bits(uint16_t bits) {
    Float16 h;
    h.bits_ = bits;
    return h;
  }
  constexpr uint16_t bits() const { return bits_; }
  float to_float() const;
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  explicit operator T() const {
    return static_cast<T>(to_float());
  }
  // As numbers: +0 equals -0, a NaN equals nothing.
  bool operator==(Float16 o) const { return to_float() == o.to_float(); }
  bool operator!=(Float16 o) const { return !(*this == o); }

 private:
  static uint16_t from_double(double value);
  uint16_t bits_ = 0;
};
static_assert(sizeof(Float16) == 2, "a Float16 is stored as 2 bytes");
std::ostream& operator<<(std::ostream& os, Float16 h);

// The numeric element types (HDF5's native ones, and IEEE half precision).
// The codes are stable (the C API's loom_datatype): new ones go at the end.
enum class Scalar : uint8_t {
  Int8, Int16, Int32, Int64,
  UInt8, UInt16, UInt32, UInt64,
  Float32, Float64,
  Float16,
};

constexpr Scalar kAllScalars[] = {Scalar::Int8,   Scalar::Int16,   Scalar::Int32,   Scalar::Int64,
                                  Scalar::UInt8,  Scalar::UInt16,  Scalar::UInt32,  Scalar::UInt64,
                                  Scalar::Float16, Scalar::Float32, Scalar::Float64};
// Older name of the same list.
inline constexpr const Scalar (&kAllDatatypes)[11] = kAllScalars;

// The one dispatch from a Scalar to its C++ type: calls fn(T{}) with T the
// scalar's type (int8_t ... double, Float16) and returns what it returns.
template <class Fn>
decltype(auto) dispatch_scalar(Scalar s, Fn&& fn) {
  switch (s) {
    case Scalar::Int8: return fn(int8_t{});
    case Scalar::Int16: return fn(int16_t{});
    case Scalar::Int32: return fn(int32_t{});
    case Scalar::Int64: return fn(int64_t{});
    case Scalar::UInt8: return fn(uint8_t{});
    case Scalar::UInt16: return fn(uint16_t{});
    case Scalar::UInt32: return fn(uint32_t{});
    case Scalar::UInt64: return fn(uint64_t{});
    case Scalar::Float32: return fn(float{});
    case Scalar::Float64: return fn(double{});
    case Scalar::Float16: return fn(Float16{});
  }
  throw DatatypeError("unknown scalar type code " + std::to_string(int(s)));
}

std::size_t scalar_size(Scalar s);
// "int8" ... "uint64", "float16", "float32", "float64".
std::string scalar_name(Scalar s);
bool is_integer(Scalar s);

struct Member;

// How files store a number's bytes (see Datatype: memory is always the host's order).
enum class ByteOrder : uint8_t { Little, Big };

class Datatype {
 public:
  enum class Class : uint8_t { Scalar, Compound, String, Enum, VarString, Reference, Array, Opaque, Sequence };
  enum class Charset : uint8_t { Ascii, Utf8 };
  // How a fixed-length string fills its length (HDF5's H5T_STR_NULLPAD, _NULLTERM, _SPACEPAD).
  enum class Padding : uint8_t { NullPad, NullTerm, SpacePad };

  // The scalars by their old names: Datatype::Float64 is a Datatype.
  static const Datatype Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float16, Float32, Float64;

  constexpr Datatype() : Datatype(Scalar::Float64) {}
  constexpr Datatype(Scalar s) : class_(Class::Scalar), scalar_(s) {}  // NOLINT: implicit

  // This scalar or enum, stored in files in `order` (DatatypeError for other classes).
  Datatype with_byte_order(ByteOrder order) const;
  // Little for every class but a big-endian scalar or enum.
  ByteOrder byte_order() const { return big_endian_ ? ByteOrder::Big : ByteOrder::Little; }
  // The type without file byte orders and string paddings, in members and
  // array elements too: what a program's memory holds (bytes are never
  // converted). Transfers accept any type of the same in_memory().
  Datatype in_memory() const;

  // A compound of `members` (names unique and non-empty, each inside the
  // element, none overlapping another). size 0: just past the last member.
  // A variable-length string member is a `char*` in memory (HDF5's layout).
  static Datatype compound(std::vector<Member> members, std::size_t size = 0);
  // Fixed-length strings of `length` bytes (more than 0), NUL-padded unless said otherwise.
  static Datatype string(std::size_t length, Charset charset = Charset::Ascii, Padding padding = Padding::NullPad);
  // Names for values of an integer scalar (names unique and non-empty, values distinct).
  static Datatype enumeration(Scalar base, std::vector<std::pair<std::string, int64_t>> values);
  // Variable-length strings: in memory each element is a std::string (no NUL
  // bytes inside); Dataset::write/read with std::string. (Inside a compound or a sequence: a `char*`.)
  static Datatype varstring(Charset charset = Charset::Ascii);
  // Object references: each element an ObjectRef.
  static Datatype reference();
  // An array of `dims` (1 to 32 dimensions, each at least 1) elements of the
  // fixed-size type `element` (not a variable-length string), row-major.
  static Datatype array(const Datatype& element, std::vector<uint64_t> dims);
  // `size` (1 byte to 4 GiB) uninterpreted bytes per element, with a `tag` of
  // at most 255 bytes (no NUL) naming what they hold ("" for none).
  static Datatype opaque(std::size_t size, std::string tag = "");
  // A variable-length sequence of `element`s (HDF5's H5T_VLEN, h5py's
  // vlen_dtype): in memory each element is a VarSequence (variable_length.hpp:
  // reads allocate the parts, reclaim_variable_length releases them). Datasets
  // hold them on engines with the conformance group "variable_length";
  // attributes whose elements hold sequences, or variable-length strings
  // inside a compound, raise DatatypeError so far.
  static Datatype sequence(const Datatype& element);

  Class type_class() const { return class_; }
  bool is_scalar() const { return class_ == Class::Scalar; }
  bool is_compound() const { return class_ == Class::Compound; }
  bool is_string() const { return class_ == Class::String; }
  bool is_enum() const { return class_ == Class::Enum; }
  bool is_varstring() const { return class_ == Class::VarString; }
  bool is_reference() const { return class_ == Class::Reference; }
  bool is_array() const { return class_ == Class::Array; }
  bool is_opaque() const { return class_ == Class::Opaque; }
  bool is_sequence() const { return class_ == Class::Sequence; }
  // Sequences anywhere in an element, or variable-length strings inside a
  // compound: parts of variable length that datasets and attributes do not hold yet.
  bool has_variable_length_parts() const;
  // References anywhere in an element (this type or a compound member, nested):
  // their values mean something only in the file that made them.
  bool has_references() const;
  // The scalar (an enum's: its base). DatatypeError for compounds and strings.
  Scalar scalar() const;
  // Bytes per element in memory (a compound's layout, sizeof(std::string) for
  // variable-length strings, 8 for references); fixed-size types have the
  // same size in files.
  std::size_t size() const;
  const std::vector<Member>& members() const;  // compound only
  Charset charset() const;                     // fixed and variable-length strings
  Padding padding() const;                     // fixed-length strings
  const std::vector<std::pair<std::string, int64_t>>& enum_values() const;  // enum only
  const Datatype& array_element() const;        // array only
  const std::vector<uint64_t>& array_dims() const;  // array only
  uint64_t array_count() const;                 // array only: elements per array (the product of dims)
  const std::string& opaque_tag() const;        // opaque only
  const Datatype& sequence_element() const;     // sequence only

  // "float64", "int32be" (stored big-endian), "string[16]", "utf8[16]",
  // "string[16, nullterm]", "string[16, spacepad]", "string" and "utf8" (variable
  // length), "reference", "enum<uint8>{red: 0, green: 1}",
  // "compound[16]{x: float64 @0, id: int64 @8}", "array<float64>[2, 3]",
  // "opaque[13]" and "opaque[13]{tag}" (a tag holding a delimiter quoted),
  // "vlen<float32>" (a sequence).
  // datatype_from_name reads every name this writes back.
  std::string name() const;

  bool operator==(const Datatype& o) const;
  bool operator!=(const Datatype& o) const { return !(*this == o); }

 private:
  struct Detail;
  Class class_;
  Scalar scalar_;
  bool big_endian_ = false;  // scalars and enums: stored big-endian in files
  std::shared_ptr<const Detail> detail_;
};

struct Member {
  std::string name;
  std::size_t offset = 0;
  Datatype type;
};

// One element of a variable-length sequence in memory: HDF5's hvl_t.
struct VarSequence {
  std::size_t length;  // elements
  void* data;
};

// Bytes a compound member of type `t` takes in its element: t.size(), but a
// variable-length string member is a `char*`.
std::size_t member_size(const Datatype& t);

// Why a dataset or an attribute of a type with variable-length parts and
// references (references_with_parts) is refused (the end of the
// DatatypeError's message, after the object and type).
extern const char* const kVariableLengthPartsRefused;

inline const Datatype Datatype::Int8{Scalar::Int8};
inline const Datatype Datatype::Int16{Scalar::Int16};
inline const Datatype Datatype::Int32{Scalar::Int32};
inline const Datatype Datatype::Int64{Scalar::Int64};
inline const Datatype Datatype::UInt8{Scalar::UInt8};
inline const Datatype Datatype::UInt16{Scalar::UInt16};
inline const Datatype Datatype::UInt32{Scalar::UInt32};
inline const Datatype Datatype::UInt64{Scalar::UInt64};
inline const Datatype Datatype::Float16{Scalar::Float16};
inline const Datatype Datatype::Float32{Scalar::Float32};
inline const Datatype Datatype::Float64{Scalar::Float64};

std::size_t datatype_size(const Datatype& t);
std::string datatype_name(const Datatype& t);
// Reads the names Datatype::name() writes, and numpy spellings of scalars
// ("f8", "<i4", ">i4" (big-endian), "u1", "double", "float"), fixed strings
// ("S16") and raw bytes ("V16": opaque).
Datatype datatype_from_name(std::string_view name);

// One element of type `t` at `p` in words: 2.5, "text", red, {x: 1, id: 7}
// (for h5loom dump and error messages).
std::string format_element(const Datatype& t, const void* p);

// Memory for `n` elements of any datatype, for code that handles every type
// alike (tools, copies, engines keeping a write): bytes, or std::string
// objects for variable-length strings; the parts of elements with
// variable-length parts (variable_length.hpp) are released with it.
class ElementBuffer {
 public:
  ElementBuffer() = default;
  ElementBuffer(const Datatype& t, std::size_t n) { resize(t, n); }
  ~ElementBuffer() { release_parts(); }
  ElementBuffer(const ElementBuffer&) = delete;  // the parts have one owner
  ElementBuffer& operator=(const ElementBuffer&) = delete;
  // `n` zeroed elements of `t` (empty strings and sequences); what it held is released.
  void resize(const Datatype& t, std::size_t n) {
    release_parts();
    type_ = t;
    if (t.is_varstring()) strings_.assign(n, std::string()), bytes_.clear();
    else bytes_.assign(n * t.size(), 0), strings_.clear();
  }
  void* data() { return type_.is_varstring() ? static_cast<void*>(strings_.data()) : bytes_.data(); }
  const void* element(std::size_t i) const {
    return type_.is_varstring() ? static_cast<const void*>(&strings_[i]) : &bytes_[i * type_.size()];
  }
  // Bytes of data held (for variable-length strings: their characters; with
  // variable-length parts: the elements and their parts).
  std::size_t payload_bytes() const;

 private:
  void release_parts();
  Datatype type_;
  std::vector<unsigned char> bytes_;
  std::vector<std::string> strings_;
};

// Zeroes the bytes of `count` elements of `t` at `data` that no member of a
// compound covers (C structs' padding): values that are equal then have equal
// bytes (attributes are compared across ranks, and stored).
void clear_padding(const Datatype& t, void* data, std::size_t count);

// Whether elements of `t` hold object references anywhere: as elements,
// members, array elements or inside variable-length sequences
// (Datatype::has_references leaves the sequences out).
bool holds_references(const Datatype& t);

// Calls fn(ObjectRef&) for every reference in `count` elements of `t` at
// `data` (members of compounds, and sequences' elements in memory form,
// included), in order; fn may change them (a copy between files translates
// each one).
void for_each_reference(const Datatype& t, void* data, std::size_t count, const std::function<void(ObjectRef&)>& fn);

template <class T>
constexpr Scalar scalar_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) return Scalar::Float32;
  else if constexpr (std::is_same_v<U, Float16>) return Scalar::Float16;
  else if constexpr (std::is_same_v<U, double>) return Scalar::Float64;
  else if constexpr (std::is_integral_v<U> && !std::is_same_v<U, bool>) {
    if constexpr (std::is_signed_v<U>) {
      if constexpr (sizeof(U) == 1) return Scalar::Int8;
      else if constexpr (sizeof(U) == 2) return Scalar::Int16;
      else if constexpr (sizeof(U) == 4) return Scalar::Int32;
      else return Scalar::Int64;
    } else {
      if constexpr (sizeof(U) == 1) return Scalar::UInt8;
      else if constexpr (sizeof(U) == 2) return Scalar::UInt16;
      else if constexpr (sizeof(U) == 4) return Scalar::UInt32;
      else return Scalar::UInt64;
    }
  } else {
    static_assert(sizeof(U) == 0, "h5loom: no scalar datatype for this C++ type; describe a struct with "
                                  "Datatype::compound and use write_raw/read_raw");
  }
}

template <class T>
Datatype datatype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, std::string>) return Datatype::varstring(Datatype::Charset::Utf8);
  else if constexpr (std::is_same_v<U, ObjectRef>) return Datatype::reference();
  else return Datatype(scalar_of<T>());
}

}  // namespace h5loom
