#include "engines/zarr/compression.hpp"

#include <blosc.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "h5loom/errors.hpp"

namespace h5loom::zarr {

namespace {

constexpr const char* kShuffles[] = {"noshuffle", "shuffle", "bitshuffle"};

int shuffle_code(const std::string& name) {
  for (int i = 0; i < 3; ++i)
    if (name == kShuffles[i]) return i;  // BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE
  return -1;
}

// Zarr's gzip codec is RFC 1952 gzip (not zlib's own framing): windowBits 15 + 16.
std::vector<unsigned char> gzip(const unsigned char* src, std::size_t size, int level, std::size_t spare) {
  if (size > UINT_MAX / 2)  // zlib counts in 32 bits
    throw UsageError("a chunk of " + std::to_string(size) + " bytes is larger than gzip compresses in one call: choose "
                     "smaller chunks or another compressor");
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw IOError("zlib cannot start a gzip stream at level " + std::to_string(level));
  std::vector<unsigned char> out(deflateBound(&z, uLong(size)) + 32 + spare);
  z.next_in = const_cast<unsigned char*>(src);
  z.avail_in = uInt(size);
  z.next_out = out.data();
  z.avail_out = uInt(out.size() - spare);
  const int rc = deflate(&z, Z_FINISH);
  const std::size_t n = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw IOError("zlib cannot compress a chunk of " + std::to_string(size) + " bytes");
  out.resize(n);
  return out;
}

void gunzip(const unsigned char* src, std::size_t n, unsigned char* out, std::size_t size, const std::string& what) {
  if (n > UINT_MAX || size > UINT_MAX)
    throw UsageError(what + " is larger than zlib reads in one call (" + std::to_string(size) + " bytes)");
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK)  // + 32: gzip or zlib framing, as readers accept both
    throw IOError("zlib cannot start reading " + what);
  z.next_in = const_cast<unsigned char*>(src);
  z.avail_in = uInt(n);
  z.next_out = out;
  z.avail_out = uInt(size);
  const int rc = inflate(&z, Z_FINISH);
  const std::size_t got = z.total_out;
  const bool all_input = z.avail_in == 0;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || got != size || !all_input)
    throw CorruptionError(what + " does not decompress to " + std::to_string(size) + " bytes (gzip: " +
                          (rc == Z_STREAM_END ? std::to_string(got) + " bytes" : std::string(zError(rc))) + ")");
}

}  // namespace

std::string Compression::describe() const {
  switch (kind) {
    case Kind::None: return "none";
    case Kind::Zstd: return "zstd level " + std::to_string(level);
    case Kind::Gzip: return "gzip level " + std::to_string(level);
    case Kind::Blosc: return "blosc " + blosc_cname + " level " + std::to_string(level) + " " + blosc_shuffle;
  }
  return "none";
}

Json Compression::to_json(std::size_t typesize) const {
  switch (kind) {
    case Kind::Zstd: return {{"name", "zstd"}, {"configuration", {{"level", level}, {"checksum", false}}}};
    case Kind::Gzip: return {{"name", "gzip"}, {"configuration", {{"level", level}}}};
    case Kind::Blosc:
      return {{"name", "blosc"},
              {"configuration",
               {{"cname", blosc_cname}, {"clevel", level}, {"shuffle", blosc_shuffle}, {"typesize", typesize},
                {"blocksize", blosc_blocksize}}}};
    case Kind::None: break;
  }
  return Json();
}

void Compression::check(const std::string& what) const {
  if (kind != Kind::Blosc) return;
  if (blosc_compname_to_compcode(blosc_cname.c_str()) < 0)
    throw ConfigError(what + ": blosc compressor \"" + blosc_cname + "\" is not one this c-blosc has (" +
                      blosc_list_compressors() + ")");
  if (shuffle_code(blosc_shuffle) < 0)
    throw ConfigError(what + ": blosc shuffle \"" + blosc_shuffle + "\" is not noshuffle, shuffle or bitshuffle");
  if (level < 0 || level > 9) throw ConfigError(what + ": blosc level " + std::to_string(level) + " is not 0 to 9");
}

std::optional<Compression> Compression::from_json(const std::string& name, const Json& config,
                                                  const std::string& array) {
  Compression c;
  const auto get_int = [&](const char* key, int fallback) {
    if (!config.is_object() || !config.contains(key)) return fallback;
    if (!config[key].is_number_integer())
      throw ConfigError("array '" + array + "': the " + name + " codec's " + key + " " + config[key].dump() +
                        " is not an integer");
    return config[key].get<int>();
  };
  if (name == "zstd") {
    c.kind = Kind::Zstd;
    c.level = get_int("level", 0);
  } else if (name == "gzip") {
    c.kind = Kind::Gzip;
    c.level = get_int("level", 6);
  } else if (name == "blosc") {
    // Decoding needs none of the configuration (a blosc frame says how it was
    // made); it is kept so that h5loom writes the array's new chunks alike.
    c.kind = Kind::Blosc;
    c.level = get_int("clevel", 5);
    if (config.is_object()) {
      c.blosc_cname = config.value("cname", c.blosc_cname);
      c.blosc_shuffle = config.value("shuffle", c.blosc_shuffle);
      c.blosc_blocksize = std::size_t(std::max(0, get_int("blocksize", 0)));
    }
    c.check("array '" + array + "'");
  } else {
    return std::nullopt;
  }
  return c;
}

