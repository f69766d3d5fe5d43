#include "engines/log/read_planner.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <tuple>

#include "engines/log/boxes.hpp"
#include "engines/log/index.hpp"
#include "engines/log/log_store.hpp"
#include "engines/log/metadata.hpp"
#include "h5loom/errors.hpp"

namespace h5loom::logengine {

namespace {

std::string describe_block(const std::string& where, const std::string& path, const BlockEntry& e) {
  return "dataset '" + path + "' in " + where + ": block at log offset " + std::to_string(e.offset) + " (epoch " +
         std::to_string(e.epoch) + ", rank " + std::to_string(e.rank) + ")";
}

}  // namespace

void ReadPlanner::read(const std::string& path, const Selection& sel, void* out) const {
  if (!read_through_bounding_box(path, sel, out)) read_selection(path, sel, out);
}

void ReadPlanner::read_selection(const std::string& path, const Selection& sel, void* out) const {
  const int id = tree_.dataset_id(path);
  const DatasetInfo& info = tree_.datasets.at(std::size_t(id));
  const std::size_t es = datatype_size(info.dtype);
  const Dims dense = sel.selected_shape(info.shape);
  auto* dst = static_cast<unsigned char*>(out);
  // Never-written elements read as the fill value (0 without one), as in HDF5.
  auto fill = [&] {
    if (product(dense) == 0) return;
    if (info.fill.empty()) std::memset(dst, 0, product(dense) * es);
    else for (uint64_t i = 0; i < product(dense); ++i) std::memcpy(dst + i * es, info.fill.data(), es);
  };
  if (index_.blocks(uint32_t(id)).empty()) return fill();

  struct Hit {
    const BlockEntry* entry;
    const PlacedBox* box;
  };
  auto boxes = selection_boxes(sel, info.shape);
  std::vector<Hit> hits;
  std::vector<const BlockEntry*> found;
  for (const auto& b : boxes) {
    found.clear();
    index_.search(uint32_t(id), b.start, b.count, found);
    for (const auto* e : found) hits.push_back({e, &b});
  }
  // Older writes first, so that later ones overwrite them.
  std::stable_sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    return std::tie(a.entry->epoch, a.entry->round, a.entry->rank, a.entry->counter) <
           std::tie(b.entry->epoch, b.entry->round, b.entry->rank, b.entry->counter);
  });
  // What each hit needs: the checksum units covering its bytes. A large block
  // that lands whole and contiguous in the output is read straight there
  // (`into_output`); the others are staged, and staged reads that lie close
  // together in the log are merged into one (a rank's many small writes were
  // appended together).
  const uint64_t unit = unit_;
  struct Need {
    const BlockEntry* e;
    Dims in_entry, in_dense, count;
    uint64_t r0, r1;            // unit-aligned byte range within the block
    unsigned char* into_output;  // where in the output it is read straight to, or null: staged
    std::size_t staged = 0;      // offset in the staging buffer
  };
  constexpr uint64_t kStraightMin = 1 << 20, kGap = 64 << 10, kBatch = 256ull << 20;
  std::vector<Need> needs;
  needs.reserve(hits.size());
  Dims s, c, limit, kept_s, kept_c;
  const Dims origin(info.shape.size(), 0);
  // The selection's boxes that one block covers whole: if every box is, no
  // element is left for the fill value (a rank reading back its own tile
  // would otherwise write its whole output twice).
  std::vector<char> box_whole(boxes.size(), 0);
  for (const auto& h : hits) {
    const BlockEntry& e = *h.entry;
    intersect(e.start, e.count, h.box->start, h.box->count, s, c);
    if (tree_.clipped(id, e, limit)) {  // a later shrink hides what lies outside `limit`
      if (!intersect(s, c, origin, limit, kept_s, kept_c)) continue;
      s.swap(kept_s), c.swap(kept_c);
    }
    Need n{&e, Dims(s.size()), Dims(s.size()), c, 0, 0, nullptr};
    Dims last(s.size());
    for (std::size_t d = 0; d < s.size(); ++d) {
      n.in_entry[d] = s[d] - e.start[d];
      last[d] = n.in_entry[d] + c[d] - 1;
      n.in_dense[d] = h.box->dense_start[d] + (s[d] - h.box->start[d]);
    }
    if (e.unit_crcs.size() != (e.nbytes + unit - 1) / unit)
      throw CorruptionError("checksum list of " + describe_block(where_, path, e) + " has the wrong length");
    uint64_t b0 = row_major_index(n.in_entry, e.count) * es, b1 = (row_major_index(last, e.count) + 1) * es;
    n.r0 = b0 / unit * unit;
    n.r1 = std::min((b1 + unit - 1) / unit * unit, e.nbytes);
    bool contiguous = c == e.count;
    for (std::size_t d = 1; d < c.size(); ++d) contiguous = contiguous && c[d] == dense[d];
    if (contiguous && e.nbytes >= kStraightMin) n.into_output = dst + row_major_index(n.in_dense, dense) * es;
    if (c == h.box->count) box_whole[std::size_t(h.box - boxes.data())] = 1;
    needs.push_back(std::move(n));
  }
  if (std::find(box_whole.begin(), box_whole.end(), 0) != box_whole.end()) fill();
  // The staging buffer starts on a page and each span sits at its log
  // offset's place in a page, so the kernel copies into it at full speed
  // (core/memory_copy.hpp; a few KiB of padding per span). Not zeroed: only
  // the spans' bytes are used, and each is read before it is.
  std::unique_ptr<unsigned char[]> staging_memory;
  std::size_t staging_size = 0;
  unsigned char* staging = nullptr;
  const std::string reading = "reading dataset '" + path + "' in " + where_;
  for (std::size_t begin = 0; begin < needs.size();) {
    // A batch of needs (in write order) whose staged bytes stay under kBatch.
    std::size_t end = begin;
    uint64_t staged = 0;
    while (end < needs.size() && (end == begin || staged < kBatch)) {
      if (!needs[end].into_output) staged += needs[end].r1 - needs[end].r0;
      ++end;
    }
    // Staged reads, merged in log order.
    std::vector<Need*> order;
    for (std::size_t i = begin; i < end; ++i)
      if (!needs[i].into_output) order.push_back(&needs[i]);
    std::sort(order.begin(), order.end(),
              [](const Need* a, const Need* b) { return a->e->offset + a->r0 < b->e->offset + b->r0; });
    struct Span { uint64_t from, to; std::size_t at; };
    std::vector<Span> spans;
    uint64_t total = 0;
    for (Need* n : order) {
      uint64_t from = n->e->offset + n->r0, to = n->e->offset + n->r1;
      if (spans.empty() || from > spans.back().to + kGap || from < spans.back().from) {
        spans.push_back({from, to, total + ((from - total) & 4095)});
      } else if (to > spans.back().to) {
        spans.back().to = to;
      }
      total = spans.back().at + (spans.back().to - spans.back().from);
      n->staged = spans.back().at + (from - spans.back().from);
    }
    if (staging_size < total + 4096) {
      staging_size = total + 4096;
      staging_memory.reset(new unsigned char[staging_size]);
      const auto base = reinterpret_cast<std::uintptr_t>(staging_memory.get());
      staging = staging_memory.get() + ((4096 - (base & 4095)) & 4095);
    }
    for (const auto& sp : spans) log_.read(staging + sp.at, sp.to - sp.from, sp.from, reading);
    // Then every need of the batch, in write order: read the straight ones, check, copy.
    for (std::size_t i = begin; i < end; ++i) {
      Need& n = needs[i];
      const BlockEntry& e = *n.e;
      unsigned char* bytes = n.into_output ? n.into_output : staging + n.staged;
      if (n.into_output) log_.read(bytes, n.r1 - n.r0, e.offset + n.r0, "reading " + describe_block(where_, path, e));
      for (uint64_t at = n.r0; at < n.r1; at += unit) {
        uint64_t len = std::min(unit, e.nbytes - at);
        if (logfmt::crc32c(bytes + (at - n.r0), len) != e.unit_crcs[at / unit])
          throw CorruptionError("checksum mismatch in " + describe_block(where_, path, e) + ", bytes " +
                                std::to_string(at) + ".." + std::to_string(at + len) + " of the block");
      }
      if (!n.into_output) copy_subbox(bytes, e.count, n.in_entry, dst, dense, n.in_dense, n.count, es, n.r0);
    }
    begin = end;
  }
}

