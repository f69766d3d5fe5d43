// A Zarr array's codec pipeline, as far as h5loom writes and reads it: the
// "bytes" codec (little- or big-endian elements), then optionally one
// compressor ("zstd", "gzip" or "blosc": compression.hpp), then optionally
// "crc32c" (a CRC32C of the chunk appended, which h5loom always writes: a
// damaged or cut chunk is an error, never wrong values).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engines/zarr/compression.hpp"
#include "h5loom/engine_plugin.hpp"

namespace h5loom::zarr {

using engine::Json;

struct Codecs {
  bool big_endian = false;
  std::size_t element_size = 1;  // for the byte order
  Compression compression;
  bool crc32c = true;

  // The "codecs" list of zarr.json.
  Json to_json() const;
  // From a zarr.json "codecs" list; ConfigError naming `array` and the codec
  // h5loom does not read (transpose, nested sharding and extensions so far).
  static Codecs from_json(const Json& codecs, std::size_t element_size, const std::string& array);

  // A chunk's stored bytes from its `raw` elements (in host order), and back.
  std::vector<unsigned char> encode(const unsigned char* raw, std::size_t size) const;
  // The same, replacing `bytes` (the raw elements) by the stored bytes: without
  // compression no copy is made (the checksum is appended).
  void encode_in_place(std::vector<unsigned char>& bytes) const;
  // CorruptionError naming `what` if the bytes do not decode to exactly `size` bytes.
  void decode(const std::vector<unsigned char>& stored, unsigned char* raw, std::size_t size,
              const std::string& what) const;
};

}  // namespace h5loom::zarr
