#include "engines/zarr/settings.hpp"

namespace h5loom::zarr {

Settings Settings::from(engine::Knobs& k) {
  Settings s;
  s.chunk_target_bytes = k.get<uint64_t>("chunk_target_bytes", s.chunk_target_bytes);
  s.shard_target_bytes = k.get<uint64_t>("shard_target_bytes", s.shard_target_bytes);
  s.compressor = k.choice("compressor", s.compressor, {"none", "zstd"});
  s.zstd_level = k.get<int>("zstd_level", s.zstd_level);
  if (s.zstd_level < -7 || s.zstd_level > 22)
    k.bad_value("zstd_level", std::to_string(s.zstd_level) + " is outside zstd's levels -7 to 22");
  s.sync = k.get<bool>("sync", s.sync);
  s.s3.endpoint = k.get<std::string>("s3_endpoint", s.s3.endpoint);
  s.s3.region = k.get<std::string>("s3_region", s.s3.region);
  s.s3.part_bytes = k.get<uint64_t>("s3_part_bytes", s.s3.part_bytes);
  if (s.s3.part_bytes < (5u << 20)) k.bad_value("s3_part_bytes", "must be at least 5 MiB (S3's smallest part)");
  return s;
}

}  // namespace h5loom::zarr
