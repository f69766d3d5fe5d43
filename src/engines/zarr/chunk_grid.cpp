#include "engines/zarr/chunk_grid.hpp"

namespace h5loom::zarr {

uint64_t ChunkSlice::count() const {
  uint64_t n = 0;
  for (const Run& r : runs) n += r.n;
  return n;
}

namespace {

// The selected indices of dimension d as runs of the whole dataset: (start, mem, n).
std::vector<Run> selected_runs(const Selection& sel, const Dims& shape, std::size_t d) {
  if (sel.kind() == Selection::Kind::All) return shape[d] ? std::vector<Run>{{0, 0, shape[d]}} : std::vector<Run>{};
  const uint64_t start = sel.start()[d], count = sel.count()[d], stride = sel.stride()[d], block = sel.block()[d];
  if (count == 0 || block == 0) return {};
  if (stride == block || count == 1) return {{start, 0, count * block}};  // the blocks touch: one run
  std::vector<Run> runs;
  runs.reserve(count);
  for (uint64_t b = 0; b < count; ++b) runs.push_back({start + b * stride, b * block, block});
  return runs;
}

}  // namespace

std::vector<std::vector<ChunkSlice>> slice_by_chunks(const Selection& sel, const Dims& shape, const Dims& chunk) {
  const std::size_t rank = shape.size();
  std::vector<std::vector<ChunkSlice>> out(rank);
  if (sel.kind() == Selection::Kind::None) return std::vector<std::vector<ChunkSlice>>(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    const uint64_t c = chunk[d];
    for (Run r : selected_runs(sel, shape, d)) {
      while (r.n > 0) {  // cut at chunk boundaries
        const uint64_t index = r.at / c, chunk_end = (index + 1) * c;
        const uint64_t take = std::min(r.n, chunk_end - r.at);
        if (out[d].empty() || out[d].back().index != index) out[d].push_back({index, {}});
        out[d].back().runs.push_back({r.at - index * c, r.mem, take});
        r.at += take, r.mem += take, r.n -= take;
      }
    }
  }
  return out;
}

void for_each_chunk(const std::vector<std::vector<ChunkSlice>>& slices, const std::function<void(const ChunkPart&)>& fn) {
  const std::size_t rank = slices.size();
  for (const auto& s : slices)
    if (s.empty()) return;  // nothing selected in some dimension
  std::vector<std::size_t> at(rank, 0);
  ChunkPart part(rank);
  for (;;) {
    for (std::size_t d = 0; d < rank; ++d) part[d] = &slices[d][at[d]];
    fn(part);
    std::size_t d = rank;
    while (d > 0) {  // the odometer: the last dimension turns fastest
      --d;
      if (++at[d] < slices[d].size()) break;
      at[d] = 0;
      if (d == 0) return;
    }
    if (rank == 0) return;
  }
}

namespace {

void rows(const ChunkPart& part, const std::vector<uint64_t>& chunk_stride, const std::vector<uint64_t>& mem_stride,
          std::size_t d, uint64_t chunk_at, uint64_t mem_at, const std::function<void(uint64_t, uint64_t, uint64_t)>& fn) {
  const std::size_t last = part.size() - 1;
  for (const Run& r : part[d]->runs) {
    if (d == last) {
      fn(chunk_at + r.at, mem_at + r.mem, r.n);
      continue;
    }
    for (uint64_t i = 0; i < r.n; ++i)
      rows(part, chunk_stride, mem_stride, d + 1, chunk_at + (r.at + i) * chunk_stride[d],
           mem_at + (r.mem + i) * mem_stride[d], fn);
  }
}

}  // namespace

void for_each_row(const ChunkPart& part, const Dims& chunk, const Dims& mem,
                  const std::function<void(uint64_t, uint64_t, uint64_t)>& fn) {
  const std::size_t rank = part.size();
  if (rank == 0) return fn(0, 0, 1);
  std::vector<uint64_t> chunk_stride(rank, 1), mem_stride(rank, 1);
  for (std::size_t d = rank - 1; d > 0; --d) {
    chunk_stride[d - 1] = chunk_stride[d] * chunk[d];
    mem_stride[d - 1] = mem_stride[d] * mem[d];
  }
  rows(part, chunk_stride, mem_stride, 0, 0, 0, fn);
}

std::vector<ChunkSlice> packed(const ChunkPart& part) {
  std::vector<ChunkSlice> out;
  out.reserve(part.size());
  for (const ChunkSlice* s : part) {
    ChunkSlice p{s->index, {}};
    uint64_t mem = 0;
    for (const Run& r : s->runs) {
      p.runs.push_back({r.at, mem, r.n});
      mem += r.n;
    }
    out.push_back(std::move(p));
  }
  return out;
}

Dims packed_shape(const ChunkPart& part) {
  Dims out;
  for (const ChunkSlice* s : part) out.push_back(s->count());
  return out;
}

}  // namespace h5loom::zarr
