#include "engines/log/boxes.hpp"

#include <algorithm>
#include <cstring>

#include "core/memory_copy.hpp"

namespace h5loom::logengine {

std::vector<PlacedBox> selection_boxes(const Selection& sel, const Dims& shape) {
  const std::size_t nd = shape.size();
  if (sel.kind() == Selection::Kind::None) return {};
  if (sel.kind() == Selection::Kind::All) {
    if (product(shape) == 0) return {};
    return {PlacedBox{Dims(nd, 0), shape, Dims(nd, 0)}};
  }
  // Per dimension, the segments (file start, length, dense start) of the hyperslab.
  struct Segment { uint64_t start, length, dense; };
  std::vector<std::vector<Segment>> per_dim(nd);
  for (std::size_t d = 0; d < nd; ++d) {
    uint64_t count = sel.count()[d], block = sel.block().empty() ? 1 : sel.block()[d];
    uint64_t stride = sel.stride().empty() ? 1 : sel.stride()[d];
    if (count == 0 || block == 0) return {};
    if (count == 1 || stride == block) {
      per_dim[d].push_back({sel.start()[d], count * block, 0});
    } else {
      for (uint64_t i = 0; i < count; ++i) per_dim[d].push_back({sel.start()[d] + i * stride, block, i * block});
    }
  }
  std::vector<PlacedBox> out;
  std::vector<std::size_t> idx(nd, 0);
  while (true) {
    PlacedBox b{Dims(nd), Dims(nd), Dims(nd)};
    for (std::size_t d = 0; d < nd; ++d) {
      const auto& s = per_dim[d][idx[d]];
      b.start[d] = s.start, b.count[d] = s.length, b.dense_start[d] = s.dense;
    }
    out.push_back(std::move(b));
    std::size_t d = nd;
    while (d > 0) {
      --d;
      if (++idx[d] < per_dim[d].size()) break;
      idx[d] = 0;
      if (d == 0) return out;
    }
    if (nd == 0) return out;
  }
}

bool intersect(const Dims& a_start, const Dims& a_count, const Dims& b_start, const Dims& b_count, Dims& start,
               Dims& count) {
  const std::size_t nd = a_start.size();
  start.resize(nd);
  count.resize(nd);
  for (std::size_t d = 0; d < nd; ++d) {
    uint64_t lo = std::max(a_start[d], b_start[d]);
    uint64_t hi = std::min(a_start[d] + a_count[d], b_start[d] + b_count[d]);
    if (hi <= lo) return false;
    start[d] = lo, count[d] = hi - lo;
  }
  return true;
}

bool append_box(const Dims& a_start, Dims& a_count, const Dims& b_start, const Dims& b_count) {
  const std::size_t nd = a_start.size();
  if (b_start.size() != nd || a_count.size() != nd || b_count.size() != nd || nd == 0) return false;
  std::size_t k = 0;  // the dimension along which b follows a
  while (k < nd && a_count[k] == 1 && b_count[k] == 1 && a_start[k] == b_start[k]) ++k;
  if (k == nd || b_start[k] != a_start[k] + a_count[k]) return false;
  for (std::size_t d = k + 1; d < nd; ++d)
    if (a_start[d] != b_start[d] || a_count[d] != b_count[d]) return false;
  a_count[k] += b_count[k];
  return true;
}

void copy_subbox(const unsigned char* src, const Dims& src_shape, const Dims& src_start, unsigned char* dst,
                 const Dims& dst_shape, const Dims& dst_start, const Dims& count, std::size_t element_size,
                 uint64_t src_byte_shift) {
  const std::size_t nd = count.size();
  if (nd == 0) {
    std::memcpy(dst, src - src_byte_shift, element_size);
    return;
  }
  if (product(count) == 0) return;
  // Collapse the trailing dimensions that both arrays hold whole: one memcpy per run.
  std::size_t inner = nd - 1;
  uint64_t run = count[nd - 1];
  while (inner > 0 && count[inner] == src_shape[inner] && count[inner] == dst_shape[inner]) {
    --inner;
    run *= count[inner];
  }
  const std::size_t run_bytes = run * element_size;
  std::vector<uint64_t> idx(inner, 0);  // odometer over the outer dimensions [0, inner)
  Dims s(src_start), t(dst_start);
  while (true) {
    for (std::size_t d = 0; d < inner; ++d) s[d] = src_start[d] + idx[d], t[d] = dst_start[d] + idx[d];
    uint64_t so = row_major_index(s, src_shape) * element_size - src_byte_shift;
    uint64_t to = row_major_index(t, dst_shape) * element_size;
    copy_bytes(dst + to, src + so, run_bytes);
    std::size_t d = inner;
    while (d > 0) {
      --d;
      if (++idx[d] < count[d]) break;
      idx[d] = 0;
      if (d == 0) return;
    }
    if (inner == 0) return;
  }
}

}  // namespace h5loom::logengine
