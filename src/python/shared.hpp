// What the binding files share (module.cpp, pio_bindings.cpp, netcdf_bindings.cpp).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>

#include <h5loom/h5loom.hpp>

namespace h5loom::python {

namespace nb = nanobind;

// The element type of a numpy array (its dlpack dtype); DatatypeError naming `what` otherwise.
template <class AnyArray>
Datatype datatype_of_array(const AnyArray& a, const std::string& what) {
  auto dt = a.dtype();
  using C = nb::dlpack::dtype_code;
  if (dt.lanes == 1) {
    if (dt.code == static_cast<uint8_t>(C::Int)) {
      switch (dt.bits) {
        case 8: return Datatype::Int8;
        case 16: return Datatype::Int16;
        case 32: return Datatype::Int32;
        case 64: return Datatype::Int64;
      }
    } else if (dt.code == static_cast<uint8_t>(C::UInt)) {
      switch (dt.bits) {
        case 8: return Datatype::UInt8;
        case 16: return Datatype::UInt16;
        case 32: return Datatype::UInt32;
        case 64: return Datatype::UInt64;
      }
    } else if (dt.code == static_cast<uint8_t>(C::Float)) {
      if (dt.bits == 16) return Datatype::Float16;
      if (dt.bits == 32) return Datatype::Float32;
      if (dt.bits == 64) return Datatype::Float64;
    }
  }
  throw DatatypeError("unsupported array element type (code " + std::to_string(dt.code) + ", " +
                      std::to_string(dt.bits) + " bits) for " + what);
}

// An attribute as (kind, dtype name, payload): payload is bytes for numbers, str for strings.
inline nb::tuple attribute_to_python(const AttributeValue& v) {
  static const char* kinds[] = {"scalar", "array", "string", "strings", "empty"};  // by AttributeValue::Kind
  const char* kind = kinds[static_cast<int>(v.kind())];
  if (v.is_empty()) return nb::make_tuple(kind, datatype_name(v.dtype()), nb::none());
  if (v.is_string()) return nb::make_tuple(kind, "", v.as_string());
  if (v.is_string_array()) return nb::make_tuple(kind, "", nb::cast(v.as_strings()));
  // (packed for types with variable-length parts: the package unpacks them)
  return nb::make_tuple(kind, datatype_name(v.dtype()), nb::bytes(static_cast<const char*>(v.data()), v.byte_size()));
}

}  // namespace h5loom::python
