// Selection construction, validation against a dataspace and element counting.
#include <sstream>

#include "h5loom/selection.hpp"

namespace h5loom {

Selection Selection::box(Dims start, Dims count) {
  return hyperslab(std::move(start), std::move(count));
}

Selection Selection::hyperslab(Dims start, Dims count, Dims stride, Dims block) {
  const std::size_t n = start.size();
  if (count.size() != n || (!stride.empty() && stride.size() != n) || (!block.empty() && block.size() != n))
    throw SelectionError("hyperslab start " + dims_to_string(start) + ", count " + dims_to_string(count) +
                         ", stride " + dims_to_string(stride) + ", block " + dims_to_string(block) +
                         " have different numbers of dimensions");
  if (stride.empty()) stride.assign(n, 1);
  if (block.empty()) block.assign(n, 1);
  for (std::size_t d = 0; d < n; ++d) {
    if (block[d] == 0) throw SelectionError("hyperslab block " + dims_to_string(block) + " has a zero in dimension " + std::to_string(d));
    if (count[d] > 1 && stride[d] < block[d])
      throw SelectionError("hyperslab stride " + dims_to_string(stride) + " is smaller than block " +
                           dims_to_string(block) + " in dimension " + std::to_string(d) + " (blocks would overlap)");
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
    uint64_t last_block_start = start_[d] + (count_[d] - 1) * stride_[d];
    uint64_t end = last_block_start + block_[d];  // one past the last index
    bool overflow = last_block_start < start_[d] || end < last_block_start ||
                    (count_[d] > 1 && (count_[d] - 1) > (~uint64_t{0}) / stride_[d]);
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
      for (std::size_t d = 0; d < out.size(); ++d) out[d] = count_[d] * block_[d];
      return out;
    }
  }
  return {};
}

uint64_t Selection::num_elements(const Dims& shape) const {
  if (kind_ == Kind::None) return 0;
  return product(selected_shape(shape));
}

bool Selection::is_box() const {
  if (kind_ != Kind::Hyperslab) return kind_ == Kind::All;
  for (std::size_t d = 0; d < count_.size(); ++d)
    if (count_[d] > 1 && stride_[d] != block_[d]) return false;
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
      if (!unit_block) os << ", block=" << dims_to_string(block_);
      os << ')';
      return os.str();
    }
  }
  return "?";
}

}  // namespace h5loom
