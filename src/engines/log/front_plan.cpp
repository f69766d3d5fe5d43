#include "engines/log/front_plan.hpp"

#include <algorithm>
#include <stdexcept>

#include "engines/log/boxes.hpp"
#include "engines/log/index.hpp"

namespace h5loom::logengine {

using namespace logfmt;

namespace {

// What a block shows: its box, or the part of it a later shrink keeps
// (start, count); and where the stored box is, whose elements lie row-major
// in the log from `offset` on (a block, or blocks joined by join_blocks).
struct Shown {
  Dims start, count;
  Dims stored_start, stored_count;
  uint64_t offset = 0;
  bool whole() const { return start == stored_start && count == stored_count; }
};

// Whether the box (b_start, b_count) starts `extent` elements after the box
// (a_start, a_count) along dimension d and is the same in the others, with
// the box one element deep in every dimension before d: then the two follow
// each other in the dataset's row-major order (else their elements would
// interleave).
bool follows_along(const Dims& a_start, const Dims& a_count, uint64_t extent, const Dims& b_start,
                   const Dims& b_count, std::size_t d) {
  if (b_start[d] != a_start[d] + extent) return false;
  for (std::size_t k = 0; k < a_start.size(); ++k)
    if (k != d && (a_start[k] != b_start[k] || a_count[k] != b_count[k] || (k < d && a_count[k] != 1))) return false;
  return true;
}

// Whether box `b` continues box `a` in the dataset's row-major order as it
// does in the log: right after it in the log, and after it along one
// dimension (follows_along).
bool continues(const Shown& a, const Shown& b, uint64_t es) {
  if (!a.whole() || !b.whole() || a.offset + product(a.count) * es != b.offset) return false;
  for (std::size_t d = 0; d < a.start.size(); ++d)
    if (follows_along(a.start, a.count, a.count[d], b.start, b.count, d)) return true;
  return false;
}

// Joins blocks that continue each other (continues()) into larger boxes: a
// rank's tiles of the steps of a 3-D or 4-D dataset, written one after
// another, are one box in the front file, not one per write. Blocks in log
// order on a stack; the top two are joined while they can be (a row of tiles,
// then rows into a plane, and so on).
std::vector<Shown> join_blocks(std::vector<Shown> boxes, uint64_t es) {
  std::sort(boxes.begin(), boxes.end(), [](const Shown& a, const Shown& b) { return a.offset < b.offset; });
  std::vector<Shown> out;
  for (auto& b : boxes) {
    out.push_back(std::move(b));
    while (out.size() >= 2 && continues(out[out.size() - 2], out.back(), es)) {
      Shown& a = out[out.size() - 2];
      for (std::size_t d = 0; d < a.count.size(); ++d)
        if (out.back().start[d] != a.start[d]) a.count[d] += out.back().count[d];
      a.stored_count = a.count;
      out.pop_back();
    }
  }
  return out;
}

// Whether two of the boxes share an element. A sweep along the dimension
// where the boxes start at the most places: each box is compared with those
// starting before it ends there (tiles of a 4-D dataset: a few neighbours each).
bool overlapping(const std::vector<Shown>& boxes) {
  if (boxes.size() < 2) return false;
  const std::size_t nd = boxes.front().start.size();
  std::size_t sweep = 0, most = 0;
  std::vector<uint64_t> starts(boxes.size());
  for (std::size_t d = 0; d < nd; ++d) {
    for (std::size_t i = 0; i < boxes.size(); ++i) starts[i] = boxes[i].start[d];
    std::sort(starts.begin(), starts.end());
    const auto distinct = std::size_t(std::unique(starts.begin(), starts.end()) - starts.begin());
    if (distinct > most) most = distinct, sweep = d;
  }
  std::vector<const Shown*> by_start(boxes.size());
  for (std::size_t i = 0; i < boxes.size(); ++i) by_start[i] = &boxes[i];
  std::sort(by_start.begin(), by_start.end(),
            [&](const Shown* a, const Shown* b) { return a->start[sweep] < b->start[sweep]; });
  for (std::size_t i = 0; i < by_start.size(); ++i) {
    const Shown& a = *by_start[i];
    if (product(a.count) == 0) continue;
    for (std::size_t j = i + 1; j < by_start.size() && by_start[j]->start[sweep] < a.start[sweep] + a.count[sweep]; ++j) {
      const Shown& b = *by_start[j];
      bool meet = product(b.count) > 0;
      for (std::size_t d = 0; d < nd && meet; ++d)
        meet = a.start[d] < b.start[d] + b.count[d] && b.start[d] < a.start[d] + a.count[d];
      if (meet) return true;
    }
  }
  return false;
}

// The boxes of a virtual dataset, those that repeat each other joined: a box
// of the same shape as the one before it in the log, the next copy along a
// dimension of the dataset (follows_along), at the same distance in the log
// as the copies before it, is one more copy of it. `boxes` in log order, as
// join_blocks leaves them.
std::vector<FrontPlan::Box> repeated_boxes(const std::vector<Shown>& boxes, uint64_t es) {
  std::vector<FrontPlan::Box> out;
  auto next_along = [](const FrontPlan::Box& r, const Shown& b, std::size_t d) {
    return b.count == r.count && follows_along(r.start, r.count, r.repeat * r.count[d], b.start, b.count, d);
  };
  for (const auto& b : boxes) {
    if (!out.empty()) {
      FrontPlan::Box& r = out.back();
      const uint64_t bytes = product(r.count) * es;
      if (r.repeat == 1) {
        bool joined = false;
        for (std::size_t d = 0; d < r.count.size() && !joined && b.offset >= r.offset + bytes; ++d)
          if (next_along(r, b, d)) r.repeat = 2, r.dim = d, r.stride = b.offset - r.offset, joined = true;
        if (joined) continue;
      } else if (next_along(r, b, r.dim) && b.offset == r.offset + r.repeat * r.stride) {
        ++r.repeat;
        continue;
      }
    }
    out.push_back({b.start, b.count, b.offset});
  }
  return out;
}

}  // namespace

FrontPlan plan_front_dataset(const Tree& tree, const Index& index, int id, const std::string& log_name,
                             uint64_t max_pieces, uint64_t max_runs) {
  FrontPlan plan;
  const DatasetInfo& info = tree.datasets[std::size_t(id)];
  const auto& entries = index.blocks(uint32_t(id));
  const uint64_t es = datatype_size(info.dtype), total = product(info.shape);
  std::vector<Shown> shown;
  bool part_hidden = false;
  Dims limit, s, c;
  const Dims origin(info.shape.size(), 0);
  for (const auto& e : entries) {
    if (!tree.clipped(id, e, limit)) {
      shown.push_back({e.start, e.count, e.start, e.count, e.offset});
    } else if (intersect(e.start, e.count, origin, limit, s, c)) {
      shown.push_back({s, c, e.start, e.count, e.offset});
      part_hidden = true;
    }
  }
  if (shown.empty() || total == 0) {
    plan.kind = FrontPlan::Unwritten;
    return plan;
  }
  shown = join_blocks(std::move(shown), es);
  // External storage needs the blocks' contiguous runs of the dataset
  // (row-major) in dataset order, at most max_runs of them once runs that
  // the log continues are joined. Runs of one block never join (they are not
  // adjacent in the dataset, else they would be one run), so a dataset of more
  // runs than max_runs + blocks - 1 cannot have it: then the runs are not
  // listed (a 4-D dataset of 200 tiles is 6400 runs), and only the boxes are
  // checked for overlaps, as a virtual dataset needs.
  struct Run { uint64_t first, length, offset; };
  struct Shape { std::size_t inner; uint64_t run, count; };
  std::vector<Shape> shapes;
  shapes.reserve(shown.size());
  uint64_t total_runs = 0;
  for (const auto& b : shown) {
    const std::size_t nd = b.count.size();
    // A run goes on through inner dimensions the box spans whole, in the
    // dataset and in the block alike.
    std::size_t inner = nd - 1;
    uint64_t run = b.count[nd - 1];
    while (inner > 0 && b.count[inner] == info.shape[inner] && b.count[inner] == b.stored_count[inner])
      run *= b.count[--inner];
    shapes.push_back({inner, run, product(b.count) / std::max<uint64_t>(run, 1)});
    total_runs += shapes.back().count;
  }
  if (total_runs <= max_runs + shown.size() - 1) {
    std::vector<Run> runs;
    runs.reserve(total_runs);
    Dims in_dataset, in_stored, idx;  // per dimension: elements a step moves in the dataset, in the block; the box's index
    for (std::size_t i = 0; i < shown.size(); ++i) {
      const Shown& b = shown[i];
      const std::size_t nd = b.count.size(), inner = shapes[i].inner;
      in_dataset.assign(nd, 1), in_stored.assign(nd, 1), idx.assign(nd, 0);
      for (std::size_t d = nd; d-- > 1;)
        in_dataset[d - 1] = in_dataset[d] * info.shape[d], in_stored[d - 1] = in_stored[d] * b.stored_count[d];
      // The box's first run, then each next one by counting idx over
      // dimensions [0, inner) of the box, row-major, carrying as an odometer.
      uint64_t first = 0, in_block = 0;
      for (std::size_t d = 0; d < nd; ++d)
        first += b.start[d] * in_dataset[d], in_block += (b.start[d] - b.stored_start[d]) * in_stored[d];
      for (uint64_t k = 0; k < shapes[i].count; ++k) {
        runs.push_back({first, shapes[i].run, b.offset + in_block * es});
        for (std::size_t d = inner; d-- > 0;) {
          first += in_dataset[d], in_block += in_stored[d];
          if (++idx[d] < b.count[d]) break;
          idx[d] = 0, first -= b.count[d] * in_dataset[d], in_block -= b.count[d] * in_stored[d];
        }
      }
    }
    // Each block's runs are in dataset order already: merge the blocks' lists
    // (a few blocks, as one per rank), or sort them all (many).
    const auto by_first = [](const Run& a, const Run& b) { return a.first < b.first; };
    if (shown.size() <= 8) {
      for (std::size_t i = 1, end = shapes[0].count; i < shown.size(); end += shapes[i].count, ++i)
        std::inplace_merge(runs.begin(), runs.begin() + std::ptrdiff_t(end),
                           runs.begin() + std::ptrdiff_t(end + shapes[i].count), by_first);
    } else {
      std::sort(runs.begin(), runs.end(), by_first);
    }
    uint64_t next = 0;
    bool gaps = false;
    std::vector<LogBytes> segments;  // the log's runs in dataset order, merged where the log continues
    segments.reserve(runs.size());
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
    if (!gaps && segments.size() <= max_runs) {
      plan.kind = FrontPlan::External;
      plan.segments = std::move(segments);
      return plan;
    }
  } else if (shown.size() <= max_pieces && overlapping(shown)) {
    plan.why_not = "some of its elements were written more than once";
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
  plan.boxes = repeated_boxes(shown, es);
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

std::vector<VirtualMapping> LogArrays::mappings(const Datatype& dtype, const FrontPlan::Box& box) const {
  const uint64_t es = datatype_size(dtype), elements = product(box.count);
  auto run_of = [&](uint64_t offset) -> const Run* {
    if (auto t = by_type_.find(dtype.name()); t != by_type_.end()) {
      const auto& runs = t->second.runs;
      auto after = std::upper_bound(runs.begin(), runs.end(), offset,
                                    [](uint64_t o, const Run& r) { return o < r.first; });
      if (after != runs.begin() && offset < std::prev(after)->end) return &*std::prev(after);
    }
    throw std::logic_error("front file: a block at byte " + std::to_string(offset) + " of the log was not given");
  };
  auto mapping = [&](const Run& run, const Dims& start, uint64_t offset) {
    VirtualMapping m;
    m.start = start, m.count = box.count, m.file = ".", m.dataset = name_of(run.array);
    m.source_shape = {(run.end - run.first) / es};
    m.source_start = {(offset - run.first) / es};
    m.source_count = {elements};
    return m;
  };
  const Run& first = *run_of(box.offset);
  std::vector<VirtualMapping> out;
  if (box.repeat > 1 && box.offset + (box.repeat - 1) * box.stride + elements * es <= first.end) {
    // Every copy in one array: `repeat` blocks of the box along `dim`, and
    // `repeat` runs `stride` apart in the array.
    VirtualMapping m = mapping(first, box.start, box.offset);
    m.block = box.count, m.stride = box.count;
    m.count = Dims(box.count.size(), 1), m.count[box.dim] = box.repeat;
    m.source_block = {elements}, m.source_stride = {box.stride / es}, m.source_count = {box.repeat};
    out.push_back(std::move(m));
    return out;
  }
  for (uint64_t k = 0; k < box.repeat; ++k) {
    Dims start = box.start;
    start[box.dim] += k * box.count[box.dim];
    const uint64_t offset = box.offset + k * box.stride;
    out.push_back(mapping(*run_of(offset), start, offset));
  }
  return out;
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