std::vector<unsigned char> Compression::compress(const unsigned char* src, std::size_t size, std::size_t typesize,
                                                 std::size_t spare) const {
  std::vector<unsigned char> out;
  switch (kind) {
    case Kind::Zstd: {
      out.resize(ZSTD_compressBound(size) + spare);
      const std::size_t n = ZSTD_compress(out.data(), out.size(), src, size, level);
      if (ZSTD_isError(n)) throw IOError(std::string("zstd cannot compress a chunk: ") + ZSTD_getErrorName(n));
      out.resize(n);
      return out;
    }
    case Kind::Gzip: return gzip(src, size, level, spare);
    case Kind::Blosc: {
      if (size > std::size_t(BLOSC_MAX_BUFFERSIZE))
        throw UsageError("a chunk of " + std::to_string(size) + " bytes is larger than blosc compresses (" +
                         std::to_string(BLOSC_MAX_BUFFERSIZE) + "): choose smaller chunks or another compressor");
      out.resize(size + BLOSC_MAX_OVERHEAD + spare);
      // The context functions: no global state, safe beside the async wrapper's thread.
      const int n = blosc_compress_ctx(level, shuffle_code(blosc_shuffle), typesize ? typesize : 1, size, src,
                                       out.data(), size + BLOSC_MAX_OVERHEAD, blosc_cname.c_str(), blosc_blocksize, 1);
      if (n <= 0) throw IOError("blosc cannot compress a chunk of " + std::to_string(size) + " bytes (" + describe() + ")");
      out.resize(std::size_t(n));
      return out;
    }
    case Kind::None: break;
  }
  out.assign(src, src + size);
  return out;
}

void Compression::decompress(const unsigned char* src, std::size_t n, unsigned char* out, std::size_t size,
                             const std::string& what) const {
  switch (kind) {
    case Kind::Zstd: {
      const std::size_t got = ZSTD_decompress(out, size, src, n);
      if (ZSTD_isError(got) || got != size)
        throw CorruptionError(what + " does not decompress to " + std::to_string(size) + " bytes" +
                              (ZSTD_isError(got) ? std::string(" (zstd: ") + ZSTD_getErrorName(got) + ")" : ""));
      return;
    }
    case Kind::Gzip: return gunzip(src, n, out, size, what);
    case Kind::Blosc: {
      // Validate the frame's header against its length first: c-blosc 1.x is
      // memory safe only for frames that pass this check.
      std::size_t nbytes = 0;
      if (blosc_cbuffer_validate(src, n, &nbytes) != 0 || nbytes != size)
        throw CorruptionError(what + " is not a blosc frame of " + std::to_string(size) + " bytes (" +
                              std::to_string(n) + " stored bytes" +
                              (nbytes ? ", its header says " + std::to_string(nbytes) : std::string()) + ")");
      const int got = blosc_decompress_ctx(src, out, size, 1);
      if (got < 0 || std::size_t(got) != size)
        throw CorruptionError(what + " does not decompress to " + std::to_string(size) + " bytes (blosc)");
      return;
    }
    case Kind::None: break;
  }
  if (n != size)
    throw CorruptionError(what + " holds " + std::to_string(n) + " bytes of elements, not the chunk's " +
                          std::to_string(size));
  std::memcpy(out, src, size);
}

Compression compression_for_filters(const std::vector<Filter>& filters, const std::string& where) {
  constexpr uint32_t kZstdFilter = 32015, kBloscFilter = 32001;  // The HDF Group's registered ids
  Compression c;
  bool shuffle = false;
  const auto one_compressor = [&](const Filter& f) {
    if (c.on())
      throw UsageError(where + ": filter " + std::to_string(f.id) + " (" + f.name + ") is a second compressor after " +
                       c.describe() + "; the zarr engine writes one");
  };
  for (const Filter& f : filters) {
    const int param0 = f.params.empty() ? -1 : int(f.params[0]);
    if (f.id == Filter::kFletcher32) continue;  // every chunk has its CRC32C
    if (f.id == Filter::kShuffle) {
      shuffle = !c.on();  // after a compressor it only shuffles compressed bytes: nothing a codec does
      continue;
    }
    if (f.id == Filter::kDeflate || f.id == kZstdFilter) {
      one_compressor(f);
      const bool deflate = f.id == Filter::kDeflate;
      c.level = param0 >= 0 ? param0 : (deflate ? 6 : 3);
      if (shuffle) {  // shuffle then compress: blosc does both, with the same compressor
        c.kind = Compression::Kind::Blosc;
        c.blosc_cname = deflate ? "zlib" : "zstd";
        c.level = std::clamp(c.level, 1, 9);
      } else {
        c.kind = deflate ? Compression::Kind::Gzip : Compression::Kind::Zstd;
      }
      continue;
    }
    if (f.id == kBloscFilter) {  // its client data: 0, 0, typesize, size, clevel, shuffle, compressor code
      one_compressor(f);
      c.kind = Compression::Kind::Blosc;
      c.level = f.params.size() > 4 ? int(f.params[4]) : 5;
      c.blosc_shuffle = f.params.size() > 5 ? (f.params[5] == 0 ? "noshuffle" : f.params[5] == 2 ? "bitshuffle" : "shuffle")
                                            : "shuffle";
      const char* cname = nullptr;
      const int code = f.params.size() > 6 ? int(f.params[6]) : 0;
      if (blosc_compcode_to_compname(code, &cname) < 0 || !cname)
        throw UsageError(where + ": the blosc filter's compressor code " + std::to_string(code) +
                         " is not one this c-blosc has (" + blosc_list_compressors() + ")");
      c.blosc_cname = cname;
      c.check(where);
      continue;
    }
    if (f.optional && f.id != 0) continue;  // HDF5 too skips an optional filter it cannot apply
    throw UsageError(where + ": filter " + std::to_string(f.id) + (f.name.empty() ? "" : " (" + f.name + ")") +
                     " has no Zarr codec; the zarr engine writes deflate, zstd (32015), blosc (32001), shuffle "
                     "before them, and Fletcher-32 (as CRC32C)");
  }
  return c;
}

}  // namespace h5loom::zarr
