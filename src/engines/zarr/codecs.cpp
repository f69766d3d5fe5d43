#include "engines/zarr/codecs.hpp"

#include <algorithm>
#include <cstring>

#include "core/crc32c.hpp"
#include "h5loom/errors.hpp"

namespace h5loom::zarr {

namespace {

void swap_bytes(unsigned char* p, std::size_t size, std::size_t es) {
  if (es < 2) return;
  for (std::size_t i = 0; i + es <= size; i += es) std::reverse(p + i, p + i + es);
}

}  // namespace

Json Codecs::to_json() const {
  Json out = Json::array();
  out.push_back({{"name", "bytes"}, {"configuration", {{"endian", big_endian ? "big" : "little"}}}});
  if (compression.on()) out.push_back(compression.to_json(element_size));
  if (crc32c) out.push_back({{"name", "crc32c"}});
  return out;
}

Codecs Codecs::from_json(const Json& codecs, std::size_t element_size, const std::string& array) {
  Codecs c;
  c.element_size = element_size;
  c.crc32c = false;
  if (!codecs.is_array() || codecs.empty())
    throw CorruptionError("array '" + array + "': its zarr.json has no codec list (\"codecs\")");
  bool seen_bytes = false;
  for (const Json& codec : codecs) {
    const std::string name = codec.is_object() && codec.contains("name") && codec["name"].is_string()
                                 ? codec["name"].get<std::string>()
                                 : std::string();
    const Json config = codec.is_object() && codec.contains("configuration") ? codec["configuration"] : Json::object();
    // A compressor counts only between "bytes" and "crc32c", and only one.
    std::optional<Compression> compressor;
    if (seen_bytes && !c.compression.on() && !c.crc32c) compressor = Compression::from_json(name, config, array);
    if (name == "bytes" && !seen_bytes) {
      seen_bytes = true;
      c.big_endian = config.is_object() && config.value("endian", std::string("little")) == "big";
    } else if (compressor) {
      c.compression = *compressor;
    } else if (name == "crc32c" && seen_bytes && !c.crc32c) {
      c.crc32c = true;
    } else {
      throw ConfigError("array '" + array + "' uses the codec " + codec.dump() +
                        " (where it is in its list), which h5loom does not read yet: it reads \"bytes\", then "
                        "optionally one of \"zstd\", \"gzip\" or \"blosc\", then optionally \"crc32c\"");
    }
  }
  if (!seen_bytes) throw ConfigError("array '" + array + "' has no \"bytes\" codec; h5loom reads only those");
  return c;
}

std::vector<unsigned char> Codecs::encode(const unsigned char* raw, std::size_t size) const {
  std::vector<unsigned char> out;
  if (compression.on()) {
    // Big-endian arrays are swapped into a copy first (rare: memory is the host's order).
    std::vector<unsigned char> swapped;
    const unsigned char* src = raw;
    if (big_endian && element_size > 1) {
      swapped.assign(raw, raw + size);
      swap_bytes(swapped.data(), size, element_size);
      src = swapped.data();
    }
    out = compression.compress(src, size, element_size, crc32c ? 4 : 0);
  } else {
    out.assign(raw, raw + size);
    if (big_endian) swap_bytes(out.data(), size, element_size);
  }
  if (crc32c) {
    const uint32_t crc = h5loom::crc32c(out.data(), out.size());
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<unsigned char>(crc >> (8 * i)));  // little-endian
  }
  return out;
}

void Codecs::encode_in_place(std::vector<unsigned char>& bytes) const {
  if (compression.on()) {
    bytes = encode(bytes.data(), bytes.size());
    return;
  }
  if (big_endian) swap_bytes(bytes.data(), bytes.size(), element_size);
  if (crc32c) {
    const uint32_t crc = h5loom::crc32c(bytes.data(), bytes.size());
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<unsigned char>(crc >> (8 * i)));
  }
}

void Codecs::decode(const std::vector<unsigned char>& stored, unsigned char* raw, std::size_t size,
                    const std::string& what) const {
  std::size_t n = stored.size();
  if (crc32c) {
    if (n < 4) throw CorruptionError(what + " is cut short: " + std::to_string(n) + " bytes, not even its checksum");
    n -= 4;
    uint32_t want = 0;
    for (int i = 0; i < 4; ++i) want |= uint32_t(stored[n + std::size_t(i)]) << (8 * i);
    if (h5loom::crc32c(stored.data(), n) != want)
      throw CorruptionError(what + " is damaged: its CRC32C does not match (" + std::to_string(stored.size()) +
                            " bytes)");
  }
  compression.decompress(stored.data(), n, raw, size, what);
  if (big_endian) swap_bytes(raw, size, element_size);
}

}  // namespace h5loom::zarr
