// Datatypes: scalars, compounds, strings, enums, references and arrays; their
// names (which the log engine stores and datatype_from_name reads back).
#include "h5loom/datatype.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <ostream>
#include <sstream>
#include <limits>
#include <set>
#include <string_view>

namespace h5loom {

struct Datatype::Detail {
  std::size_t size = 0;
  std::vector<Member> members;                          // compound
  Charset charset = Charset::Ascii;                     // string
  Padding padding = Padding::NullPad;                   // fixed-length string
  std::vector<std::pair<std::string, int64_t>> values;  // enum
  Datatype element;                                     // array
  std::vector<uint64_t> dims;                           // array
  std::string tag;                                      // opaque
};

std::size_t member_size(const Datatype& t) { return t.is_varstring() ? sizeof(char*) : t.size(); }

const char* const kVariableLengthPartsRefused =
    "object references inside variable-length parts are kept in attributes (netCDF-4's DIMENSION_LIST is one), "
    "not in datasets";

std::size_t scalar_size(Scalar s) {
  return dispatch_scalar(s, [](auto v) { return sizeof(v); });
}

namespace {
constexpr std::string_view kScalarNames[] = {"int8",   "int16",  "int32",   "int64",   "uint8",  "uint16",
                                             "uint32", "uint64", "float32", "float64", "float16"};  // by code
}  // namespace

std::string scalar_name(Scalar s) {
  const auto i = static_cast<std::size_t>(s);
  return std::string(i < std::size(kScalarNames) ? kScalarNames[i] : "unknown");
}

bool is_integer(Scalar s) { return s != Scalar::Float16 && s != Scalar::Float32 && s != Scalar::Float64; }

// ---- half precision ----------------------------------------------------------
// binary16: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits.

uint16_t Float16::from_double(double value) {
  uint64_t x = 0;
  std::memcpy(&x, &value, sizeof x);
  const auto sign = static_cast<uint16_t>((x >> 48) & 0x8000);
  const int exponent = int((x >> 52) & 0x7ff);
  uint64_t fraction = x & ((uint64_t(1) << 52) - 1);
  if (exponent == 0x7ff)  // infinity, or NaN (kept a NaN: the quiet bit set)
    return sign | 0x7c00 | (fraction ? 0x200 | uint16_t(fraction >> 42) : 0);
  const int e = exponent - 1023 + 15;  // the half's biased exponent
  if (e >= 31) return sign | 0x7c00;   // too large: infinity
  // The bits to drop: 42 for a normal half; for a subnormal one, the implicit
  // bit joins the fraction and 1 - e more go.
  int drop = 42;
  uint64_t kept_from = fraction;
  if (e <= 0) {
    if (e < -10) return sign;  // below half the smallest subnormal: zero
    kept_from = fraction | (uint64_t(1) << 52);
    drop = 43 - e;
  }
  uint64_t kept = kept_from >> drop;
  const uint64_t rest = kept_from & ((uint64_t(1) << drop) - 1), halfway = uint64_t(1) << (drop - 1);
  auto bits = static_cast<uint16_t>(sign | (e > 0 ? uint16_t(e) << 10 : 0) | kept);
  // To nearest, ties to even; a carry out of the fraction raises the exponent (up to infinity), as it should.
  if (rest > halfway || (rest == halfway && (bits & 1))) ++bits;
  return bits;
}

float Float16::to_float() const {
  const bool negative = bits_ & 0x8000;
  const int exponent = (bits_ >> 10) & 0x1f;
  const int fraction = bits_ & 0x3ff;
  float magnitude;
  if (exponent == 0) magnitude = std::ldexp(float(fraction), -24);  // zero or subnormal
  else if (exponent == 31) magnitude = fraction ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else magnitude = std::ldexp(float(fraction | 0x400), exponent - 25);
  return negative ? -magnitude : magnitude;
}

std::ostream& operator<<(std::ostream& os, Float16 h) { return os << h.to_float(); }

namespace {

// A member or enum name or an opaque tag as written in a datatype name: quoted
// ("a, b") if it holds a delimiter, a quote, or spaces at its ends.
std::string name_token(const std::string& n) {
  const bool plain = !n.empty() && n.find_first_of(":,{}[]<>@\"\\") == std::string::npos && n.front() != ' ' &&
                     n.back() != ' ';
  if (plain) return n;
  std::string out = "\"";
  for (char c : n) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

Datatype Datatype::compound(std::vector<Member> members, std::size_t size) {
  if (members.empty()) throw DatatypeError("a compound datatype needs at least one member");
  std::set<std::string> names;
  std::size_t end = 0;
  for (const auto& m : members) {
    if (m.name.empty()) throw DatatypeError("a compound datatype's member has an empty name");
    if (!names.insert(m.name).second)
      throw DatatypeError("compound datatype: member name '" + m.name + "' appears twice");
    if (m.offset > (~std::size_t{0} >> 1) || member_size(m.type) > (~std::size_t{0} >> 1) - m.offset)
      throw DatatypeError("compound datatype: member '" + m.name + "' has an impossible offset " + std::to_string(m.offset));
    end = std::max(end, m.offset + member_size(m.type));
  }
  if (size == 0) size = end;
  if (size > (std::size_t(1) << 32))  // HDF5's own limit for an element
    throw DatatypeError("a compound datatype of " + std::to_string(size) + " bytes: at most 4 GiB");
  // Members sorted by offset must not overlap and must fit in the element.
  std::vector<const Member*> by_offset;
  for (const auto& m : members) by_offset.push_back(&m);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (std::size_t i = 0; i < by_offset.size(); ++i) {
    const Member& m = *by_offset[i];
    if (m.offset > size || member_size(m.type) > size - m.offset)
      throw DatatypeError("compound datatype: member '" + m.name + "' (" + m.type.name() + " at offset " +
                          std::to_string(m.offset) + ") ends past the element size " + std::to_string(size));
    if (i + 1 < by_offset.size() && m.offset + member_size(m.type) > by_offset[i + 1]->offset)
      throw DatatypeError("compound datatype: members '" + m.name + "' and '" + by_offset[i + 1]->name +
                          "' overlap (offsets " + std::to_string(m.offset) + " and " +
                          std::to_string(by_offset[i + 1]->offset) + ")");
  }
  Datatype t;
  t.class_ = Class::Compound;
  auto d = std::make_shared<Detail>();
  d->size = size;
  d->members = std::move(members);
  t.detail_ = std::move(d);
  return t;
}

Datatype Datatype::string(std::size_t length, Charset charset, Padding padding) {
  if (length == 0) throw DatatypeError("a fixed-length string datatype needs a length of at least 1 byte");
  Datatype t;
  t.class_ = Class::String;
  auto d = std::make_shared<Detail>();
  d->size = length;
  d->charset = charset;
  d->padding = padding;
  t.detail_ = std::move(d);
  return t;
}

Datatype::Padding Datatype::padding() const {
  if (class_ != Class::String) throw DatatypeError("datatype " + name() + " is not a fixed-length string");
  return detail_->padding;
}

Datatype Datatype::varstring(Charset charset) {
  Datatype t;
  t.class_ = Class::VarString;
  auto d = std::make_shared<Detail>();
  d->size = sizeof(std::string);
  d->charset = charset;
  t.detail_ = std::move(d);
  return t;
}

Datatype Datatype::reference() {
  Datatype t;
  t.class_ = Class::Reference;
  auto d = std::make_shared<Detail>();
  d->size = sizeof(ObjectRef);
  t.detail_ = std::move(d);
  return t;
}

Datatype Datatype::array(const Datatype& element, std::vector<uint64_t> dims) {
  if (element.is_varstring())
    throw DatatypeError("an array datatype's element cannot be a variable-length string; use a fixed-length "
                        "string (Datatype::string(N))");
  if (dims.empty() || dims.size() > 32)
    throw DatatypeError("an array datatype needs 1 to 32 dimensions, not " + std::to_string(dims.size()));
  std::size_t size = element.size();
  for (uint64_t d : dims) {
    if (d == 0) throw DatatypeError("an array datatype's dimensions must be at least 1 (of " + element.name() + ")");
    if (d > (std::size_t(1) << 32) / size)  // an element of at most 4 GiB: HDF5's own limit
      throw DatatypeError("an array datatype of " + element.name() + " is too large");
    size *= d;
  }
  Datatype t;
  t.class_ = Class::Array;
  auto d = std::make_shared<Detail>();
  d->size = size;
  d->element = element;
  d->dims = std::move(dims);
  t.detail_ = std::move(d);
  return t;
}

Datatype Datatype::opaque(std::size_t size, std::string tag) {
  if (size == 0 || size > (std::size_t(1) << 32))  // HDF5's own limit for an element
    throw DatatypeError("an opaque datatype needs a size of 1 byte to 4 GiB, not " + std::to_string(size));
  if (tag.size() > 255)  // H5T_OPAQUE_TAG_MAX less its NUL
    throw DatatypeError("an opaque datatype's tag is " + std::to_string(tag.size()) + " bytes long; at most 255");
  if (tag.find('\0') != std::string::npos) throw DatatypeError("an opaque datatype's tag holds a NUL byte");
  Datatype t;
  t.class_ = Class::Opaque;
  auto d = std::make_shared<Detail>();
  d->size = size;
  d->tag = std::move(tag);
  t.detail_ = std::move(d);
  return t;
}

Datatype Datatype::sequence(const Datatype& element) {
  Datatype t;
  t.class_ = Class::Sequence;
  auto d = std::make_shared<Detail>();
  d->size = sizeof(VarSequence);
  d->element = element;
  t.detail_ = std::move(d);
  return t;
}

const Datatype& Datatype::sequence_element() const {
  if (class_ != Class::Sequence) throw DatatypeError("datatype " + name() + " is not a variable-length sequence");
  return detail_->element;
}

bool Datatype::has_variable_length_parts() const {
  switch (class_) {
    case Class::Sequence: return true;
    case Class::Array: return detail_->element.has_variable_length_parts();
    case Class::Compound:
      for (const auto& m : detail_->members)
        if (m.type.is_varstring() || m.type.has_variable_length_parts()) return true;
      return false;
    default: return false;
  }
}

const std::string& Datatype::opaque_tag() const {
  if (class_ != Class::Opaque) throw DatatypeError("datatype " + name() + " is not opaque");
  return detail_->tag;
}

Datatype Datatype::with_byte_order(ByteOrder order) const {
  if (class_ != Class::Scalar && class_ != Class::Enum)
    throw DatatypeError("datatype " + name() + " has no byte order of its own (its numbers have)");
  Datatype t = *this;
  t.big_endian_ = order == ByteOrder::Big;
  return t;
}

// Whether a big-endian number or a string not NUL-padded is anywhere in `t`
// (members and array elements too): what in_memory() takes away.
static bool has_file_only_properties(const Datatype& t) {
  if (t.is_array()) return has_file_only_properties(t.array_element());
  if (t.is_sequence()) return has_file_only_properties(t.sequence_element());
  if (t.is_compound()) {
    for (const auto& m : t.members())
      if (has_file_only_properties(m.type)) return true;
    return false;
  }
  if (t.is_string()) return t.padding() != Datatype::Padding::NullPad;
  return t.byte_order() == ByteOrder::Big;
}

Datatype Datatype::in_memory() const {
  if (!has_file_only_properties(*this)) return *this;  // (transfers ask every time: no copies then)
  switch (class_) {
    case Class::Scalar:
    case Class::Enum: return with_byte_order(ByteOrder::Little);
    case Class::String: return string(detail_->size, detail_->charset);
    case Class::Array: return array(detail_->element.in_memory(), detail_->dims);
    case Class::Sequence: return sequence(detail_->element.in_memory());
    case Class::Compound: {
      std::vector<Member> members = detail_->members;
      for (auto& m : members) m.type = m.type.in_memory();
      return compound(std::move(members), detail_->size);
    }
    default: return *this;
  }
}

bool Datatype::has_references() const {
  if (class_ == Class::Reference) return true;
  if (class_ == Class::Array) return detail_->element.has_references();
  if (class_ != Class::Compound) return false;
  for (const auto& m : detail_->members)
    if (m.type.has_references()) return true;
  return false;
}

Datatype Datatype::enumeration(Scalar base, std::vector<std::pair<std::string, int64_t>> values) {
  if (!is_integer(base))
    throw DatatypeError("an enum datatype's base must be an integer type, not " + scalar_name(base));
  if (values.empty()) throw DatatypeError("an enum datatype needs at least one name");
  std::set<std::string> names;
  std::set<int64_t> seen;
  for (const auto& [name, value] : values) {
    if (name.empty()) throw DatatypeError("an enum datatype's name is empty");
    if (!names.insert(name).second) throw DatatypeError("enum datatype: name '" + name + "' appears twice");
    if (!seen.insert(value).second)
      throw DatatypeError("enum datatype: value " + std::to_string(value) + " of '" + name + "' appears twice");
    const int64_t number = value;  // (a structured binding cannot be captured in C++17)
    const bool fits = dispatch_scalar(base, [number](auto v) {
      using T = decltype(v);
      if constexpr (std::is_signed_v<T>)
        return number >= int64_t(std::numeric_limits<T>::min()) && number <= int64_t(std::numeric_limits<T>::max());
      else
        return number >= 0 && uint64_t(number) <= uint64_t(std::numeric_limits<T>::max());
    });
    if (!fits)
      throw DatatypeError("enum datatype: value " + std::to_string(value) + " of '" + name + "' does not fit " +
                          scalar_name(base));
  }
  Datatype t(base);
  t.class_ = Class::Enum;
  auto d = std::make_shared<Detail>();
  d->size = scalar_size(base);
  d->values = std::move(values);
  t.detail_ = std::move(d);
  return t;
}

const Datatype& Datatype::array_element() const {
  if (class_ != Class::Array) throw DatatypeError("datatype " + name() + " is not an array");
  return detail_->element;
}

const std::vector<uint64_t>& Datatype::array_dims() const {
  if (class_ != Class::Array) throw DatatypeError("datatype " + name() + " is not an array");
  return detail_->dims;
}

uint64_t Datatype::array_count() const { return size() / array_element().size(); }

Scalar Datatype::scalar() const {
  if (class_ == Class::Scalar || class_ == Class::Enum) return scalar_;
  throw DatatypeError("datatype " + name() + " is not a number");
}

std::size_t Datatype::size() const { return class_ == Class::Scalar ? scalar_size(scalar_) : detail_->size; }

const std::vector<Member>& Datatype::members() const {
  if (class_ != Class::Compound) throw DatatypeError("datatype " + name() + " is not a compound");
  return detail_->members;
}

Datatype::Charset Datatype::charset() const {
  if (class_ != Class::String && class_ != Class::VarString) throw DatatypeError("datatype " + name() + " is not a string");
  return detail_->charset;
}

const std::vector<std::pair<std::string, int64_t>>& Datatype::enum_values() const {
  if (class_ != Class::Enum) throw DatatypeError("datatype " + name() + " is not an enum");
  return detail_->values;
}

std::string Datatype::name() const {
  switch (class_) {
    case Class::Scalar: return scalar_name(scalar_) + (big_endian_ ? "be" : "");
    case Class::String: {
      static const char* paddings[] = {"", ", nullterm", ", spacepad"};  // by Padding
      return std::string(detail_->charset == Charset::Utf8 ? "utf8[" : "string[") + std::to_string(detail_->size) +
             paddings[static_cast<int>(detail_->padding)] + "]";
    }
    case Class::VarString: return detail_->charset == Charset::Utf8 ? "utf8" : "string";
    case Class::Reference: return "reference";
    case Class::Opaque:
      return "opaque[" + std::to_string(detail_->size) + "]" +
             (detail_->tag.empty() ? "" : "{" + name_token(detail_->tag) + "}");
    case Class::Sequence: return "vlen<" + detail_->element.name() + ">";
    case Class::Array: {
      std::string out = "array<" + detail_->element.name() + ">[";
      for (std::size_t i = 0; i < detail_->dims.size(); ++i) out += (i ? ", " : "") + std::to_string(detail_->dims[i]);
      return out + "]";
    }
    case Class::Enum: {
      std::string out = "enum<" + scalar_name(scalar_) + (big_endian_ ? "be" : "") + ">{";
      for (std::size_t i = 0; i < detail_->values.size(); ++i)
        out += (i ? ", " : "") + name_token(detail_->values[i].first) + ": " + std::to_string(detail_->values[i].second);
      return out + "}";
    }
    case Class::Compound: {
      std::string out = "compound[" + std::to_string(detail_->size) + "]{";
      for (std::size_t i = 0; i < detail_->members.size(); ++i) {
        const Member& m = detail_->members[i];
        out += (i ? ", " : "") + name_token(m.name) + ": " + m.type.name() + " @" + std::to_string(m.offset);
      }
      return out + "}";
    }
  }
  return "unknown";
}

bool Datatype::operator==(const Datatype& o) const {
  if (class_ != o.class_) return false;
  switch (class_) {
    case Class::Scalar: return scalar_ == o.scalar_ && big_endian_ == o.big_endian_;
    case Class::String:
      return detail_->size == o.detail_->size && detail_->charset == o.detail_->charset &&
             detail_->padding == o.detail_->padding;
    case Class::VarString: return detail_->charset == o.detail_->charset;
    case Class::Reference: return true;
    case Class::Opaque: return detail_->size == o.detail_->size && detail_->tag == o.detail_->tag;
    case Class::Array: return detail_->dims == o.detail_->dims && detail_->element == o.detail_->element;
    case Class::Sequence: return detail_->element == o.detail_->element;
    case Class::Enum:
      return scalar_ == o.scalar_ && big_endian_ == o.big_endian_ && detail_->values == o.detail_->values;
    case Class::Compound: {
      if (detail_->size != o.detail_->size || detail_->members.size() != o.detail_->members.size()) return false;
      for (std::size_t i = 0; i < detail_->members.size(); ++i) {
        const Member &a = detail_->members[i], &b = o.detail_->members[i];
        if (a.name != b.name || a.offset != b.offset || a.type != b.type) return false;
      }
      return true;
    }
  }
  return false;
}

// A compound member or a sequence's element: as format_element, but a
// variable-length string there is a char* (HDF5's layout), not a std::string.
static std::string format_part(const Datatype& t, const unsigned char* p) {
  if (!t.is_varstring()) return format_element(t, p);
  const char* text = nullptr;
  std::memcpy(&text, p, sizeof text);
  return text ? "\"" + std::string(text) + "\"" : "null";
}

std::string format_element(const Datatype& t, const void* p) {
  const auto* bytes = static_cast<const unsigned char*>(p);
  switch (t.type_class()) {
    case Datatype::Class::Scalar:
      return dispatch_scalar(t.scalar(), [&](auto v) {
        std::memcpy(&v, bytes, sizeof v);
        std::ostringstream os;
        if constexpr (std::is_same_v<decltype(v), Float16>) os.precision(5);  // enough to tell halves apart
        else if constexpr (std::is_floating_point_v<decltype(v)>) os.precision(17);
        if constexpr (sizeof v == 1) os << int(v);
        else os << v;
        return os.str();
      });
    case Datatype::Class::String: {
      std::size_t n = 0;
      while (n < t.size() && bytes[n]) ++n;
      return "\"" + std::string(reinterpret_cast<const char*>(bytes), n) + "\"";
    }
    case Datatype::Class::VarString: return "\"" + *static_cast<const std::string*>(p) + "\"";
    case Datatype::Class::Reference: {
      ObjectRef r;
      std::memcpy(&r, bytes, sizeof r);
      return r.is_null() ? "null reference" : "reference " + std::to_string(r.token);
    }
    case Datatype::Class::Opaque: {
      static const char hex[] = "0123456789abcdef";
      std::string out = "0x";
      for (std::size_t i = 0; i < t.size(); ++i) (out += hex[bytes[i] >> 4]) += hex[bytes[i] & 15];
      return out;
    }
    case Datatype::Class::Enum: {
      const int64_t value = dispatch_scalar(t.scalar(), [&](auto v) {
        std::memcpy(&v, bytes, sizeof v);
        return static_cast<int64_t>(v);
      });
      for (const auto& [name, v] : t.enum_values())
        if (v == value) return name;
      return std::to_string(value);
    }
    case Datatype::Class::Array: {
      std::string out = "[";
      const Datatype& e = t.array_element();
      for (uint64_t i = 0; i < t.array_count(); ++i) out += (i ? ", " : "") + format_element(e, bytes + i * e.size());
      return out + "]";
    }
    case Datatype::Class::Sequence: {
      VarSequence v;
      std::memcpy(&v, bytes, sizeof v);
      const Datatype& e = t.sequence_element();
      std::string out = "[";
      for (std::size_t i = 0; i < v.length && v.data; ++i)
        out += (i ? ", " : "") + format_part(e, static_cast<const unsigned char*>(v.data) + i * member_size(e));
      return out + "]";
    }
    case Datatype::Class::Compound: {
      std::string out = "{";
      for (std::size_t i = 0; i < t.members().size(); ++i) {
        const Member& m = t.members()[i];
        out += (i ? ", " : "") + m.name + ": " + format_part(m.type, bytes + m.offset);
      }
      return out + "}";
    }
  }
  return "?";
}

void clear_padding(const Datatype& t, void* data, std::size_t count) {
  if (t.is_array()) return clear_padding(t.array_element(), data, count * t.array_count());
  if (!t.is_compound()) return;
  auto* bytes = static_cast<unsigned char*>(data);
  std::vector<bool> covered(t.size(), false);
  for (const auto& m : t.members())
    for (std::size_t b = 0; b < member_size(m.type); ++b) covered[m.offset + b] = true;
  for (std::size_t i = 0; i < count; ++i) {
    unsigned char* element = bytes + i * t.size();
    for (std::size_t b = 0; b < t.size(); ++b)
      if (!covered[b]) element[b] = 0;
    for (const auto& m : t.members()) clear_padding(m.type, element + m.offset, 1);
  }
}

bool holds_references(const Datatype& t) {
  switch (t.type_class()) {
    case Datatype::Class::Reference: return true;
    case Datatype::Class::Sequence: return holds_references(t.sequence_element());
    case Datatype::Class::Array: return holds_references(t.array_element());
    case Datatype::Class::Compound:
      for (const auto& m : t.members())
        if (holds_references(m.type)) return true;
      return false;
    default: return false;
  }
}

void for_each_reference(const Datatype& t, void* data, std::size_t count, const std::function<void(ObjectRef&)>& fn) {
  if (!holds_references(t)) return;
  if (t.is_array()) return for_each_reference(t.array_element(), data, count * t.array_count(), fn);
  auto* bytes = static_cast<unsigned char*>(data);
  for (std::size_t i = 0; i < count; ++i) {
    unsigned char* element = bytes + i * t.size();
    if (t.is_sequence()) {  // a VarSequence (hvl_t): its elements
      VarSequence s;
      std::memcpy(&s, element, sizeof s);
      if (s.length) for_each_reference(t.sequence_element(), s.data, s.length, fn);
    } else if (t.is_reference()) {
      ObjectRef r;  // elements of a compound need not be aligned
      std::memcpy(&r, element, sizeof r);
      fn(r);
      std::memcpy(element, &r, sizeof r);
    } else {
      for (const auto& m : t.members()) for_each_reference(m.type, element + m.offset, 1, fn);
    }
  }
}

std::size_t datatype_size(const Datatype& t) { return t.size(); }
std::string datatype_name(const Datatype& t) { return t.name(); }

// ---- reading names back ----------------------------------------------------------

namespace {

[[noreturn]] void bad_name(std::string_view all, const std::string& why) {
  throw DatatypeError("cannot read datatype name '" + std::string(all) + "': " + why +
                      " (expected int8..int64, uint8..uint64, float32, float64, a numpy code like 'f8', "
                      "string[N], utf8[N], string, utf8, reference, enum<T>{...}, compound[N]{...}, array<T>[N, ...], vlen<T> or "
                      "opaque[N]{tag})");
}

struct NameReader {
  std::string_view all, s;
  std::size_t at = 0;

  void skip() {
    while (at < s.size() && s[at] == ' ') ++at;
  }
  bool eat(char c) {
    skip();
    if (at < s.size() && s[at] == c) return ++at, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) bad_name(all, std::string("expected '") + c + "' at position " + std::to_string(at));
  }
  std::string word() {  // a name: quoted, or anything up to a delimiter
    skip();
    std::size_t b = at;
    if (at < s.size() && s[at] == '"') {
      std::string w;
      for (++at; at < s.size() && s[at] != '"'; ++at) {
        if (s[at] == '\\' && at + 1 < s.size()) ++at;
        w += s[at];
      }
      if (at >= s.size()) bad_name(all, "a quoted name is not closed");
      ++at;
      return w;
    }
    while (at < s.size() && std::string(":,{}[]<>@").find(s[at]) == std::string::npos) ++at;
    std::string w(s.substr(b, at - b));
    while (!w.empty() && w.back() == ' ') w.pop_back();
    if (w.empty()) bad_name(all, "a name is missing at position " + std::to_string(b));
    return w;
  }
  uint64_t number() {
    skip();
    std::size_t b = at;
    bool neg = at < s.size() && s[at] == '-';
    if (neg) ++at;
    uint64_t v = 0;
    while (at < s.size() && std::isdigit(static_cast<unsigned char>(s[at]))) {
      if (v > (~uint64_t{0} - 9) / 10) bad_name(all, "a number is too large");
      v = v * 10 + uint64_t(s[at++] - '0');
    }
    if (at == b + (neg ? 1 : 0)) bad_name(all, "a number is missing at position " + std::to_string(b));
    return neg ? uint64_t(-int64_t(v)) : v;
  }
  Datatype type(int depth) {
    if (depth > 16) bad_name(all, "compounds, arrays and sequences nest more than 16 deep");
    skip();
    // numpy byte-order prefixes: native and little-endian are the default, '>' big-endian.
    bool big = false;
    if (at < s.size() && (s[at] == '<' || s[at] == '=' || s[at] == '|' || s[at] == '>')) big = s[at++] == '>';
    std::string w = word();
    if (big) return scalar_or_numpy(w).with_byte_order(ByteOrder::Big);
    std::string lower = w;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower == "reference") return Datatype::reference();
    if (lower == "string" || lower == "utf8") {
      const auto charset = lower == "utf8" ? Datatype::Charset::Utf8 : Datatype::Charset::Ascii;
      if (!eat('[')) return Datatype::varstring(charset);
      auto n = number();
      auto padding = Datatype::Padding::NullPad;
      if (eat(',')) {
        const std::string p = word();
        if (p == "nullterm") padding = Datatype::Padding::NullTerm;
        else if (p == "spacepad") padding = Datatype::Padding::SpacePad;
        else if (p != "nullpad") bad_name(all, "unknown string padding '" + p + "' (nullpad, nullterm or spacepad)");
      }
      expect(']');
      return Datatype::string(n, charset, padding);
    }
    if (lower == "enum") {
      expect('<');
      const auto [base, order] = ordered_scalar(word());
      expect('>');
      expect('{');
      std::vector<std::pair<std::string, int64_t>> values;
      do {
        std::string n = word();
        expect(':');
        values.emplace_back(n, int64_t(number()));
      } while (eat(','));
      expect('}');
      return Datatype::enumeration(base, std::move(values)).with_byte_order(order);
    }
    if (lower == "opaque") {
      expect('[');
      auto size = number();
      expect(']');
      std::string tag;
      if (eat('{')) {
        tag = word();
        expect('}');
      }
      return Datatype::opaque(size, std::move(tag));
    }
    if (lower == "vlen") {
      expect('<');
      Datatype element = type(depth + 1);
      expect('>');
      return Datatype::sequence(element);
    }
    if (lower == "array") {
      expect('<');
      Datatype element = type(depth + 1);
      expect('>');
      expect('[');
      std::vector<uint64_t> dims;
      do dims.push_back(number());
      while (eat(','));
      expect(']');
      return Datatype::array(element, std::move(dims));
    }
    if (lower == "compound") {
      expect('[');
      auto size = number();
      expect(']');
      expect('{');
      std::vector<Member> members;
      do {
        Member m;
        m.name = word();
        expect(':');
        m.type = type(depth + 1);
        expect('@');
        m.offset = number();
        members.push_back(std::move(m));
      } while (eat(','));
      expect('}');
      return Datatype::compound(std::move(members), size);
    }
    return scalar_or_numpy(w);
  }
  Datatype scalar_or_numpy(std::string w) {
    std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return std::tolower(c); });
    // numpy byte-order prefixes: native and little-endian are what we store.
    if (!w.empty() && (w[0] == '<' || w[0] == '=' || w[0] == '|')) w.erase(0, 1);
    if (w.size() > 1 && w[0] == 's' && std::all_of(w.begin() + 1, w.end(), ::isdigit))
      return Datatype::string(std::stoull(w.substr(1)));
    if (w.size() > 1 && w[0] == 'v' && std::all_of(w.begin() + 1, w.end(), ::isdigit))  // numpy's void
      return Datatype::opaque(std::stoull(w.substr(1)));
    const auto [s, order] = ordered_scalar(w);
    return Datatype(s).with_byte_order(order);
  }
  // A scalar name with the suffix "be" (big-endian in files) or "le" ("int32be").
  std::pair<Scalar, ByteOrder> ordered_scalar(std::string w) {
    std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return std::tolower(c); });
    ByteOrder order = ByteOrder::Little;
    if (w.size() > 2 && (w.compare(w.size() - 2, 2, "be") == 0 || w.compare(w.size() - 2, 2, "le") == 0) &&
        std::isdigit(static_cast<unsigned char>(w[w.size() - 3]))) {
      if (w.back() == 'e' && w[w.size() - 2] == 'b') order = ByteOrder::Big;
      w.resize(w.size() - 2);
    }
    return {scalar(w), order};
  }
  Scalar scalar(std::string w) {
    std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return std::tolower(c); });
    if (!w.empty() && (w[0] == '<' || w[0] == '=' || w[0] == '|')) w.erase(0, 1);
    static const std::pair<const char*, Scalar> table[] = {
        {"int8", Scalar::Int8},       {"i1", Scalar::Int8},         {"int16", Scalar::Int16},
        {"i2", Scalar::Int16},        {"int32", Scalar::Int32},     {"i4", Scalar::Int32},
        {"int64", Scalar::Int64},     {"i8", Scalar::Int64},        {"uint8", Scalar::UInt8},
        {"u1", Scalar::UInt8},        {"uint16", Scalar::UInt16},   {"u2", Scalar::UInt16},
        {"uint32", Scalar::UInt32},   {"u4", Scalar::UInt32},       {"uint64", Scalar::UInt64},
        {"u8", Scalar::UInt64},       {"float32", Scalar::Float32}, {"f4", Scalar::Float32},
        {"float", Scalar::Float32},   {"float64", Scalar::Float64}, {"f8", Scalar::Float64},
        {"double", Scalar::Float64},  {"float16", Scalar::Float16}, {"f2", Scalar::Float16},
        {"half", Scalar::Float16},
    };
    for (const auto& [key, value] : table)
      if (w == key) return value;
    bad_name(all, "unknown type '" + w + "'");
  }
};

}  // namespace

Datatype datatype_from_name(std::string_view name) {
  // The names datatype_name gives plain scalars, at once: a log's metadata
  // names one per dataset, and the reader below copies and lowers the word
  // several times over.
  for (std::size_t code = 0; code < std::size(kScalarNames); ++code)
    if (name == kScalarNames[code]) return Datatype(Scalar(code)).with_byte_order(ByteOrder::Little);  // as the reader makes it
  NameReader r{name, name};
  Datatype t = r.type(0);
  r.skip();
  if (r.at != name.size()) bad_name(name, "unexpected text at position " + std::to_string(r.at));
  return t;
}

}  // namespace h5loom
