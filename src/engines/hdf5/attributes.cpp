#include "engines/hdf5/attributes.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "h5loom/variable_length.hpp"
#include "hdf5lib/types.hpp"

namespace h5loom::hdf5 {

using hdf5lib::check;
using hdf5lib::checked;
using hdf5lib::datatype_of_hdf5;
using hdf5lib::file_type;
using hdf5lib::Hid;
using hdf5lib::memory_type;

void write_attribute_value(hid_t obj, const std::string& name, const AttributeValue& value, const std::string& where,
                           hid_t named_type) {
  if (H5Aexists(obj, name.c_str()) > 0) check(H5Adelete(obj, name.c_str()), "replacing " + where);
  if (value.is_string() || value.is_string_array()) {
    // Fixed-length, NUL-terminated UTF-8: a scalar for one string, 1-D for a list.
    std::vector<std::string> strings =
        value.is_string() ? std::vector<std::string>{value.as_string()} : value.as_strings();
    std::size_t width = 1;
    for (const auto& x : strings) width = std::max(width, x.size() + 1);
    std::vector<char> buf(strings.size() * width, '\0');
    for (std::size_t i = 0; i < strings.size(); ++i) std::memcpy(&buf[i * width], strings[i].data(), strings[i].size());
    Hid type = checked(H5Tcopy(H5T_C_S1), H5Tclose, "creating a string type");
    check(H5Tset_size(type.get(), width), "sizing a string type");
    check(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), "setting string padding");
    check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "setting string encoding");
    hsize_t n = strings.size();
    Hid space = value.is_string() ? checked(H5Screate(H5S_SCALAR), H5Sclose, "creating a scalar space")
                                  : checked(H5Screate_simple(1, &n, nullptr), H5Sclose, "creating a string list space");
    Hid attr = checked(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                       H5Aclose, "creating " + where);
    if (!buf.empty()) check(H5Awrite(attr.get(), type.get(), buf.data()), "writing " + where);
    return;
  }
  Hid space;
  if (value.is_empty()) {
    space = checked(H5Screate(H5S_NULL), H5Sclose, "creating a null space");
  } else if (value.kind() == AttributeValue::Kind::Scalar) {
    space = checked(H5Screate(H5S_SCALAR), H5Sclose, "creating a scalar space");
  } else {
    hsize_t n = value.size();
    space = checked(H5Screate_simple(1, &n, nullptr), H5Sclose, "creating an attribute space");
  }
  const Hid own = named_type < 0 ? file_type(value.dtype()) : Hid();
  Hid attr = checked(H5Acreate2(obj, name.c_str(), named_type < 0 ? own.get() : named_type, space.get(), H5P_DEFAULT,
                                H5P_DEFAULT),
                     H5Aclose, "creating " + where);
  if (value.size() == 0) return;
  if (value.dtype().has_variable_length_parts()) {  // HDF5 takes them in memory layout
    ElementBuffer elements(value.dtype(), value.size());
    value.copy_elements(elements.data());
    check(H5Awrite(attr.get(), memory_type(value.dtype()).get(), elements.data()), "writing " + where);
    return;
  }
  check(H5Awrite(attr.get(), memory_type(value.dtype()).get(), value.data()), "writing " + where);
}

AttributeValue read_attribute_value(hid_t obj, const std::string& name, const std::string& object,
                                    const std::string& where) {
  Hid attr = checked(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose, "opening " + where);
  Hid type = checked(H5Aget_type(attr.get()), H5Tclose, "reading the type of " + where);
  Hid space = checked(H5Aget_space(attr.get()), H5Sclose, "reading the shape of " + where);
  H5S_class_t space_class = H5Sget_simple_extent_type(space.get());
  if (space_class == H5S_NULL)
    return AttributeValue::empty(datatype_of_hdf5(type.get(), object))
        .set_named_type(hdf5lib::committed_type_path(type.get(), "the type of " + where));
  const hssize_t npoints = H5Sget_simple_extent_npoints(space.get());

  // Text: variable-length strings and NUL-terminated fixed-length ones (what
  // write_attribute_value writes for text, and C strings elsewhere: netCDF,
  // openPMD). NUL- or space-padded fields of bytes keep their type, as the
  // log engine keeps it, so the VOL connector gives HDF5 the type it stored.
  const bool is_string = H5Tget_class(type.get()) == H5T_STRING;
  const bool variable = is_string && H5Tis_variable_str(type.get()) > 0;
  if (is_string && (variable || H5Tget_strpad(type.get()) == H5T_STR_NULLTERM)) {
    std::vector<std::string> strings(static_cast<std::size_t>(npoints));
    if (variable) {
      Hid mtype = checked(H5Tcopy(H5T_C_S1), H5Tclose, "creating a string type");
      H5Tset_size(mtype.get(), H5T_VARIABLE);
      // The stored character set: HDF5 converts no variable-length string to another (h5py writes UTF-8).
      H5Tset_cset(mtype.get(), H5Tget_cset(type.get()));
      std::vector<char*> ptrs(strings.size(), nullptr);
      if (!ptrs.empty()) check(H5Aread(attr.get(), mtype.get(), ptrs.data()), "reading " + where);
      for (std::size_t i = 0; i < ptrs.size(); ++i) {
        strings[i] = ptrs[i] ? ptrs[i] : "";
        H5free_memory(ptrs[i]);
      }
    } else {
      std::size_t width = H5Tget_size(type.get());
      std::vector<char> buf(strings.size() * width + 1, '\0');
      if (!strings.empty()) check(H5Aread(attr.get(), type.get(), buf.data()), "reading " + where);
      for (std::size_t i = 0; i < strings.size(); ++i) {
        std::string x(&buf[i * width], width);
        x.resize(std::strlen(x.c_str()));  // up to the first NUL
        strings[i] = std::move(x);
      }
    }
    if (space_class == H5S_SCALAR) return AttributeValue(strings.at(0));
    return AttributeValue(std::move(strings));
  }
  Datatype dt = datatype_of_hdf5(type.get(), object);
  const std::string named = hdf5lib::committed_type_path(type.get(), "the type of " + where);
  std::vector<unsigned char> buf(static_cast<std::size_t>(npoints) * datatype_size(dt));
  auto kind = space_class == H5S_SCALAR ? AttributeValue::Kind::Scalar : AttributeValue::Kind::Array;
  if (npoints == 0) return AttributeValue::from_raw(kind, dt, 0, buf.data()).set_named_type(named);
  Hid mem = memory_type(dt);
  check(H5Aread(attr.get(), mem.get(), buf.data()), "reading " + where);
  if (!dt.has_variable_length_parts())
    return AttributeValue::from_raw(kind, dt, static_cast<std::size_t>(npoints), buf.data()).set_named_type(named);
  // The parts HDF5 allocated: copied into the value, then released by HDF5.
  struct Release {
    hid_t type, space;
    void* buf;
    ~Release() { H5Treclaim(type, space, H5P_DEFAULT, buf); }
  } release{mem.get(), space.get(), buf.data()};
  AttributeValue value = AttributeValue::from_raw(kind, dt, static_cast<std::size_t>(npoints), buf.data());
  return value.set_named_type(named);
}

}  // namespace h5loom::hdf5
