#include "engines/zarr/typed_attributes.hpp"

#include "h5loom/errors.hpp"

namespace h5loom::zarr {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// RFC 4648 base64 with padding: JSON text holds no raw bytes.
std::string base64(const unsigned char* p, std::size_t n) {
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (std::size_t i = 0; i < n; i += 3) {
    const uint32_t v = uint32_t(p[i]) << 16 | (i + 1 < n ? uint32_t(p[i + 1]) << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += i + 1 < n ? kAlphabet[v >> 6 & 63] : '=';
    out += i + 2 < n ? kAlphabet[v & 63] : '=';
  }
  return out;
}

// The bytes again; false if `text` is not padded base64.
bool unbase64(const std::string& text, std::vector<unsigned char>& out) {
  if (text.size() % 4) return false;
  out.clear();
  for (std::size_t i = 0; i < text.size(); i += 4) {
    uint32_t v = 0;
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + k];
      int d = -1;
      if (c == '=' && i + 4 == text.size() && k >= 2) ++pad, d = 0;
      else if (pad == 0)
        if (const char* at = std::char_traits<char>::find(kAlphabet, 64, c)) d = int(at - kAlphabet);
      if (d < 0) return false;
      v = v << 6 | uint32_t(d);
    }
    out.push_back(static_cast<unsigned char>(v >> 16));
    if (pad < 2) out.push_back(static_cast<unsigned char>(v >> 8));
    if (pad < 1) out.push_back(static_cast<unsigned char>(v));
  }
  return true;
}

}  // namespace

bool is_plain_attribute(const AttributeValue& v) {
  if (v.is_string() || v.is_string_array()) return true;
  return v.is_numeric() && v.dtype().is_scalar() && v.dtype().byte_order() != ByteOrder::Big;
}

Json typed_attribute_json(const std::string& name, const AttributeValue& v) {
  if (holds_references(v.dtype()))
    throw DatatypeError("attribute '" + name + "' of type " + v.dtype().name() +
                        ": the zarr engine keeps no object references (it does not declare the group 'references')");
  using K = AttributeValue::Kind;
  if (v.kind() == K::Empty) return {{"kind", "empty"}, {"type", datatype_name(v.dtype())}};
  return {{"kind", v.kind() == K::Scalar ? "scalar" : "array"},
          {"type", datatype_name(v.dtype())},
          {"count", v.size()},  // packed variable-length data does not say
          {"base64", base64(static_cast<const unsigned char*>(v.data()), v.byte_size())}};
}

AttributeValue typed_attribute_from_json(const Json& j, const std::string& name, const std::string& where) {
  const auto damaged = [&](const std::string& why) {
    return CorruptionError(where + ": the record of attribute '" + name + "' in _h5loom is damaged (" + why + ")");
  };
  if (!j.is_object() || !j.contains("kind") || !j.contains("type") || !j["kind"].is_string() || !j["type"].is_string())
    throw damaged("no kind or type");
  Datatype dt;
  try {
    dt = datatype_from_name(j["type"].get<std::string>());
  } catch (const Error& e) {
    throw damaged(e.what());
  }
  const std::string kind = j["kind"];
  if (kind == "empty") return AttributeValue::empty(dt);
  if (kind != "scalar" && kind != "array") throw damaged("kind " + j["kind"].dump());
  std::vector<unsigned char> bytes;
  if (!j.contains("base64") || !j["base64"].is_string() || !unbase64(j["base64"].get<std::string>(), bytes))
    throw damaged("its bytes are not base64");
  if (!j.contains("count") || !j["count"].is_number_unsigned()) throw damaged("no element count");
  const std::size_t count = j["count"].get<std::size_t>();
  if (!dt.has_variable_length_parts() && bytes.size() != count * datatype_size(dt))
    throw damaged(std::to_string(bytes.size()) + " bytes for " + std::to_string(count) + " elements of " + dt.name());
  try {
    return AttributeValue::from_stored(kind == "scalar" ? AttributeValue::Kind::Scalar : AttributeValue::Kind::Array, dt,
                                       count, bytes.data(), bytes.size());
  } catch (const CorruptionError& e) {
    throw damaged(e.what());
  }
}

}  // namespace h5loom::zarr