// A strided selection of many small pieces (every 8th particle, say) is read
// as its bounding box, then picked apart in memory: one range search and
// large reads instead of one per piece. Only when the box is not much larger.
// The pieces are never listed one by one (65 536 of them took 20 ms to list
// and copy as boxes): each dimension's selected indices are, and the last
// dimension's runs.
bool ReadPlanner::read_through_bounding_box(const std::string& path, const Selection& sel, void* out) const {
  if (sel.kind() != Selection::Kind::Hyperslab || sel.is_box()) return false;
  const DatasetInfo& info = tree_.datasets.at(std::size_t(tree_.dataset_id(path)));
  const std::size_t nd = info.shape.size(), es = datatype_size(info.dtype);
  const Dims &start = sel.start(), &count = sel.count(), &stride = sel.stride(), &block = sel.block();
  if (nd == 0 || start.size() != nd) return false;
  Dims lo(nd), extent(nd);
  uint64_t pieces = 1;
  for (std::size_t d = 0; d < nd; ++d) {
    if (count[d] == 0 || block[d] == 0) return false;
    if (count[d] > 1 && stride[d] != block[d]) pieces = std::min<uint64_t>(pieces * count[d], uint64_t(1) << 40);
    lo[d] = start[d];
    extent[d] = (count[d] - 1) * stride[d] + block[d];
  }
  const Dims dense = sel.selected_shape(info.shape);
  if (pieces < 64) return false;
  if (product(extent) > 16 * product(dense) || product(extent) * es > (512ull << 20)) return false;
  // Not zeroed first: read_selection writes every byte of it.
  std::unique_ptr<unsigned char[]> whole(new unsigned char[product(extent) * es]);
  read_selection(path, Selection::box(lo, extent), whole.get());
  // Per outer dimension, the selected indices within the bounding box; along
  // the last one, the runs of consecutive elements (start, length).
  std::vector<std::vector<uint64_t>> rows(nd - 1);
  for (std::size_t d = 0; d + 1 < nd; ++d)
    for (uint64_t i = 0; i < count[d]; ++i)
      for (uint64_t j = 0; j < block[d]; ++j) rows[d].push_back(i * stride[d] + j);
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  const std::size_t last = nd - 1;
  if (count[last] == 1 || stride[last] == block[last]) runs.push_back({0, count[last] * block[last]});
  else
    for (uint64_t i = 0; i < count[last]; ++i) runs.push_back({i * stride[last], block[last]});
  auto* dst = static_cast<unsigned char*>(out);
  std::vector<std::size_t> at(nd - 1, 0);  // odometer over the outer dimensions' selected indices
  while (true) {
    uint64_t row = 0;  // the row's first element in `whole`
    for (std::size_t d = 0; d + 1 < nd; ++d) row = (row + rows[d][at[d]]) * extent[d + 1];
    const unsigned char* src = whole.get() + row * es;
    for (const auto& [first, length] : runs) {
      std::memcpy(dst, src + first * es, length * es);
      dst += length * es;
    }
    std::size_t d = nd - 1;
    while (d > 0 && ++at[d - 1] == rows[d - 1].size()) at[--d] = 0;
    if (d == 0) return true;
  }
}

}  // namespace h5loom::logengine
