#include "netcdf/conventions.hpp"

#include <H5public.h>

#include <cfloat>
#include <cstdio>
#include <cstring>
#include <limits>

#include "h5loom/variable_length.hpp"

#ifndef H5LOOM_VERSION_STRING
#define H5LOOM_VERSION_STRING "unknown"
#endif

namespace h5loom::netcdf::conventions {

bool is_bookkeeping_attribute(const std::string& name) {
  for (const char* hidden : {kClass, kName, kDimensionList, kReferenceList, kDimid, kCoordinates, kProperties,
                             "_nc3_strict", "_IsNetcdf4", "_SuperblockVersion"})
    if (name == hidden) return true;
  return false;
}

bool is_netcdf_numeric(const Datatype& dtype) {
  return dtype.is_scalar() && dtype.scalar() != Scalar::Float16;
}

namespace {
template <class T>
std::vector<unsigned char> bytes_of(T value) {
  std::vector<unsigned char> out(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}
}  // namespace

std::vector<unsigned char> default_fill(const Datatype& dtype) {
  if (!is_netcdf_numeric(dtype))
    throw DatatypeError("netCDF has no type " + dtype.name() +
                        " (its numeric types: int8, uint8, int16, uint16, int32, uint32, int64, uint64, float32, float64)");
  // netcdf.h's NC_FILL_* values.
  switch (dtype.scalar()) {
    case Scalar::Int8: return bytes_of<int8_t>(-127);
    case Scalar::UInt8: return bytes_of<uint8_t>(255);
    case Scalar::Int16: return bytes_of<int16_t>(-32767);
    case Scalar::UInt16: return bytes_of<uint16_t>(65535);
    case Scalar::Int32: return bytes_of<int32_t>(-2147483647);
    case Scalar::UInt32: return bytes_of<uint32_t>(4294967295U);
    case Scalar::Int64: return bytes_of<int64_t>(-9223372036854775806LL);
    case Scalar::UInt64: return bytes_of<uint64_t>(18446744073709551614ULL);
    case Scalar::Float32: return bytes_of<float>(9.9692099683868690e+36f);
    case Scalar::Float64: return bytes_of<double>(9.9692099683868690e+36);
    case Scalar::Float16: break;
  }
  throw DatatypeError("netCDF has no type " + dtype.name());
}

AttributeValue c_string(const std::string& text) {
  std::vector<char> bytes(text.begin(), text.end());
  bytes.push_back('\0');
  return AttributeValue::from_raw(AttributeValue::Kind::Scalar,
                                  Datatype::string(bytes.size(), Datatype::Charset::Ascii, Datatype::Padding::NullTerm),
                                  1, bytes.data());
}

AttributeValue nc_char(const std::string& text) {
  if (text.empty()) return c_string(text);  // one NUL byte, as netCDF-C 4.9 writes ""
  return AttributeValue::from_raw(AttributeValue::Kind::Scalar,
                                  Datatype::string(text.size(), Datatype::Charset::Ascii, Datatype::Padding::NullTerm),
                                  1, text.data());
}

AttributeValue stored_attribute(const AttributeValue& value, const std::string& where) {
  if (value.is_string()) {
    if (value.as_string().find('\0') != std::string::npos)
      throw DatatypeError(where + ": netCDF text cannot hold a NUL byte");
    return nc_char(value.as_string());
  }
  // A list of strings: an array of NUL-terminated strings, which netCDF reads as NC_STRING.
  if (value.is_string_array()) return value;
  if (value.is_empty() || !is_netcdf_numeric(value.dtype()))
    throw DatatypeError(where + ": netCDF attributes hold numbers (int8 ... uint64, float32, float64) and text, not " +
                        (value.is_empty() ? std::string("an empty value") : value.dtype().name()));
  if (value.kind() == AttributeValue::Kind::Array) return value;
  return AttributeValue::from_raw(AttributeValue::Kind::Array, value.dtype(), value.size(), value.data());
}

std::string not_a_variable_name(uint64_t length) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%10llu", static_cast<unsigned long long>(length));
  return std::string(kNotAVariable) + digits;
}

std::optional<std::string> text_of(const AttributeValue& value) {
  if (value.is_string()) return value.as_string();
  if (value.kind() == AttributeValue::Kind::Scalar && value.dtype().is_string()) return value.as_string();
  return std::nullopt;
}

bool names_a_hidden_dimension(const AttributeValue& name) {
  const auto text = text_of(name);
  return text && text->rfind(kNotAVariable, 0) == 0;
}

AttributeValue dimension_list(const std::vector<ObjectRef>& scales) {
  std::vector<ObjectRef> refs = scales;  // one per axis; each sequence points at its own
  std::vector<VarSequence> lists(refs.size());
  for (std::size_t i = 0; i < refs.size(); ++i) lists[i] = VarSequence{1, &refs[i]};
  return AttributeValue::from_raw(AttributeValue::Kind::Array, Datatype::sequence(Datatype::reference()), lists.size(),
                                  lists.data());
}

std::vector<ObjectRef> read_dimension_list(const AttributeValue& value, const std::string& where) {
  const Datatype expected = Datatype::sequence(Datatype::reference());
  if (!(value.dtype() == expected) || value.kind() != AttributeValue::Kind::Array)
    throw CorruptionError(where + ": DIMENSION_LIST should be a 1-D array of sequences of object references, not " +
                          value.dtype().name());
  ElementBuffer lists(expected, value.size());
  value.copy_elements(lists.data());
  std::vector<ObjectRef> out;
  for (std::size_t axis = 0; axis < value.size(); ++axis) {
    VarSequence seq;
    std::memcpy(&seq, static_cast<const unsigned char*>(lists.data()) + axis * sizeof(VarSequence), sizeof seq);
    if (seq.length == 0)
      throw CorruptionError(where + ": DIMENSION_LIST names no dimension scale for axis " + std::to_string(axis));
    ObjectRef ref;
    std::memcpy(&ref, seq.data, sizeof ref);
    out.push_back(ref);
  }
  return out;
}

AttributeValue reference_list(const std::vector<ScaleUse>& uses) {
  // HDF5's H5DS layout: struct {hobj_ref_t dataset; int dimension;} - 16 bytes.
  const Datatype entry = Datatype::compound({{"dataset", 0, Datatype::reference()}, {"dimension", 8, Datatype::Int32}}, 16);
  std::vector<unsigned char> bytes(uses.size() * 16, 0);
  for (std::size_t i = 0; i < uses.size(); ++i) {
    std::memcpy(&bytes[i * 16], &uses[i].variable, 8);
    const int32_t axis = uses[i].axis;
    std::memcpy(&bytes[i * 16 + 8], &axis, 4);
  }
  return AttributeValue::from_raw(AttributeValue::Kind::Array, entry, uses.size(), bytes.data());
}

std::string properties_text() {
  return "version=2,h5loom=" H5LOOM_VERSION_STRING ",hdf5=" + std::to_string(H5_VERS_MAJOR) + "." +
         std::to_string(H5_VERS_MINOR) + "." + std::to_string(H5_VERS_RELEASE);
}

}  // namespace h5loom::netcdf::conventions
