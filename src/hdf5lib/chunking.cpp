#include "hdf5lib/chunking.hpp"

#include <algorithm>

namespace h5loom::hdf5lib {

Dims auto_chunk_dims(const Dims& shape, const Dims& max_shape, std::size_t element_size, uint64_t target_bytes) {
  const std::size_t n = shape.size();
  const uint64_t target = std::max<uint64_t>(1, target_bytes / std::max<std::size_t>(1, element_size));
  Dims extent(n);
  for (std::size_t d = 0; d < n; ++d) {
    uint64_t maxd = max_shape.empty() ? shape[d] : max_shape[d];
    if (maxd > shape[d]) extent[d] = maxd == kUnlimited ? (uint64_t{1} << 40) : maxd;
    else extent[d] = std::max<uint64_t>(1, shape[d]);
  }
  Dims chunk = extent;
  for (std::size_t d = 0; d < n; ++d) {
    if (product(chunk) <= target) break;
    uint64_t rest = 1;
    for (std::size_t e = d + 1; e < n; ++e) rest *= chunk[e];
    chunk[d] = std::clamp<uint64_t>(target / rest, 1, extent[d]);
  }
  return chunk;
}

Dims resolve_chunks(const std::string& path, const DatasetSpec& spec, bool chunked_by_default, uint64_t target_bytes) {
  const Dims max_shape = spec.max_shape.empty() ? spec.shape : spec.max_shape;
  bool chunked = spec.layout_auto ? (max_shape != spec.shape || chunked_by_default) : spec.layout == Layout::Chunked;
  // A fixed dimension of size 0 cannot be chunked (a chunk must fit the maximum shape).
  for (uint64_t m : max_shape)
    if (m == 0) chunked = false;
  if (!chunked) return {};
  Dims chunks = spec.chunks.empty() ? auto_chunk_dims(spec.shape, max_shape, datatype_size(spec.dtype), target_bytes)
                                    : spec.chunks;
  for (std::size_t d = 0; d < chunks.size(); ++d)
    if (max_shape[d] != kUnlimited && chunks[d] > max_shape[d])
      throw SelectionError("cannot create dataset '" + path + "': chunks " + dims_to_string(chunks) +
                           " exceed max_shape " + dims_to_string(max_shape) + " in dimension " + std::to_string(d));
  return chunks;
}

}  // namespace h5loom::hdf5lib
