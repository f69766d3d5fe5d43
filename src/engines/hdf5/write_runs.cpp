#include "engines/hdf5/write_runs.hpp"

namespace h5loom::hdf5 {

bool run_of(const Selection& sel, const Dims& shape, Run& run) {
  if (sel.kind() != Selection::Kind::Hyperslab || !sel.is_box() || shape.empty()) return false;
  const Dims start = sel.start();
  Dims count = sel.count();
  if (!sel.block().empty())  // a box: count blocks of block elements, no gaps
    for (std::size_t i = 0; i < count.size(); ++i) count[i] *= sel.block()[i];
  const std::size_t n = shape.size();
  std::size_t d = 0;  // the first dimension that selects more than one index
  while (d < n && count[d] == 1) ++d;
  for (std::size_t i = d + 1; i < n; ++i)
    if (start[i] != 0 || count[i] != shape[i]) return false;
  run.begin = row_major_index(start, shape);
  run.end = run.begin + product(count);
  return true;
}

namespace {

// Appends the boxes of the run [begin, end) within the dimensions from `dim`
// on, the earlier ones fixed at `prefix`.
void cover(uint64_t begin, uint64_t end, const Dims& shape, std::size_t dim, Dims prefix,
           std::vector<std::pair<Dims, Dims>>& out) {
  if (begin >= end) return;
  const std::size_t n = shape.size();
  uint64_t inner = 1;  // elements per index of dimension dim
  for (std::size_t i = dim + 1; i < n; ++i) inner *= shape[i];
  auto box = [&](uint64_t first, uint64_t rows) {
    Dims start = prefix, count(prefix.size(), 1);
    start.push_back(first);
    count.push_back(rows);
    for (std::size_t i = dim + 1; i < n; ++i) start.push_back(0), count.push_back(shape[i]);
    out.emplace_back(std::move(start), std::move(count));
  };
  if (dim + 1 == n) return box(begin, end - begin);
  uint64_t row = begin / inner;
  const uint64_t last_row = end / inner;  // the row the run ends in (exclusive where end is a row boundary)
  if (row == last_row) {  // within one index of this dimension
    Dims at = prefix;
    at.push_back(row);
    return cover(begin % inner, end - row * inner, shape, dim + 1, at, out);
  }
  if (begin % inner != 0) {  // the head: the rest of a row
    Dims at = prefix;
    at.push_back(row);
    cover(begin % inner, inner, shape, dim + 1, at, out);
    ++row;
  }
  if (last_row > row) box(row, last_row - row);  // whole rows
  if (end % inner != 0) {  // the tail: the start of a row
    Dims at = prefix;
    at.push_back(last_row);
    cover(0, end % inner, shape, dim + 1, at, out);
  }
}

}  // namespace

std::vector<std::pair<Dims, Dims>> boxes_of(Run run, const Dims& shape) {
  std::vector<std::pair<Dims, Dims>> out;
  cover(run.begin, run.end, shape, 0, {}, out);
  return out;
}

}  // namespace h5loom::hdf5
