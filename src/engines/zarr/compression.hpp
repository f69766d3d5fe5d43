// The one bytes-to-bytes compression codec of a Zarr array's pipeline, as
// h5loom writes and reads it: Zarr v3's "zstd", "gzip" or "blosc" codec
// (zarr-specs, codecs/), each through its reference library (libzstd, zlib,
// c-blosc 1.x: the format zarr-python's numcodecs and tensorstore use).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "h5loom/engine_plugin.hpp"
#include "h5loom/types.hpp"

namespace h5loom::zarr {

using engine::Json;

struct Compression {
  enum class Kind { None, Zstd, Gzip, Blosc };
  Kind kind = Kind::None;
  int level = 0;  // zstd: -7 to 22; gzip: 0 to 9; blosc's clevel: 0 to 9
  // blosc only: the inner compressor (blosclz, lz4, lz4hc, snappy, zlib,
  // zstd), the byte shuffle (noshuffle, shuffle, bitshuffle) over elements of
  // `typesize` bytes, and the block size (0: blosc chooses).
  std::string blosc_cname = "lz4";
  std::string blosc_shuffle = "shuffle";
  std::size_t blosc_blocksize = 0;

  bool on() const { return kind != Kind::None; }
  // "zstd level 3", "blosc lz4 level 5 shuffle": for messages and `h5loom info`.
  std::string describe() const;
  // The codec's entry in zarr.json's "codecs" list (elements of `typesize` bytes).
  Json to_json(std::size_t typesize) const;
  // From a codec entry `name` / `config`: nullopt if `name` is no compressor;
  // ConfigError naming `array` if its configuration is not one h5loom can use.
  static std::optional<Compression> from_json(const std::string& name, const Json& config, const std::string& array);
  // ConfigError naming `what` if blosc_cname or blosc_shuffle is not one this c-blosc has.
  void check(const std::string& what) const;

  // `size` bytes at `src` compressed (elements of `typesize` bytes), with
  // `spare` bytes of room left after them (for the CRC32C that follows).
  std::vector<unsigned char> compress(const unsigned char* src, std::size_t size, std::size_t typesize,
                                      std::size_t spare) const;
  // The `n` stored bytes at `src` decompressed into exactly `size` bytes at
  // `out`; CorruptionError naming `what` if they do not decompress to that.
  void decompress(const unsigned char* src, std::size_t n, unsigned char* out, std::size_t size,
                  const std::string& what) const;
};

// The Zarr compressor that does what a dataset's HDF5 filter pipeline does
// (DatasetSpec::filters), so that other Zarr readers read it: deflate is
// "gzip"; zstd (HDF5 filter 32015) is "zstd"; shuffle before either, or
// HDF5's blosc filter (32001), is "blosc" (with zlib, zstd or the filter's
// compressor); Fletcher-32 is the "crc32c" h5loom always writes; shuffle with
// no compressor after it changes nothing stored. UsageError naming `where`
// for a mandatory filter none of these does, or two compressors; optional
// filters without a Zarr codec are skipped, as HDF5 skips them.
Compression compression_for_filters(const std::vector<Filter>& filters, const std::string& where);

}  // namespace h5loom::zarr
