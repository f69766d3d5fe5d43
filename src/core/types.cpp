// Datatype names and sizes, shape helpers and AttributeValue.
#include <algorithm>
#include <cctype>
#include <sstream>

#include "h5loom/types.hpp"

namespace h5loom {

std::size_t datatype_size(Datatype t) {
  switch (t) {
    case Datatype::Int8: case Datatype::UInt8: return 1;
    case Datatype::Int16: case Datatype::UInt16: return 2;
    case Datatype::Int32: case Datatype::UInt32: case Datatype::Float32: return 4;
    case Datatype::Int64: case Datatype::UInt64: case Datatype::Float64: return 8;
  }
  return 0;
}

std::string datatype_name(Datatype t) {
  switch (t) {
    case Datatype::Int8: return "int8";
    case Datatype::Int16: return "int16";
    case Datatype::Int32: return "int32";
    case Datatype::Int64: return "int64";
    case Datatype::UInt8: return "uint8";
    case Datatype::UInt16: return "uint16";
    case Datatype::UInt32: return "uint32";
    case Datatype::UInt64: return "uint64";
    case Datatype::Float32: return "float32";
    case Datatype::Float64: return "float64";
  }
  return "unknown";
}

Datatype datatype_from_name(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  // numpy byte-order prefixes: native and little-endian are what we store.
  if (!n.empty() && (n[0] == '<' || n[0] == '=' || n[0] == '|')) n.erase(0, 1);
  static const std::pair<const char*, Datatype> table[] = {
      {"int8", Datatype::Int8},       {"i1", Datatype::Int8},         {"int16", Datatype::Int16},
      {"i2", Datatype::Int16},        {"int32", Datatype::Int32},     {"i4", Datatype::Int32},
      {"int64", Datatype::Int64},     {"i8", Datatype::Int64},        {"uint8", Datatype::UInt8},
      {"u1", Datatype::UInt8},        {"uint16", Datatype::UInt16},   {"u2", Datatype::UInt16},
      {"uint32", Datatype::UInt32},   {"u4", Datatype::UInt32},       {"uint64", Datatype::UInt64},
      {"u8", Datatype::UInt64},       {"float32", Datatype::Float32}, {"f4", Datatype::Float32},
      {"float", Datatype::Float32},   {"float64", Datatype::Float64}, {"f8", Datatype::Float64},
      {"double", Datatype::Float64},
  };
  for (const auto& [key, value] : table)
    if (n == key) return value;
  throw DatatypeError("unknown datatype name '" + std::string(name) +
                      "' (expected int8..int64, uint8..uint64, float32, float64 or a numpy code like 'f8')");
}

std::string dims_to_string(const Dims& d) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (i) os << ", ";
    if (d[i] == kUnlimited) os << "inf";
    else os << d[i];
  }
  os << ']';
  return os.str();
}

uint64_t product(const Dims& d) {
  uint64_t p = 1;
  for (auto x : d) p *= x;
  return p;
}

AttributeValue AttributeValue::from_raw(Kind kind, Datatype dtype, std::size_t count, const void* data) {
  AttributeValue v;
  v.kind_ = kind;
  v.dtype_ = dtype;
  v.count_ = count;
  if (kind == Kind::String) {
    v.text_.assign(static_cast<const char*>(data), count);
    v.count_ = 0;
    return v;
  }
  v.bytes_.resize(count * datatype_size(dtype));
  if (count) std::memcpy(v.bytes_.data(), data, v.bytes_.size());
  return v;
}

void AttributeValue::require_numeric() const {
  if (!is_numeric()) throw DatatypeError("attribute holds " + to_string() + ", not numbers");
}

const std::vector<std::string>& AttributeValue::as_strings() const {
  if (kind_ != Kind::StringArray) throw DatatypeError("attribute holds " + to_string() + ", not an array of strings");
  return strings_;
}

const std::string& AttributeValue::as_string() const {
  if (kind_ != Kind::String) throw DatatypeError("attribute holds " + to_string() + ", not a string");
  return text_;
}

std::string AttributeValue::to_string() const {
  if (kind_ == Kind::String) return "\"" + text_ + "\"";
  if (kind_ == Kind::StringArray) {
    std::string out = "[";
    for (std::size_t i = 0; i < strings_.size(); ++i) out += (i ? ", \"" : "\"") + strings_[i] + "\"";
    return out + "]";
  }
  std::ostringstream os;
  bool is_float = dtype_ == Datatype::Float32 || dtype_ == Datatype::Float64;
  if (kind_ == Kind::Array) os << '[';
  for (std::size_t i = 0; i < count_; ++i) {
    if (i) os << ", ";
    if (is_float) os << element_as_double_or_int<double>(i);
    else if (dtype_ == Datatype::UInt64) os << element_as_double_or_int<uint64_t>(i);
    else os << element_as_double_or_int<int64_t>(i);
  }
  if (kind_ == Kind::Array) os << ']';
  return os.str();
}

}  // namespace h5loom
