// Zarr's "sharding_indexed" codec: a shard - one stored object, one chunk of
// the array's grid - holds many inner chunks, each encoded by the inner
// codecs, and an index of (offset, size) per inner chunk (2^64 - 1 twice for
// one never written), CRC32C-checked. Many small chunks become one object.
#pragma once

#include <string>
#include <vector>

#include "engines/zarr/codecs.hpp"
#include "h5loom/types.hpp"

namespace h5loom::zarr {

struct Sharding {
  Dims inner;                 // the inner chunks' shape (empty: the array is not sharded)
  bool index_crc32c = true;   // the index ends in a CRC32C (index_codecs: bytes, crc32c)
  bool index_at_end = true;   // index_location "end" (else "start")

  bool on() const { return !inner.empty(); }
  // The codec list of zarr.json for shards whose inner chunks use `codecs`.
  Json to_json(const Codecs& codecs) const;
  // From a zarr.json codec list holding one sharding_indexed codec; `codecs`
  // receives the inner codecs. ConfigError naming `array` for what h5loom does not read.
  static Sharding from_json(const Json& list, std::size_t element_size, Codecs& codecs, const std::string& array);
};

// Replaces the shard's dense elements (shape `shard`, `es` bytes each) in
// `bytes` by its stored form: every inner chunk encoded, then the index.
void encode_shard(const Sharding& s, const Codecs& codecs, const Dims& shard, std::size_t es,
                  std::vector<unsigned char>& bytes);
// The shard's dense elements from its stored form; inner chunks never
// written are `fill` (es bytes; null: zero). CorruptionError naming `what`.
void decode_shard(const Sharding& s, const Codecs& codecs, const Dims& shard, std::size_t es,
                  const std::vector<unsigned char>& stored, unsigned char* raw, const unsigned char* fill,
                  const std::string& what);

}  // namespace h5loom::zarr
