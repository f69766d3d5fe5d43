// Shape helpers and AttributeValue.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "h5loom/types.hpp"

#include "h5loom/variable_length.hpp"

namespace h5loom {

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

uint64_t row_major_index(const Dims& at, const Dims& shape) {
  uint64_t i = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + at[d];
  return i;
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
  if (dtype.is_varstring())
    throw DatatypeError("an attribute of variable-length strings is a string or a list of strings "
                        "(AttributeValue(std::string), AttributeValue(std::vector<std::string>))");
  if (dtype.has_variable_length_parts()) {
    v.bytes_ = pack_variable_length(dtype, data, count);  // no pointers kept: a value like any other
    return v;
  }
  v.bytes_.resize(count * datatype_size(dtype));
  if (count) std::memcpy(v.bytes_.data(), data, v.bytes_.size());
  clear_padding(dtype, v.bytes_.data(), count);  // equal values, equal bytes
  if (dtype.is_string()) {  // fixed-length strings read as text too (as_string, as_strings): up to a NUL
    const auto* p = reinterpret_cast<const char*>(v.bytes_.data());
    for (std::size_t i = 0; i < count; ++i) {
      std::string text(p + i * dtype.size(), std::find(p + i * dtype.size(), p + (i + 1) * dtype.size(), '\0'));
      if (dtype.padding() == Datatype::Padding::SpacePad) text.erase(text.find_last_not_of(' ') + 1);
      v.strings_.push_back(std::move(text));
    }
    if (kind == Kind::Scalar && count == 1) v.text_ = v.strings_[0];
  }
  return v;
}

AttributeValue AttributeValue::from_stored(Kind kind, Datatype dtype, std::size_t count, const void* data,
                                           std::size_t size) {
  if (kind == Kind::String || !dtype.has_variable_length_parts()) {
    if (kind != Kind::String && size != count * datatype_size(dtype))
      throw CorruptionError("an attribute of " + std::to_string(count) + " elements of " + dtype.name() + " has " +
                            std::to_string(size) + " bytes");
    return from_raw(kind, dtype, kind == Kind::String ? size : count, data);
  }
  if (count > size / min_packed_element_size(dtype))
    throw CorruptionError("an attribute of " + std::to_string(count) + " elements of " + dtype.name() + " has only " +
                          std::to_string(size) + " packed bytes");
  // The packed bytes must be exactly `count` elements: walked, nothing allocated.
  const auto* packed = static_cast<const unsigned char*>(data);
  std::size_t at = 0;
  for (std::size_t i = 0; i < count; ++i) at += packed_element_size(dtype, packed + at, size - at);
  if (at != size)
    throw CorruptionError("an attribute of " + std::to_string(count) + " elements of " + dtype.name() + " has " +
                          std::to_string(size - at) + " packed bytes after its last element");
  AttributeValue v;
  v.kind_ = kind;
  v.dtype_ = std::move(dtype);
  v.count_ = count;
  v.bytes_.assign(static_cast<const unsigned char*>(data), static_cast<const unsigned char*>(data) + size);
  return v;
}

AttributeValue AttributeValue::with_references_translated(const std::function<void(ObjectRef&)>& fn) const {
  if (!is_numeric() || !holds_references(dtype_)) return *this;
  AttributeValue out;
  if (!dtype_.has_variable_length_parts()) {
    std::vector<unsigned char> bytes = bytes_;
    for_each_reference(dtype_, bytes.data(), count_, fn);
    out = from_raw(kind_, dtype_, count_, bytes.data());
  } else {  // in memory form, where the references sit inside the sequences; packed again by from_raw
    ElementBuffer elements(dtype_, count_);
    unpack_variable_length(dtype_, bytes_.data(), bytes_.size(), elements.data(), count_);
    for_each_reference(dtype_, elements.data(), count_, fn);
    out = from_raw(kind_, dtype_, count_, elements.data());
  }
  return out.set_named_type(named_type_);
}

void AttributeValue::copy_elements(void* out) const {
  if (!is_numeric()) throw DatatypeError("attribute holds " + to_string() + ", not elements of a datatype");
  if (dtype_.has_variable_length_parts()) unpack_variable_length(dtype_, bytes_.data(), bytes_.size(), out, count_);
  else if (!bytes_.empty()) std::memcpy(out, bytes_.data(), bytes_.size());
}

AttributeValue AttributeValue::empty(Datatype dtype) {
  AttributeValue v;
  v.kind_ = Kind::Empty;
  v.dtype_ = std::move(dtype);
  return v;
}

namespace detail {

void throw_not_a_value_of(const std::string& value, std::size_t element, const Datatype& stored,
                          const std::string& wanted) {
  throw DatatypeError("attribute value " + value + " (element " + std::to_string(element) + " of its " +
                      stored.name() + " values) is not a value of " + wanted +
                      ": read it as a type that holds it (e.g. float64)");
}

std::string number_text(double v, bool single) {
  char buf[32];
  for (int digits = 6; digits < 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (single ? std::strtof(buf, nullptr) == float(v) : std::strtod(buf, nullptr) == v) return buf;
  }
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace detail

void AttributeValue::require_numeric() const {
  if (!is_numeric()) throw DatatypeError("attribute holds " + to_string() + ", not numbers");
}

const std::vector<std::string>& AttributeValue::as_strings() const {
  if (kind_ != Kind::StringArray && !(kind_ == Kind::Array && dtype_.is_string()))
    throw DatatypeError("attribute holds " + to_string() + ", not an array of strings");
  return strings_;
}

std::vector<ObjectRef> AttributeValue::as_references() const {
  if (kind_ == Kind::String || kind_ == Kind::StringArray || !dtype_.is_reference())
    throw DatatypeError("attribute holds " + to_string() + ", not object references");
  std::vector<ObjectRef> out(count_);
  if (count_) std::memcpy(out.data(), bytes_.data(), count_ * sizeof(ObjectRef));
  return out;
}

const std::string& AttributeValue::as_string() const {
  if (kind_ != Kind::String && !(kind_ == Kind::Scalar && dtype_.is_string()))
    throw DatatypeError("attribute holds " + to_string() + ", not a string");
  return text_;
}

std::string AttributeValue::to_string() const {
  if (kind_ == Kind::Empty) return "no value (" + dtype_.name() + ")";
  if (kind_ == Kind::String) return "\"" + text_ + "\"";
  if (kind_ == Kind::StringArray) {
    std::string out = "[";
    for (std::size_t i = 0; i < strings_.size(); ++i) out += (i ? ", \"" : "\"") + strings_[i] + "\"";
    return out + "]";
  }
  if (dtype_.has_variable_length_parts()) {
    ElementBuffer elements(dtype_, count_);
    copy_elements(elements.data());
    std::string out = kind_ == Kind::Array ? "[" : "";
    for (std::size_t i = 0; i < count_; ++i) out += (i ? ", " : "") + format_element(dtype_, elements.element(i));
    return out + (kind_ == Kind::Array ? "]" : "");
  }
  if (!dtype_.is_scalar()) {  // compounds, enums, references: element by element
    std::string out = kind_ == Kind::Array ? "[" : "";
    for (std::size_t i = 0; i < count_; ++i)
      out += (i ? ", " : "") + format_element(dtype_, bytes_.data() + i * dtype_.size());
    return out + (kind_ == Kind::Array ? "]" : "");
  }
  std::ostringstream os;
  const bool is_float = !is_integer(dtype_.scalar());
  if (kind_ == Kind::Array) os << '[';
  for (std::size_t i = 0; i < count_; ++i) {
    if (i) os << ", ";
    if (is_float) os << element_as_double_or_int<double>(i);
    else if (dtype_.scalar() == Scalar::UInt64) os << element_as_double_or_int<uint64_t>(i);
    else os << element_as_double_or_int<int64_t>(i);
  }
  if (kind_ == Kind::Array) os << ']';
  return os.str();
}

}  // namespace h5loom
