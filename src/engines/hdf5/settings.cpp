#include "engines/hdf5/settings.hpp"

namespace h5loom::hdf5 {

Settings Settings::from(engine::Knobs& k) {
  Settings s;
  s.collective_transfer = k.choice("transfer", "independent", {"collective", "independent"}) == "collective";
  s.collective_metadata = k.get<bool>("collective_metadata", true);
  s.alignment_threshold = k.get<uint64_t>("alignment_threshold", s.alignment_threshold);
  s.alignment = k.get<uint64_t>("alignment", s.alignment);
  if (s.alignment == 0) k.bad_value("alignment", "must be at least 1 (1 turns alignment off)");
  s.meta_block_size = k.get<uint64_t>("meta_block_size", s.meta_block_size);
  s.chunked_by_default = k.choice("layout", "contiguous", {"contiguous", "chunked"}) == "chunked";
  s.chunk_target_bytes = k.get<uint64_t>("chunk_target_bytes", s.chunk_target_bytes);
  if (s.chunk_target_bytes == 0) k.bad_value("chunk_target_bytes", "must be positive");
  s.fill_time = k.choice("fill_time", s.fill_time, {"never", "alloc", "ifset"});
  s.libver_low = k.choice("libver_low", "earliest", {"earliest", "v18", "v110", "latest"});
  s.driver = k.choice("driver", "mpio", {"mpio", "sec2", "core"});
  s.sync = k.get<bool>("sync", s.sync);
  s.userblock = engine::userblock_knob(k);
  if (const auto* info = k.raw("mpi_info")) {
    if (!info->is_object()) k.bad_value("mpi_info", "must be an object of string hints, not " + info->dump());
    for (const auto& [key, value] : info->items()) {
      if (!value.is_string()) k.bad_value("mpi_info." + key, "hint values are strings, not " + value.dump());
      s.mpi_info[key] = value.get<std::string>();
    }
  }
  return s;
}

H5F_libver_t libver_of(const std::string& name) {
  if (name == "v18") return H5F_LIBVER_V18;
  if (name == "v110") return H5F_LIBVER_V110;
  if (name == "latest") return H5F_LIBVER_LATEST;
  return H5F_LIBVER_EARLIEST;
}

}  // namespace h5loom::hdf5
