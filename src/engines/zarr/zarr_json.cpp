#include "engines/zarr/zarr_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "engines/zarr/typed_attributes.hpp"
#include "h5loom/errors.hpp"

namespace h5loom::zarr {

namespace {


// One number as Zarr writes fill values: JSON numbers, and "NaN",
// "Infinity", "-Infinity" for what JSON cannot hold.
Json number_json(Scalar s, const unsigned char* p) {
  return dispatch_scalar(s, [&](auto zero) -> Json {
    using T = decltype(zero);
    T v;
    std::memcpy(&v, p, sizeof(T));
    if constexpr (std::is_same_v<T, Float16> || std::is_floating_point_v<T>) {
      const double d = static_cast<double>(v);
      if (std::isnan(d)) return "NaN";
      if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
      if constexpr (std::is_same_v<T, float>) return static_cast<double>(v);
      else return d;
    } else {
      return v;
    }
  });
}

// The reverse; false if `j` is not a number of that type.
bool number_from_json(Scalar s, const Json& j, unsigned char* p) {
  return dispatch_scalar(s, [&](auto zero) -> bool {
    using T = decltype(zero);
    T v{};
    if constexpr (std::is_same_v<T, Float16> || std::is_floating_point_v<T>) {
      double d;
      if (j.is_number()) d = j.get<double>();
      else if (j == "NaN") d = std::numeric_limits<double>::quiet_NaN();
      else if (j == "Infinity") d = std::numeric_limits<double>::infinity();
      else if (j == "-Infinity") d = -std::numeric_limits<double>::infinity();
      else return false;
      v = T(d);
    } else {  // an integer of this type's range, nothing else (no silent wrapping)
      using L = std::numeric_limits<T>;
      if (j.is_number_unsigned()) {
        const uint64_t u = j.get<uint64_t>();
        if (u > uint64_t(L::max())) return false;
        v = static_cast<T>(u);
      } else if (j.is_number_integer()) {
        const int64_t i = j.get<int64_t>();
        if (i < 0 ? (!L::is_signed || i < int64_t(L::min())) : uint64_t(i) > uint64_t(L::max())) return false;
        v = static_cast<T>(i);
      } else if (j.is_boolean()) {
        v = static_cast<T>(j.get<bool>());
      } else {
        return false;
      }
    }
    std::memcpy(p, &v, sizeof(T));
    return true;
  });
}

Scalar scalar_of_zarr_name(const std::string& name, bool& known) {
  known = true;
  for (Scalar s : kAllScalars)
    if (scalar_name(s) == name) return s;
  if (name == "bool") return Scalar::UInt8;  // numpy's bool is one byte of 0 or 1
  known = false;
  return Scalar::UInt8;
}

// ---- attributes ----

// An attribute's type as kept in _h5loom: "int16" (a scalar), "int16[]" (a list).
std::string attribute_type(const AttributeValue& v) {
  if (v.is_string()) return "";
  if (v.is_string_array()) return "string[]";  // else an empty list would read back as JSON text
  return scalar_name(v.dtype().scalar()) + (v.kind() == AttributeValue::Kind::Array ? "[]" : "");
}

Json attribute_json(const std::string& name, const AttributeValue& v) {
  if (v.is_string()) return v.as_string();
  if (v.is_string_array()) return v.as_strings();
  if (!is_plain_attribute(v)) throw std::logic_error("attribute '" + name + "' is kept in _h5loom, not as JSON");
  const Scalar s = v.dtype().scalar();
  const std::size_t es = scalar_size(s);
  const auto* p = static_cast<const unsigned char*>(v.data());
  if (v.kind() == AttributeValue::Kind::Scalar) return number_json(s, p);
  Json list = Json::array();
  for (std::size_t i = 0; i < v.size(); ++i) list.push_back(number_json(s, p + i * es));
  return list;
}

// The value of a JSON attribute with the type recorded for it; nullopt if it
// does not fit that type (another writer changed it: then it is read as JSON).
std::optional<AttributeValue> attribute_with_type(const Json& j, const std::string& type) {
  if (type == "string[]") {
    if (!j.is_array() || !std::all_of(j.begin(), j.end(), [](const Json& e) { return e.is_string(); }))
      return std::nullopt;
    return AttributeValue(j.get<std::vector<std::string>>());
  }
  const bool list = type.size() > 2 && type.compare(type.size() - 2, 2, "[]") == 0;
  bool known = false;
  const Scalar s = scalar_of_zarr_name(list ? type.substr(0, type.size() - 2) : type, known);
  if (!known) return std::nullopt;
  const std::size_t es = scalar_size(s);
  if (!list) {
    std::vector<unsigned char> b(es);
    if (!number_from_json(s, j, b.data())) return std::nullopt;
    return AttributeValue::from_raw(AttributeValue::Kind::Scalar, s, 1, b.data());
  }
  if (!j.is_array()) return std::nullopt;
  std::vector<unsigned char> b(es * j.size());
  for (std::size_t i = 0; i < j.size(); ++i)
    if (!number_from_json(s, j[i], b.data() + i * es)) return std::nullopt;
  return AttributeValue::from_raw(AttributeValue::Kind::Array, s, j.size(), b.data());
}

// A JSON attribute of another writer, as close as h5loom's values come: numbers
// as int64 / uint64 / float64, strings, and lists of one of those.
std::optional<AttributeValue> attribute_inferred(const Json& j) {
  if (j.is_string()) return AttributeValue(j.get<std::string>());
  if (j.is_number_unsigned()) return AttributeValue(j.get<uint64_t>());
  if (j.is_number_integer()) return AttributeValue(j.get<int64_t>());
  if (j.is_number_float()) return AttributeValue(j.get<double>());
  if (!j.is_array() || j.empty()) return std::nullopt;
  bool strings = true, integers = true, numbers = true;
  for (const Json& e : j) {
    strings = strings && e.is_string();
    integers = integers && e.is_number_integer();
    numbers = numbers && e.is_number();
  }
  if (strings) return AttributeValue(j.get<std::vector<std::string>>());
  if (integers) return AttributeValue(j.get<std::vector<int64_t>>());
  if (numbers) return AttributeValue(j.get<std::vector<double>>());
  return std::nullopt;
}

Json dims_json(const Dims& d) {
  Json out = Json::array();
  for (uint64_t v : d) out.push_back(v == kUnlimited ? Json(nullptr) : Json(v));
  return out;
}

Dims dims_from(const Json& j, const std::string& what, const std::string& where) {
  if (!j.is_array()) throw CorruptionError(where + ": \"" + what + "\" is not a list of sizes");
  Dims out;
  for (const Json& v : j) {
    if (v.is_null()) out.push_back(kUnlimited);
    else if (v.is_number_unsigned()) out.push_back(v.get<uint64_t>());
    else throw CorruptionError(where + ": \"" + what + "\" holds " + v.dump() + ", not a size");
  }
  return out;
}

}  // namespace

void ArrayMeta::fill_elements(unsigned char* out, uint64_t n) const {
  const std::size_t es = datatype_size(dtype);
  if (fill.empty()) return (void)std::memset(out, 0, n * es);
  for (uint64_t i = 0; i < n; ++i) std::memcpy(out + i * es, fill.data(), es);
}

void ArrayMeta::encode_chunk(std::vector<unsigned char>& bytes) const {
  if (sharding.on()) encode_shard(sharding, codecs, chunk_shape, datatype_size(dtype), bytes);
  else codecs.encode_in_place(bytes);
}

void ArrayMeta::decode_chunk(const std::vector<unsigned char>& stored, unsigned char* raw, const std::string& what) const {
  if (sharding.on())
    decode_shard(sharding, codecs, chunk_shape, datatype_size(dtype), stored, raw, fill.empty() ? nullptr : fill.data(),
                 what);
  else codecs.decode(stored, raw, chunk_bytes(), what);
}

std::string zarr_type_name(const Datatype& t) { return t.is_scalar() ? scalar_name(t.scalar()) : std::string(); }

std::string encode_node(const Node& node, bool root) {
  Json attrs = node.foreign;
  Json types = Json::object(), typed = Json::object();
  for (const auto& [name, value] : node.attributes) {
    if (!is_plain_attribute(value)) {  // exactly, in _h5loom
      typed[name] = typed_attribute_json(name, value);
      continue;
    }
    attrs[name] = attribute_json(name, value);
    if (const std::string t = attribute_type(value); !t.empty()) types[name] = t;
  }
  Json mine = {{"version", kFormatVersion}};
  if (root) mine["engine"] = "zarr";
  if (!types.empty()) mine["attribute_types"] = types;
  if (!typed.empty()) mine["typed_attributes"] = typed;
  Json j = {{"zarr_format", 3}, {"node_type", node.kind == ObjectKind::Dataset ? "array" : "group"}};
  if (node.kind == ObjectKind::Dataset) {
    const ArrayMeta& a = node.array;
    j["shape"] = a.shape;
    j["data_type"] = zarr_type_name(a.dtype);
    j["chunk_grid"] = {{"name", "regular"}, {"configuration", {{"chunk_shape", a.chunk_shape}}}};
    j["chunk_key_encoding"] = {{"name", "default"}, {"configuration", {{"separator", "/"}}}};
    std::vector<unsigned char> zero(datatype_size(a.dtype), 0);
    j["fill_value"] = number_json(a.dtype.scalar(), a.fill.empty() ? zero.data() : a.fill.data());
    j["codecs"] = a.sharding.on() ? a.sharding.to_json(a.codecs) : a.codecs.to_json();
    j["storage_transformers"] = Json::array();
    if (!a.dim_names.empty()) {
      Json names = Json::array();
      for (const std::string& d : a.dim_names) names.push_back(d.empty() ? Json() : Json(d));
      j["dimension_names"] = names;
    }
    if (a.max_shape != a.shape) mine["max_shape"] = dims_json(a.max_shape);
    if (a.layout == Layout::Contiguous) mine["layout"] = "contiguous";
    if (!a.fill.empty()) mine["fill"] = true;
    for (const Filter& f : a.filters)
      mine["filters"].push_back({{"id", f.id}, {"params", f.params}, {"optional", f.optional}, {"name", f.name}});
  }
  if (node.original.is_object()) {  // another writer's node: only what h5loom changes
    // Still not h5loom's: no version (decode_node then keeps it as it is), and only the attributes' records.
    Json records = Json::object();
    if (!types.empty()) records["attribute_types"] = types;
    if (!typed.empty()) records["typed_attributes"] = typed;
    if (records.empty()) attrs.erase(kH5loomKey);
    else attrs[kH5loomKey] = records;
    Json kept = node.original;
    if (node.kind == ObjectKind::Dataset) kept["shape"] = node.array.shape;
    kept["attributes"] = attrs;
    return kept.dump(2) + "\n";
  }
  attrs[kH5loomKey] = mine;
  j["attributes"] = attrs;
  return j.dump(2) + "\n";
}

bool is_h5loom_root(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("attributes") || !j["attributes"].is_object()) return false;
  const Json& attrs = j["attributes"];
  return attrs.contains(kH5loomKey) && attrs[kH5loomKey].is_object() && attrs[kH5loomKey].contains("version");
}

