// The zarr engine's knobs and their defaults (docs/engines/zarr.md).
#pragma once

#include <cstdint>
#include <string>

#include "engines/zarr/compression.hpp"
#include "engines/zarr/s3_store.hpp"
#include "h5loom/engine_plugin.hpp"

namespace h5loom::zarr {

constexpr uint64_t MiB = 1024 * 1024;

struct Settings {
  // Chunks of about this many bytes when a dataset has none of its own (the
  // HDF5 DAOS connector's rule and default, HDF5_DAOS_CHUNK_TARGET_SIZE). 0:
  // one chunk per dataset, as large as the dataset (or its first extent).
  uint64_t chunk_target_bytes = 1 * MiB;
  // Chunks smaller than half of this are stored in shards of about this many
  // bytes (Zarr's sharding_indexed codec): one object per shard. 0: no shards.
  uint64_t shard_target_bytes = 1 * MiB;
  // The compressor of new arrays whose program gives no HDF5 filters (knobs
  // "compressor": none, zstd, gzip or blosc; "zstd_level", "gzip_level",
  // "blosc_cname", "blosc_clevel", "blosc_shuffle").
  Compression compression;
  // Make every object durable before its flush returns (fdatasync before the
  // rename, then the directories), as the log engine syncs its commits.
  bool sync = true;
  // Stores at "s3://bucket/prefix" (docs/engines/zarr.md, "Stores").
  S3Config s3;

  static Settings from(engine::Knobs& k);
};

}  // namespace h5loom::zarr
