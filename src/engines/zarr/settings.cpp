#include "engines/zarr/settings.hpp"

namespace h5loom::zarr {

Settings Settings::from(engine::Knobs& k) {
  Settings s;
  s.chunk_target_bytes = k.get<uint64_t>("chunk_target_bytes", s.chunk_target_bytes);
  s.shard_target_bytes = k.get<uint64_t>("shard_target_bytes", s.shard_target_bytes);
  // Every compressor's knobs are read (and checked), whichever is chosen.
  const std::string compressor = k.choice("compressor", "none", {"none", "zstd", "gzip", "blosc"});
  const int zstd_level = k.get<int>("zstd_level", 3);
  if (zstd_level < -7 || zstd_level > 22)
    k.bad_value("zstd_level", std::to_string(zstd_level) + " is outside zstd's levels -7 to 22");
  const int gzip_level = k.get<int>("gzip_level", 6);
  if (gzip_level < 0 || gzip_level > 9) k.bad_value("gzip_level", std::to_string(gzip_level) + " is not 0 to 9");
  const int blosc_clevel = k.get<int>("blosc_clevel", 5);
  if (blosc_clevel < 0 || blosc_clevel > 9) k.bad_value("blosc_clevel", std::to_string(blosc_clevel) + " is not 0 to 9");
  Compression blosc;
  blosc.kind = Compression::Kind::Blosc;
  blosc.level = blosc_clevel;
  blosc.blosc_cname = k.choice("blosc_cname", blosc.blosc_cname, {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"});
  blosc.blosc_shuffle = k.choice("blosc_shuffle", blosc.blosc_shuffle, {"noshuffle", "shuffle", "bitshuffle"});
  try {
    blosc.check("blosc");
  } catch (const Error& e) {
    k.bad_value("blosc_cname", e.what());
  }
  if (compressor == "blosc") s.compression = blosc;
  if (compressor == "zstd") s.compression = {Compression::Kind::Zstd, zstd_level};
  if (compressor == "gzip") s.compression = {Compression::Kind::Gzip, gzip_level};
  s.sync = k.get<bool>("sync", s.sync);
  s.s3.endpoint = k.get<std::string>("s3_endpoint", s.s3.endpoint);
  s.s3.region = k.get<std::string>("s3_region", s.s3.region);
  s.s3.part_bytes = k.get<uint64_t>("s3_part_bytes", s.s3.part_bytes);
  if (s.s3.part_bytes < (5u << 20)) k.bad_value("s3_part_bytes", "must be at least 5 MiB (S3's smallest part)");
  return s;
}

}  // namespace h5loom::zarr
