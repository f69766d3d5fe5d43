// Decompositions (from maps and from PIO's "version 2001" files) and I/O systems.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/mpi_util.hpp"
#include "h5loom/pio.hpp"

namespace h5loom::pio {

std::vector<int> IOSystem::io_ranks() const {
  int size = 0;
  MPI_Comm_size(comm, &size);
  if (num_iotasks < 1 || stride < 1 || base < 0 ||
      int64_t(base) + int64_t(num_iotasks - 1) * stride >= int64_t(size))
    throw UsageError("an I/O system of " + std::to_string(num_iotasks) + " I/O tasks, stride " +
                     std::to_string(stride) + ", base " + std::to_string(base) + " does not fit in " +
                     std::to_string(size) + " ranks");
  std::vector<int> out;
  for (int k = 0; k < num_iotasks; ++k) out.push_back(base + k * stride);
  return out;
}

Rearranger rearranger_from_name(const std::string& name) {
  if (name == "box") return Rearranger::Box;
  if (name == "subset") return Rearranger::Subset;
  throw UsageError("rearranger '" + name + "' is neither 'box' nor 'subset'");
}

std::string rearranger_name(Rearranger r) { return r == Rearranger::Box ? "box" : "subset"; }

namespace {

// No offset held twice: each offset goes to the rank owning its share of the
// flattened array, which looks for repeats (one exchange, at setup).
void check_no_repeats(MPI_Comm comm, uint64_t total, const std::vector<int64_t>& map) {
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const int64_t share = int64_t((total + uint64_t(size) - 1) / uint64_t(size));
  const auto owner = [&](int64_t x) { return int(x / std::max<int64_t>(share, 1)); };
  std::vector<int> counts(size, 0), displs(size, 0), rcounts(size), rdispls(size, 0);
  for (int64_t x : map)
    if (x >= 0) ++counts[owner(x)];
  for (int p = 1; p < size; ++p) displs[p] = displs[p - 1] + counts[p - 1];
  std::vector<int64_t> out(map.size());
  std::vector<int> at = displs;
  for (int64_t x : map)
    if (x >= 0) out[at[owner(x)]++] = x;
  MPI_Alltoall(counts.data(), 1, MPI_INT, rcounts.data(), 1, MPI_INT, comm);
  for (int p = 1; p < size; ++p) rdispls[p] = rdispls[p - 1] + rcounts[p - 1];
  std::vector<int64_t> got(std::size_t(rdispls.back() + rcounts.back()));
  std::vector<int> from;  // the sending rank of each received offset
  for (int p = 0; p < size; ++p) from.insert(from.end(), std::size_t(rcounts[p]), p);
  MPI_Alltoallv(out.data(), counts.data(), displs.data(), MPI_INT64_T, got.data(), rcounts.data(), rdispls.data(),
                MPI_INT64_T, comm);
  std::vector<std::size_t> order(got.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return got[a] < got[b]; });
  mpi::agree(comm, [&] {
    for (std::size_t i = 1; i < order.size(); ++i)
      if (got[order[i]] == got[order[i - 1]])
        throw SelectionError("decomposition: offset " + std::to_string(got[order[i]]) + " (0-based) is held by rank " +
                             std::to_string(from[order[i - 1]]) + " and by rank " + std::to_string(from[order[i]]) +
                             "; each element of the array has at most one holder");
  });
}

// The next whitespace-separated integer of `in`; ConfigError naming `what` if there is none.
int64_t next_integer(std::istream& in, const std::string& path, const std::string& what) {
  std::string word;
  if (!(in >> word)) throw ConfigError("decomposition file '" + path + "' ends before " + what);
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(word.c_str(), &end, 10);
  if (errno || end == word.c_str() || *end)
    throw ConfigError("decomposition file '" + path + "': " + what + " is '" + word + "', not an integer");
  return v;
}

void expect_word(std::istream& in, const std::string& path, const std::string& word) {
  std::string got;
  if (!(in >> got) || got != word)
    throw ConfigError("decomposition file '" + path + "': expected '" + word + "', found '" + got + "'");
}

struct MapFile {
  Dims shape;                                // C order
  std::vector<std::vector<int64_t>> tasks;  // 1-based offsets, 0 = hole
};

MapFile parse_map_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw NotFoundError("cannot read decomposition file '" + path + "'");
  MapFile m;
  expect_word(in, path, "version");
  const int64_t version = next_integer(in, path, "the version");
  if (version != 2001)
    throw ConfigError("decomposition file '" + path + "' is version " + std::to_string(version) +
                      "; h5loom reads PIO's version 2001");
  expect_word(in, path, "npes");
  const int64_t npes = next_integer(in, path, "the number of tasks (npes)");
  expect_word(in, path, "ndims");
  const int64_t ndims = next_integer(in, path, "the number of dimensions (ndims)");
  if (npes < 1 || ndims < 1 || ndims > 32)
    throw ConfigError("decomposition file '" + path + "': npes " + std::to_string(npes) + ", ndims " +
                      std::to_string(ndims) + " (expected at least 1 task and 1 to 32 dimensions)");
  Dims fastest_first;
  for (int64_t d = 0; d < ndims; ++d) {
    const int64_t n = next_integer(in, path, "dimension " + std::to_string(d));
    if (n < 1) throw ConfigError("decomposition file '" + path + "': dimension " + std::to_string(d) + " is " +
                                 std::to_string(n));
    fastest_first.push_back(uint64_t(n));
  }
  m.shape.assign(fastest_first.rbegin(), fastest_first.rend());  // PIO lists the fastest dimension first
  const uint64_t total = product(m.shape);
  m.tasks.resize(std::size_t(npes));
  for (int64_t t = 0; t < npes; ++t) {
    const std::string task = "task " + std::to_string(t);
    if (next_integer(in, path, task + "'s number") != t)
      throw ConfigError("decomposition file '" + path + "': expected " + task + " next");
    const int64_t len = next_integer(in, path, task + "'s map length");
    if (len < 0 || uint64_t(len) > total)
      throw ConfigError("decomposition file '" + path + "': " + task + " has map length " + std::to_string(len));
    auto& offsets = m.tasks[std::size_t(t)];
    offsets.resize(std::size_t(len));
    for (auto& x : offsets) {
      x = next_integer(in, path, task + "'s offsets");
      if (x < 0 || uint64_t(x) > total)
        throw ConfigError("decomposition file '" + path + "': " + task + " holds offset " + std::to_string(x) +
                          ", outside the " + dims_to_string(m.shape) + " array (1-based, 0 a hole)");
    }
  }
  return m;  // what follows (PIO writes its stack trace there) is not read
}

}  // namespace

