#include "engines/log/front_plan.hpp"

#include <algorithm>
#include <stdexcept>

#include "engines/log/boxes.hpp"
#include "engines/log/index.hpp"

namespace h5loom::logengine {

using namespace logfmt;

FrontPlan plan_front_dataset(const Tree& tree, const Index& index, int id, const std::string& log_name,
                             uint64_t max_pieces) {
  constexpr uint64_t kFewSegments = 64;
  FrontPlan plan;
  const DatasetInfo& info = tree.datasets[std::size_t(id)];
  const auto& entries = index.blocks(uint32_t(id));
  const uint64_t es = datatype_size(info.dtype), total = product(info.shape);
  // What each block shows: its box, or the part of it a later shrink keeps.
  struct Shown {
    const BlockEntry* e;
    Dims start, count;
  };
  std::vector<Shown> shown;
  bool part_hidden = false;
  Dims limit, s, c;
  const Dims origin(info.shape.size(), 0);
  for (const auto& e : entries) {
    if (!tree.clipped(id, e, limit)) {
      shown.push_back({&e, e.start, e.count});
    } else if (intersect(e.start, e.count, origin, limit, s, c)) {
      shown.push_back({&e, s, c});
      part_hidden = true;
    }
  }
  if (shown.empty() || total == 0) {
    plan.kind = FrontPlan::Unwritten;
    return plan;
  }
  // The blocks' contiguous runs of the dataset (row-major), to find overlaps and gaps.
  struct Run { uint64_t first, length, offset; };
  std::vector<Run> runs;
  const uint64_t hard_cap = std::max<uint64_t>(max_pieces * 64, 100000);
  for (const auto& b : shown) {
    const BlockEntry& e = *b.e;
    const std::size_t nd = b.count.size();
    // A run goes on through inner dimensions the box spans whole, in the
    // dataset and in the block alike.
    std::size_t inner = nd - 1;
    uint64_t run = b.count[nd - 1];
    while (inner > 0 && b.count[inner] == info.shape[inner] && b.count[inner] == e.count[inner])
      run *= b.count[--inner];
    uint64_t nruns = product(b.count) / std::max<uint64_t>(run, 1);
    if (runs.size() + nruns > hard_cap) {
      plan.why_not = "its blocks make too many pieces";
      return plan;
    }
    Dims idx(nd, 0), at(nd);
    for (uint64_t k = 0; k < nruns; ++k) {
      // idx counts over dimensions [0, inner) of the box, row-major.
      uint64_t rem = k;
      for (std::size_t d = inner; d-- > 0;) idx[d] = rem % b.count[d], rem /= b.count[d];
      for (std::size_t d = 0; d < nd; ++d) at[d] = b.start[d] + (d < inner ? idx[d] : 0);
      uint64_t in_block = 0;
      for (std::size_t d = 0; d < nd; ++d) in_block = in_block * e.count[d] + (at[d] - e.start[d]);
      runs.push_back({row_major_index(at, info.shape), run, e.offset + in_block * es});
    }
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.first < b.first; });
  uint64_t next = 0;
  bool gaps = false;
  struct Bytes { uint64_t offset, size; };
  std::vector<Bytes> segments;  // the log's runs in dataset order, merged where the log continues
  for (const auto& r : runs) {
    if (r.first < next) {
      plan.why_not = "some of its elements were written more than once";
      return plan;
    }
    gaps = gaps || r.first > next;
    next = r.first + r.length;
    if (!segments.empty() && segments.back().offset + segments.back().size == r.offset)
      segments.back().size += r.length * es;
    else
      segments.push_back({r.offset, r.length * es});
  }
  gaps = gaps || next != total;
  // External storage even for tiles of many runs: HDF5 1.14 creates a dataset
  // of 64 segments in less time than a virtual dataset of two boxes.
  if (!gaps && segments.size() <= kFewSegments) {
    plan.kind = FrontPlan::External;
    for (const auto& b : segments) plan.segments.push_back({log_name, b.offset, b.size});
    return plan;
  }
  if (part_hidden) {
    plan.why_not = "it shrank after some of its blocks were written";
    return plan;
  }
  if (shown.size() > max_pieces) {
    plan.why_not = "it has " + std::to_string(shown.size()) + " blocks in the log (more than max_external_segments " +
                   std::to_string(max_pieces) + ")";
    return plan;
  }
  if (tree.nodes.count(kFrontSources)) {  // the name is taken by the user's own object
    plan.why_not = std::string("the front file's name ") + kFrontSources + " is in use";
    return plan;
  }
  plan.kind = FrontPlan::Virtual;
  for (const auto& b : shown) plan.boxes.push_back({b.start, b.count, b.e->offset});
  return plan;
}

LogArrays::LogArrays(std::string log_name, std::vector<Block> blocks) : log_name_(std::move(log_name)) {
  std::sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) { return a.offset < b.offset; });
  for (const auto& b : blocks) {
    const uint64_t end = b.offset + b.elements * datatype_size(b.dtype);
    auto [at, made] = by_type_.try_emplace(b.dtype.name(), Runs{b.dtype, {}});
    auto& runs = at->second.runs;
    if (!runs.empty() && runs.back().end == b.offset) {
      runs.back().end = end;  // the same type right after: the same run
    } else {
      runs.push_back({b.offset, end, count_++});
    }
  }
}

VirtualMapping LogArrays::mapping(const Datatype& dtype, const Dims& start, const Dims& count, uint64_t offset) const {
  const Run* run = nullptr;
  if (auto t = by_type_.find(dtype.name()); t != by_type_.end()) {
    const auto& runs = t->second.runs;
    auto after = std::upper_bound(runs.begin(), runs.end(), offset,
                                  [](uint64_t o, const Run& r) { return o < r.first; });
    if (after != runs.begin() && offset < std::prev(after)->end) run = &*std::prev(after);
  }
  if (!run)
    throw std::logic_error("front file: a block at byte " + std::to_string(offset) + " of the log was not given");
  const uint64_t es = datatype_size(dtype);
  VirtualMapping m;
  m.start = start, m.count = count, m.file = ".", m.dataset = name_of(run->array);
  m.source_shape = {(run->end - run->first) / es};
  m.source_start = {(offset - run->first) / es};
  m.source_count = {product(count)};
  return m;
}

std::vector<std::pair<std::string, DatasetSpec>> LogArrays::arrays() const {
  std::vector<std::pair<std::string, DatasetSpec>> out(count_);
  for (const auto& [name, t] : by_type_)
    for (const auto& r : t.runs) {
      DatasetSpec spec;
      spec.dtype = t.dtype, spec.shape = {(r.end - r.first) / datatype_size(t.dtype)};
      spec.external = {{log_name_, r.first, r.end - r.first}};
      out[r.array] = {name_of(r.array), std::move(spec)};
    }
  return out;
}

}  // namespace h5loom::logengine