Node decode_node(const std::string& text, const std::string& where) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw CorruptionError(where + " is not JSON (a damaged or cut zarr.json)");
  if (!j.contains("zarr_format") || j["zarr_format"] != 3)
    throw CorruptionError(where + " is not Zarr version 3 metadata (zarr_format " +
                          (j.contains("zarr_format") ? j["zarr_format"].dump() : std::string("missing")) + ")");
  const std::string type = j.value("node_type", std::string());
  if (type != "group" && type != "array") throw CorruptionError(where + ": node_type is neither group nor array");
  Node node;
  node.kind = type == "array" ? ObjectKind::Dataset : ObjectKind::Group;
  const Json* marker = j.contains("attributes") && j["attributes"].is_object() && j["attributes"].contains(kH5loomKey)
                           ? &j["attributes"][kH5loomKey]
                           : nullptr;
  if (!marker || !marker->is_object() || !marker->contains("version"))
    node.original = j;  // another writer's: h5loom keeps what it does not model
  Json attrs = j.contains("attributes") && j["attributes"].is_object() ? j["attributes"] : Json::object();
  Json mine = attrs.contains(kH5loomKey) && attrs[kH5loomKey].is_object() ? attrs[kH5loomKey] : Json::object();
  attrs.erase(kH5loomKey);
  const Json types = mine.contains("attribute_types") ? mine["attribute_types"] : Json::object();
  for (auto& [name, value] : attrs.items()) {
    std::optional<AttributeValue> v = types.contains(name) && types[name].is_string()
                                          ? attribute_with_type(value, types[name].get<std::string>())
                                          : std::nullopt;
    if (!v && !(types.contains(name) && value.is_array() && value.empty())) v = attribute_inferred(value);
    if (v) node.attributes.emplace(name, std::move(*v));
    else node.foreign[name] = value;
  }
  if (mine.contains("typed_attributes")) {
    if (!mine["typed_attributes"].is_object())
      throw CorruptionError(where + ": _h5loom's typed_attributes is not an object");
    for (auto& [name, record] : mine["typed_attributes"].items())
      node.attributes.insert_or_assign(name, typed_attribute_from_json(record, name, where));
  }
  if (node.kind == ObjectKind::Group) return node;

  ArrayMeta& a = node.array;
  if (!j.contains("shape")) throw CorruptionError(where + ": an array without a \"shape\"");
  a.shape = dims_from(j["shape"], "shape", where);
  a.max_shape = mine.contains("max_shape") ? dims_from(mine["max_shape"], "max_shape", where) : a.shape;
  if (a.max_shape.size() != a.shape.size()) a.max_shape = a.shape;
  a.layout = mine.value("layout", std::string()) == "contiguous" ? Layout::Contiguous : Layout::Chunked;
  if (j.contains("dimension_names") && !j["dimension_names"].is_null()) {
    const Json& names = j["dimension_names"];
    if (!names.is_array() || names.size() != a.shape.size())
      throw CorruptionError(where + ": dimension_names " + names.dump() + " is not one name (or null) per dimension of " +
                            dims_to_string(a.shape));
    for (const Json& d : names) {
      if (!d.is_null() && !d.is_string())
        throw CorruptionError(where + ": dimension_names " + names.dump() + " holds " + d.dump() + ", not a name or null");
      a.dim_names.push_back(d.is_string() ? d.get<std::string>() : std::string());
    }
    if (std::all_of(a.dim_names.begin(), a.dim_names.end(), [](const std::string& d) { return d.empty(); }))
      a.dim_names.clear();
  }
  if (mine.contains("filters")) {
    const Json& list = mine["filters"];
    try {
      for (const Json& j : list) {
        Filter f;
        f.id = j.at("id").get<uint32_t>();
        f.params = j.at("params").get<std::vector<uint32_t>>();
        f.optional = j.at("optional").get<bool>();
        f.name = j.value("name", std::string());
        a.filters.push_back(std::move(f));
      }
    } catch (const Json::exception&) {
      throw CorruptionError(where + ": its " + kH5loomKey + " filters " + list.dump() + " are not a list of HDF5 filters");
    }
  }
  const Json grid = j.value("chunk_grid", Json::object());
  if (grid.value("name", std::string()) != "regular" || !grid.contains("configuration"))
    a.unsupported = "its chunk grid " + grid.dump() + " is not a regular one";
  else
    a.chunk_shape = dims_from(grid["configuration"].value("chunk_shape", Json::array()), "chunk_shape", where);
  if (a.unsupported.empty() && a.chunk_shape.size() != a.shape.size())
    throw CorruptionError(where + ": chunk_shape " + dims_to_string(a.chunk_shape) + " and shape " +
                          dims_to_string(a.shape) + " have different ranks");
  for (uint64_t c : a.chunk_shape)
    if (c == 0) throw CorruptionError(where + ": a chunk dimension of 0");
  const Json keys = j.value("chunk_key_encoding", Json::object());
  const std::string separator =
      keys.contains("configuration") ? keys["configuration"].value("separator", std::string("/")) : "/";
  if (keys.value("name", std::string()) != "default" || separator != "/")
    a.unsupported = "its chunk key encoding " + keys.dump() + " is not the default one with \"/\"";
  bool known = false;
  const std::string dtype = j.value("data_type", std::string());
  a.dtype = scalar_of_zarr_name(dtype, known);
  if (!known) a.unsupported = "its data type " + j["data_type"].dump() + " is not one h5loom reads";
  if (known) {
    a.fill.assign(datatype_size(a.dtype), 0);
    if (!j.contains("fill_value") || !number_from_json(a.dtype.scalar(), j["fill_value"], a.fill.data()))
      a.unsupported = "its fill_value " + (j.contains("fill_value") ? j["fill_value"].dump() : "(none)") +
                      " is not a number of its type";
    if (!mine.value("fill", false) && std::all_of(a.fill.begin(), a.fill.end(), [](unsigned char b) { return b == 0; }))
      a.fill.clear();  // zero, as h5loom says it when nobody gave one
    try {
      const Json codecs = j.value("codecs", Json());
      if (codecs.is_array() && !codecs.empty() && codecs[0].is_object() && codecs[0].value("name", "") == "sharding_indexed")
        a.sharding = Sharding::from_json(codecs, datatype_size(a.dtype), a.codecs, where);
      else
        a.codecs = Codecs::from_json(codecs, datatype_size(a.dtype), where);
      if (a.sharding.on() && a.sharding.inner.size() != a.chunk_shape.size())
        throw CorruptionError(where + ": inner chunks " + dims_to_string(a.sharding.inner) + " for shards " +
                              dims_to_string(a.chunk_shape));
      if (a.codecs.big_endian) a.dtype = a.dtype.with_byte_order(ByteOrder::Big);  // stored so: it says so
    } catch (const Error& e) {
      if (a.unsupported.empty()) a.unsupported = e.what();
    }
  }
  return node;
}

}  // namespace h5loom::zarr
