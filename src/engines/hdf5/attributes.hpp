// Attribute values as HDF5 attributes and back (the hdf5 engine's part that
// maps AttributeValue: strings, string lists, and elements of any fixed-size type).
#pragma once

#include <hdf5.h>

#include <string>

#include "h5loom/types.hpp"

namespace h5loom::hdf5 {

// Creates (or replaces) attribute `name` of the open object `obj`. Strings are
// fixed-length, NUL-terminated UTF-8: a scalar for one, 1-D for a list.
// `where` names the attribute in errors. `named_type`, if given, is the open
// committed datatype to create it with (AttributeValue::named_type).
void write_attribute_value(hid_t obj, const std::string& name, const AttributeValue& value, const std::string& where,
                           hid_t named_type = H5I_INVALID_HID);
// Reads attribute `name` of `obj`: fixed or variable-length strings as text,
// anything else as elements of its h5loom datatype (`object` names it in a
// DatatypeError for types h5loom does not model), with the path of the
// committed datatype it was created with, if any.
AttributeValue read_attribute_value(hid_t obj, const std::string& name, const std::string& object,
                                    const std::string& where);

}  // namespace h5loom::hdf5
