// netCDF-4's HDF5 conventions (docs/formats/netcdf4.md): the attribute names
// and values by which netCDF-C, h5netcdf and HDF5's dimension-scale API know
// dimensions and the variables over them. The netCDF layer (netcdf_file.cpp)
// decides *what* to write; this file says *how* each piece looks in HDF5.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "h5loom/h5loom.hpp"

namespace h5loom::netcdf::conventions {

// Bookkeeping attributes: netCDF readers hide them; so does the layer.
inline constexpr const char* kClass = "CLASS";
inline constexpr const char* kName = "NAME";
inline constexpr const char* kDimensionList = "DIMENSION_LIST";
inline constexpr const char* kReferenceList = "REFERENCE_LIST";
inline constexpr const char* kDimid = "_Netcdf4Dimid";
inline constexpr const char* kCoordinates = "_Netcdf4Coordinates";
inline constexpr const char* kProperties = "_NCProperties";
inline constexpr const char* kFillValue = "_FillValue";
inline constexpr const char* kDimensionScale = "DIMENSION_SCALE";
// The NAME of a scale that is a dimension and not a variable; netCDF-C
// appends the length as "%10d" and readers only compare this prefix.
inline constexpr const char* kNotAVariable = "This is a netCDF dimension but not a netCDF variable.";

bool is_bookkeeping_attribute(const std::string& name);

// Whether netCDF has `dtype` as a numeric type (NC_BYTE ... NC_UINT64, NC_FLOAT, NC_DOUBLE).
bool is_netcdf_numeric(const Datatype& dtype);
// netCDF's default fill for such a type (NC_FILL_BYTE, ...), one element.
std::vector<unsigned char> default_fill(const Datatype& dtype);

// A C string as H5LTset_attribute_string writes it (CLASS, NAME,
// _NCProperties): scalar, ASCII, NUL-terminated, strlen + 1 bytes - fixed
// length, which h5netcdf requires.
AttributeValue c_string(const std::string& text);
// A text attribute as netCDF-C writes NC_CHAR: scalar, ASCII, exactly the
// text's bytes (one NUL byte when empty).
AttributeValue nc_char(const std::string& text);
// A user's attribute value as netCDF stores it: numbers as 1-D arrays, text
// as NC_CHAR, a list of strings as NC_STRING. DatatypeError naming `where`
// for what netCDF cannot hold.
AttributeValue stored_attribute(const AttributeValue& value, const std::string& where);

// The text of a string attribute however it was stored (variable-length, or
// one fixed-length string - engines differ in how they give those back); none otherwise.
std::optional<std::string> text_of(const AttributeValue& value);

// The NAME of a dimension without a coordinate variable.
std::string not_a_variable_name(uint64_t length);
bool names_a_hidden_dimension(const AttributeValue& name);

// DIMENSION_LIST: for each axis, a sequence holding the reference to its scale.
AttributeValue dimension_list(const std::vector<ObjectRef>& scales);
// The references of a DIMENSION_LIST, one per axis (the first of each
// sequence); CorruptionError naming `where` if an axis has none.
std::vector<ObjectRef> read_dimension_list(const AttributeValue& value, const std::string& where);

// REFERENCE_LIST: the (variable, axis) pairs a scale is attached to, as
// HDF5's H5DS writes them: compound {"dataset": reference, "dimension": int32}.
struct ScaleUse {
  ObjectRef variable;
  int axis = 0;
};
AttributeValue reference_list(const std::vector<ScaleUse>& uses);

// "version=2,h5loom=<version>,hdf5=<version>".
std::string properties_text();

}  // namespace h5loom::netcdf::conventions
