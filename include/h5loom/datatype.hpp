// Element datatypes: HDF5's data model, the part h5loom keeps.
//
//  * scalars: the ten native numeric types (Datatype::Int8 ... Float64);
//  * compound: named members at byte offsets, each of any datatype (nested
//    compounds included) - a C struct, a numpy structured dtype;
//  * fixed-length strings: `length` bytes per element, NUL-padded, ASCII or UTF-8;
//  * enums: names for the values of an integer scalar.
//
// A Datatype is a small value (a class, a scalar, and a shared description of
// members or names); copies are cheap and compare by value. Memory layout is
// the C one: a compound element is `size()` bytes with its members at their
// offsets (numpy's `dtype.fields`, C's offsetof).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "h5loom/errors.hpp"

namespace h5loom {

// The numeric element types (HDF5's native ones).
enum class Scalar : uint8_t {
  Int8, Int16, Int32, Int64,
  UInt8, UInt16, UInt32, UInt64,
  Float32, Float64,
};

constexpr Scalar kAllScalars[] = {Scalar::Int8,   Scalar::Int16,  Scalar::Int32,   Scalar::Int64,  Scalar::UInt8,
                                  Scalar::UInt16, Scalar::UInt32, Scalar::UInt64, Scalar::Float32, Scalar::Float64};
// Older name of the same list.
inline constexpr const Scalar (&kAllDatatypes)[10] = kAllScalars;

// The one dispatch from a Scalar to its C++ type: calls fn(T{}) with T the
// scalar's type (int8_t ... double) and returns what it returns.
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
  }
  throw DatatypeError("unknown scalar type code " + std::to_string(int(s)));
}

std::size_t scalar_size(Scalar s);
// "int8" ... "uint64", "float32", "float64".
std::string scalar_name(Scalar s);
bool is_integer(Scalar s);

struct Member;

class Datatype {
 public:
  enum class Class : uint8_t { Scalar, Compound, String, Enum };
  enum class Charset : uint8_t { Ascii, Utf8 };

  // The scalars by their old names: Datatype::Float64 is a Datatype.
  static const Datatype Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float32, Float64;

  constexpr Datatype() : Datatype(Scalar::Float64) {}
  constexpr Datatype(Scalar s) : class_(Class::Scalar), scalar_(s) {}  // NOLINT: implicit

  // A compound of `members` (names unique and non-empty, each inside the
  // element, none overlapping another). size 0: just past the last member.
  static Datatype compound(std::vector<Member> members, std::size_t size = 0);
  // Fixed-length strings of `length` bytes (more than 0), NUL-padded.
  static Datatype string(std::size_t length, Charset charset = Charset::Ascii);
  // Names for values of an integer scalar (names unique and non-empty, values distinct).
  static Datatype enumeration(Scalar base, std::vector<std::pair<std::string, int64_t>> values);

  Class type_class() const { return class_; }
  bool is_scalar() const { return class_ == Class::Scalar; }
  bool is_compound() const { return class_ == Class::Compound; }
  bool is_string() const { return class_ == Class::String; }
  bool is_enum() const { return class_ == Class::Enum; }
  // The scalar (an enum's: its base). DatatypeError for compounds and strings.
  Scalar scalar() const;
  // Bytes per element in memory and in files.
  std::size_t size() const;
  const std::vector<Member>& members() const;  // compound only
  Charset charset() const;                     // string only
  const std::vector<std::pair<std::string, int64_t>>& enum_values() const;  // enum only

  // "float64", "string[16]", "utf8[16]", "enum<uint8>{red: 0, green: 1}",
  // "compound[16]{x: float64 @0, id: int64 @8}". datatype_from_name reads every
  // name this writes back.
  std::string name() const;

  bool operator==(const Datatype& o) const;
  bool operator!=(const Datatype& o) const { return !(*this == o); }

 private:
  struct Detail;
  Class class_;
  Scalar scalar_;
  std::shared_ptr<const Detail> detail_;
};

struct Member {
  std::string name;
  std::size_t offset = 0;
  Datatype type;
};

inline const Datatype Datatype::Int8{Scalar::Int8};
inline const Datatype Datatype::Int16{Scalar::Int16};
inline const Datatype Datatype::Int32{Scalar::Int32};
inline const Datatype Datatype::Int64{Scalar::Int64};
inline const Datatype Datatype::UInt8{Scalar::UInt8};
inline const Datatype Datatype::UInt16{Scalar::UInt16};
inline const Datatype Datatype::UInt32{Scalar::UInt32};
inline const Datatype Datatype::UInt64{Scalar::UInt64};
inline const Datatype Datatype::Float32{Scalar::Float32};
inline const Datatype Datatype::Float64{Scalar::Float64};

std::size_t datatype_size(const Datatype& t);
std::string datatype_name(const Datatype& t);
// Reads the names Datatype::name() writes, and numpy spellings of scalars
// ("f8", "<i4", "u1", "double", "float") and fixed strings ("S16").
Datatype datatype_from_name(std::string_view name);

// One element of type `t` at `p` in words: 2.5, "text", red, {x: 1, id: 7}
// (for h5loom dump and error messages).
std::string format_element(const Datatype& t, const void* p);

template <class T>
constexpr Scalar scalar_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) return Scalar::Float32;
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
  return Datatype(scalar_of<T>());
}

}  // namespace h5loom
