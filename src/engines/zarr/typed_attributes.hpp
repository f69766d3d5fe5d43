// Attributes that Zarr's JSON cannot hold as plain values - compounds, enums,
// opaque and array types, fixed-length strings, variable-length data, values
// without elements (HDF5's null dataspace) - kept exactly in the node's
// "_h5loom" attribute, under "typed_attributes" (docs/formats/zarr.md): the
// type by its h5loom name (datatype_name) and the elements' bytes in base64.
// Other Zarr readers see them only there.
#pragma once

#include <string>

#include "h5loom/engine_plugin.hpp"
#include "h5loom/types.hpp"

namespace h5loom::zarr {

using engine::Json;

// Whether `v` is a plain Zarr attribute (a number, a string, or a list of
// them), which zarr.json holds as JSON.
bool is_plain_attribute(const AttributeValue& v);

// The record of a value that is not plain; DatatypeError naming `name` for
// values the zarr engine does not keep (object references).
Json typed_attribute_json(const std::string& name, const AttributeValue& v);
// The value again; CorruptionError naming `where` and `name` if the record is damaged.
AttributeValue typed_attribute_from_json(const Json& j, const std::string& name, const std::string& where);

}  // namespace h5loom::zarr
