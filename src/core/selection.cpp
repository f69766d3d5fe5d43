// Selection construction, validation against a dataspace and element counting.
#include <algorithm>
#include <array>
#include <sstream>

#include "h5loom/selection.hpp"

namespace h5loom {

const Dims& Selection::ones(std::size_t n) {
  // HDF5 datasets have at most 32 dimensions; a rank beyond is refused later,
  // so this only has to be right, not fast.
  static const std::array<Dims, 33> table = [] {
    std::array<Dims, 33> t;
    for (std::size_t k = 0; k < t.size(); ++k) t[k].assign(k, 1);
    return t;
  }();
  if (n < table.size()) return table[n];
  thread_local Dims more;
  more.assign(n, 1);
  return more;
}

Selection Selection::box(Dims start, Dims count) {
  return hyperslab(std::move(start), std::move(count));
}

Selection Selection::hyperslab(Dims start, Dims count, Dims stride, Dims block) {
  const std::size_t n = start.size();
  if (count.size() != n || (!stride.empty() && stride.size() != n) || (!block.empty() && block.size() != n))
    throw SelectionError("hyperslab start " + dims_to_string(start) + ", count " + dims_to_string(count) +
                         ", stride " + dims_to_string(stride) + ", block " + dims_to_string(block) +
                         " have different numbers of dimensions");
  auto all_ones = [](const Dims& v) { return std::all_of(v.begin(), v.end(), [](uint64_t x) { return x == 1; }); };
  if (all_ones(stride)) stride.clear();  // stored as "all ones" (see ones())
  if (all_ones(block)) block.clear();
  for (std::size_t d = 0; d < n && !(stride.empty() && block.empty()); ++d) {
    const uint64_t st = stride.empty() ? 1 : stride[d], bl = block.empty() ? 1 : block[d];
    const Dims& shown_stride = stride.empty() ? ones(n) : stride;
    const Dims& shown_block = block.empty() ? ones(n) : block;
    if (bl == 0)
      throw SelectionError("hyperslab block " + dims_to_string(shown_block) + " has a zero in dimension " +
                           std::to_string(d));
    if (count[d] > 1 && st < bl)
      throw SelectionError("hyperslab stride " + dims_to_string(shown_stride) + " is smaller than block " +
                           dims_to_string(shown_block) + " in dimension " + std::to_string(d) +
                           " (blocks would overlap)");
  }
  Selection s(Kind::Hyperslab);
  s.start_ = std::move(start);
  s.count_ = std::move(count);
  s.stride_ = std::move(stride);
  s.block_ = std::move(block);
  return s;
}

void Selection::validate(const Dims& shape, const std::string& object) const {
  if (kind_ != Kind::Hyperslab) return;
  if (start_.size() != shape.size())
    throw SelectionError("selection " + to_string() + " has " + std::to_string(start_.size()) +
                         " dimensions but dataset '" + object + "' of shape " + dims_to_string(shape) + " has " +
                         std::to_string(shape.size()));
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (count_[d] == 0) continue;  // selects nothing in this dimension
    // last selected index = start + (count-1)*stride + block - 1, computed without overflow
    const uint64_t st = stride()[d], bl = block()[d];
    uint64_t last_block_start = start_[d] + (count_[d] - 1) * st;
    uint64_t end = last_block_start + bl;  // one past the last index
    bool overflow = last_block_start < start_[d] || end < last_block_start ||
                    (count_[d] > 1 && (count_[d] - 1) > (~uint64_t{0}) / st);
    if (overflow || end > shape[d])
      throw SelectionError("selection " + to_string() + " reaches index " +
                           (overflow ? std::string("beyond 2^64") : std::to_string(end - 1)) + " in dimension " +
                           std::to_string(d) + " of dataset '" + object + "' whose shape is " +
                           dims_to_string(shape));
  }
}

Dims Selection::selected_shape(const Dims& shape) const {
  switch (kind_) {
    case Kind::All: return shape;
    case Kind::None: return Dims(shape.size(), 0);
    case Kind::Hyperslab: {
      Dims out(count_.size());
      const Dims& bl = block();
      for (std::size_t d = 0; d < out.size(); ++d) out[d] = count_[d] * bl[d];
      return out;
    }
  }
  return {};
}

uint64_t Selection::num_elements(const Dims& shape) const {
  switch (kind_) {
    case Kind::None: return 0;
    case Kind::All: return product(shape);
    case Kind::Hyperslab: break;
  }
  // As product(selected_shape(shape)), without building it (once per write).
  uint64_t n = 1;
  for (std::size_t d = 0; d < count_.size(); ++d) n *= count_[d] * (block_.empty() ? 1 : block_[d]);
  return n;
}

bool Selection::is_box() const {
  if (kind_ != Kind::Hyperslab) return kind_ == Kind::All;
  if (stride_.empty() && block_.empty()) return true;
  const Dims &st = stride(), &bl = block();
  for (std::size_t d = 0; d < count_.size(); ++d)
    if (count_[d] > 1 && st[d] != bl[d]) return false;
  return true;
}

std::string Selection::to_string() const {
  switch (kind_) {
    case Kind::All: return "all";
    case Kind::None: return "none";
    case Kind::Hyperslab: {
      std::ostringstream os;
      os << "hyperslab(start=" << dims_to_string(start_) << ", count=" << dims_to_string(count_);
      bool unit_stride = true, unit_block = true;
      for (auto s : stride_) unit_stride = unit_stride && s == 1;
      for (auto b : block_) unit_block = unit_block && b == 1;
      if (!unit_stride) os << ", stride=" << dims_to_string(stride_);
      if (!unit_block) os << ", block=" << dims_to_string(block_);  // empty: all ones
      os << ')';
      return os.str();
    }
  }
  return "?";
}

}  // namespace h5loom