Decomposition Decomposition::from_map(MPI_Comm comm, Dims global_shape, const std::vector<int64_t>& map, int base) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Decomposition d;
  d.comm_ = comm;
  mpi::agree(comm, [&] {
    if (base != 0 && base != 1) throw UsageError("decomposition: base " + std::to_string(base) + " is not 0 or 1");
    if (global_shape.empty()) throw SelectionError("decomposition: the global shape has no dimensions");
    for (uint64_t n : global_shape)
      if (n == 0) throw SelectionError("decomposition: global shape " + dims_to_string(global_shape) + " has a 0");
    const int64_t total = int64_t(product(global_shape));
    d.map_.reserve(map.size());
    for (std::size_t i = 0; i < map.size(); ++i) {
      const int64_t x = map[i] - base;  // holes: -1 either way
      if (x < -1 || x >= total)
        throw SelectionError("decomposition: rank " + std::to_string(rank) + "'s map holds " + std::to_string(map[i]) +
                             " at position " + std::to_string(i) + ", outside the " + dims_to_string(global_shape) +
                             " array (" + std::to_string(base) + "-based, " + std::to_string(base - 1) + " a hole)");
      d.map_.push_back(x);
    }
  });
  d.shape_ = std::move(global_shape);
  check_no_repeats(comm, product(d.shape_), d.map_);
  return d;
}

Decomposition Decomposition::from_file(MPI_Comm comm, const std::string& path) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MapFile m;
  mpi::CaughtError error;
  if (rank == 0) error.run([&] { m = parse_map_file(path); });
  mpi::share_error(comm, 0, error);
  // The shape to every rank, then each rank's tasks (t % size), concatenated in task order.
  uint64_t ndims = m.shape.size();
  MPI_Bcast(&ndims, 1, MPI_UINT64_T, 0, comm);
  m.shape.resize(ndims);
  MPI_Bcast(m.shape.data(), int(ndims), MPI_UINT64_T, 0, comm);
  std::vector<int> counts(size, 0), displs(size, 0);
  std::vector<int64_t> all;
  if (rank == 0) {
    std::vector<std::vector<int64_t>> per_rank(size);
    for (std::size_t t = 0; t < m.tasks.size(); ++t) {
      auto& mine = per_rank[t % std::size_t(size)];
      mine.insert(mine.end(), m.tasks[t].begin(), m.tasks[t].end());
    }
    for (int p = 0; p < size; ++p) {
      counts[p] = int(per_rank[p].size());
      displs[p] = int(all.size());
      all.insert(all.end(), per_rank[p].begin(), per_rank[p].end());
    }
  }
  int mine_count = 0;
  MPI_Scatter(counts.data(), 1, MPI_INT, &mine_count, 1, MPI_INT, 0, comm);
  std::vector<int64_t> map(static_cast<std::size_t>(mine_count));
  MPI_Scatterv(all.data(), counts.data(), displs.data(), MPI_INT64_T, map.data(), mine_count, MPI_INT64_T, 0, comm);
  return from_map(comm, m.shape, map, 1);
}

}  // namespace h5loom::pio
