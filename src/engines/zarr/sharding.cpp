#include "engines/zarr/sharding.hpp"

#include <cstring>

#include "core/crc32c.hpp"
#include "engines/zarr/chunk_grid.hpp"
#include "h5loom/errors.hpp"

namespace h5loom::zarr {

namespace {

constexpr uint64_t kMissing = ~uint64_t{0};

// Calls fn(inner chunk number, its part of the shard) for every inner chunk, in order.
void for_each_inner(const Dims& shard, const Dims& inner, const std::function<void(uint64_t, const ChunkPart&)>& fn) {
  const auto slices = slice_by_chunks(Selection::all(), shard, inner);
  uint64_t k = 0;
  for_each_chunk(slices, [&](const ChunkPart& part) { fn(k++, part); });
}

Json index_codecs(bool crc) {
  Json out = Json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
  if (crc) out.push_back({{"name", "crc32c"}});
  return out;
}

}  // namespace

Json Sharding::to_json(const Codecs& codecs) const {
  return Json::array({{{"name", "sharding_indexed"},
                       {"configuration",
                        {{"chunk_shape", inner},
                         {"codecs", codecs.to_json()},
                         {"index_codecs", index_codecs(index_crc32c)},
                         {"index_location", index_at_end ? "end" : "start"}}}}});
}

Sharding Sharding::from_json(const Json& list, std::size_t element_size, Codecs& codecs, const std::string& array) {
  Sharding s;
  const Json& config = list[0].contains("configuration") ? list[0]["configuration"] : Json::object();
  if (list.size() != 1 || !config.is_object() || !config.contains("chunk_shape") || !config.contains("codecs"))
    throw ConfigError("array '" + array + "': h5loom reads a sharding_indexed codec alone in the list, with its "
                      "chunk_shape and codecs; this one is " + list.dump());
  for (const Json& d : config["chunk_shape"]) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() == 0)
      throw ConfigError("array '" + array + "': a sharding chunk_shape of " + config["chunk_shape"].dump());
    s.inner.push_back(d.get<uint64_t>());
  }
  codecs = Codecs::from_json(config["codecs"], element_size, array);
  const Json index = config.value("index_codecs", index_codecs(true));
  if (index == index_codecs(true)) s.index_crc32c = true;
  else if (index == index_codecs(false)) s.index_crc32c = false;
  else throw ConfigError("array '" + array + "': h5loom reads shard indexes of the codecs bytes (little-endian) "
                         "and crc32c, not " + index.dump());
  s.index_at_end = config.value("index_location", std::string("end")) != "start";
  return s;
}

void encode_shard(const Sharding& s, const Codecs& codecs, const Dims& shard, std::size_t es,
                  std::vector<unsigned char>& bytes) {
  const uint64_t n_inner = [&] {
    uint64_t n = 1;
    for (std::size_t d = 0; d < shard.size(); ++d) n *= (shard[d] + s.inner[d] - 1) / s.inner[d];
    return n;
  }();
  std::vector<uint64_t> index(2 * n_inner, kMissing);
  std::vector<unsigned char> out, inner(product(s.inner) * es);
  const uint64_t index_bytes = 16 * n_inner + (s.index_crc32c ? 4 : 0);
  if (!s.index_at_end) out.resize(index_bytes);
  for_each_inner(shard, s.inner, [&](uint64_t k, const ChunkPart& part) {
    for_each_row(part, s.inner, shard, [&](uint64_t at, uint64_t mem, uint64_t n) {
      std::memcpy(inner.data() + at * es, bytes.data() + mem * es, n * es);
    });
    const std::vector<unsigned char> stored = codecs.encode(inner.data(), inner.size());
    index[2 * k] = out.size(), index[2 * k + 1] = stored.size();
    out.insert(out.end(), stored.begin(), stored.end());
  });
  std::vector<unsigned char> encoded(16 * n_inner);
  std::memcpy(encoded.data(), index.data(), encoded.size());  // little-endian host
  if (s.index_crc32c) {
    const uint32_t crc = h5loom::crc32c(encoded.data(), encoded.size());
    for (int i = 0; i < 4; ++i) encoded.push_back(static_cast<unsigned char>(crc >> (8 * i)));
  }
  if (s.index_at_end) out.insert(out.end(), encoded.begin(), encoded.end());
  else std::memcpy(out.data(), encoded.data(), encoded.size());
  bytes.swap(out);
}

void decode_shard(const Sharding& s, const Codecs& codecs, const Dims& shard, std::size_t es,
                  const std::vector<unsigned char>& stored, unsigned char* raw, const unsigned char* fill,
                  const std::string& what) {
  uint64_t n_inner = 1;
  for (std::size_t d = 0; d < shard.size(); ++d) n_inner *= (shard[d] + s.inner[d] - 1) / s.inner[d];
  const uint64_t index_bytes = 16 * n_inner + (s.index_crc32c ? 4 : 0);
  if (stored.size() < index_bytes)
    throw CorruptionError(what + " is cut short: " + std::to_string(stored.size()) + " bytes, its shard index alone takes " +
                          std::to_string(index_bytes));
  const unsigned char* at = s.index_at_end ? stored.data() + stored.size() - index_bytes : stored.data();
  if (s.index_crc32c) {
    uint32_t want = 0;
    for (int i = 0; i < 4; ++i) want |= uint32_t(at[16 * n_inner + uint64_t(i)]) << (8 * i);
    if (h5loom::crc32c(at, 16 * n_inner) != want)
      throw CorruptionError(what + " is damaged: the CRC32C of its shard index does not match");
  }
  std::vector<uint64_t> index(2 * n_inner);
  std::memcpy(index.data(), at, 16 * n_inner);
  std::vector<unsigned char> inner(product(s.inner) * es), piece;
  for_each_inner(shard, s.inner, [&](uint64_t k, const ChunkPart& part) {
    const uint64_t offset = index[2 * k], size = index[2 * k + 1];
    if (offset == kMissing && size == kMissing) {
      if (fill) for (uint64_t i = 0; i < product(s.inner); ++i) std::memcpy(inner.data() + i * es, fill, es);
      else std::memset(inner.data(), 0, inner.size());
    } else {
      if (offset > stored.size() || size > stored.size() - offset)
        throw CorruptionError(what + " is damaged: inner chunk " + std::to_string(k) + " lies outside the shard");
      piece.assign(stored.begin() + std::ptrdiff_t(offset), stored.begin() + std::ptrdiff_t(offset + size));
      codecs.decode(piece, inner.data(), inner.size(), what + " (inner chunk " + std::to_string(k) + ")");
    }
    for_each_row(part, s.inner, shard, [&](uint64_t a, uint64_t mem, uint64_t n) {
      std::memcpy(raw + mem * es, inner.data() + a * es, n * es);
    });
  });
}

}  // namespace h5loom::zarr
