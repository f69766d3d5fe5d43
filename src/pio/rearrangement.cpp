// The box and subset rearrangers: which I/O task stores each element, the
// exchange that takes the elements there (MPI_Alltoallv, planned once), and
// the I/O tasks' writes and reads.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/mpi_util.hpp"
#include "h5loom/pio.hpp"

namespace h5loom::pio {

struct Rearrangement::Plan {
  Rearranger kind = Rearranger::Box;
  MPI_Comm comm = MPI_COMM_NULL;
  Dims shape;               // the decomposition's
  uint64_t row_elements = 1;  // elements per index of the slowest dimension
  std::size_t local_size = 0;
  // This rank as a holder: its elements in the order they are sent (by I/O
  // task), and how many go to each rank.
  std::vector<std::size_t> send_index;
  std::vector<int> send_counts, send_displs;
  // This rank as an I/O task (empty otherwise): the offsets it receives, in
  // the order they arrive, and how many from each rank.
  bool io_task = false;
  std::vector<int64_t> received;
  std::vector<int> recv_counts, recv_displs;
  // Box: the slab of rows [first_row, end_row). Subset: the received offsets
  // sorted (`sorted_order`: their indices in `received`, in that order), cut
  // into runs along the fastest dimension.
  uint64_t first_row = 0, end_row = 0;
  std::vector<std::size_t> sorted_order;
  std::vector<int64_t> sorted;
  struct Run { int64_t offset; uint64_t length; std::size_t at; };  // `at`: index in `sorted`
  std::vector<Run> runs;

  // The offset's start in the decomposition's shape.
  Dims start_of(int64_t offset) const {
    Dims start(shape.size());
    uint64_t rem = uint64_t(offset);
    for (std::size_t d = shape.size(); d-- > 0;) start[d] = rem % shape[d], rem /= shape[d];
    return start;
  }
};

namespace {

// `dims` (start or count in the decomposition's shape) for a dataset that has
// one more, leading dimension (the record dimension): the frame put in front.
Selection in_dataset(const Dataset& ds, std::size_t rank, Dims start, Dims count, uint64_t frame) {
  const std::size_t ds_rank = ds.shape().size();
  if (ds_rank == rank + 1) {
    start.insert(start.begin(), frame);
    count.insert(count.begin(), 1);
  } else if (ds_rank != rank || frame != 0) {
    throw SelectionError("dataset '" + ds.path() + "' of shape " + dims_to_string(ds.shape()) +
                         " does not hold a decomposition of " + std::to_string(rank) + " dimensions" +
                         (frame ? " at frame " + std::to_string(frame) : std::string()) +
                         " (its shape, or one more leading dimension for frames)");
  }
  return Selection::box(start, count);
}

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> out(counts.size(), 0);
  for (std::size_t p = 1; p < counts.size(); ++p) out[p] = out[p - 1] + counts[p - 1];
  return out;
}

// The exchange of `es`-byte elements: counts and displacements in elements.
void exchange(MPI_Comm comm, const void* send, const std::vector<int>& scounts, const std::vector<int>& sdispls,
              void* recv, const std::vector<int>& rcounts, const std::vector<int>& rdispls, std::size_t es) {
  MPI_Datatype element;
  MPI_Type_contiguous(int(es), MPI_BYTE, &element);
  MPI_Type_commit(&element);
  MPI_Alltoallv(send, scounts.data(), sdispls.data(), element, recv, rcounts.data(), rdispls.data(), element, comm);
  MPI_Type_free(&element);
}

}  // namespace

Rearrangement::Rearrangement(const Decomposition& decomposition, const IOSystem& io, Rearranger kind)
    : plan_(std::make_unique<Plan>()) {
  Plan& p = *plan_;
  p.kind = kind;
  p.comm = decomposition.comm();
  p.shape = decomposition.global_shape();
  p.local_size = decomposition.local_size();
  int rank = 0, size = 1, congruent = MPI_UNEQUAL;
  MPI_Comm_rank(p.comm, &rank);
  MPI_Comm_size(p.comm, &size);
  MPI_Comm_compare(p.comm, io.comm, &congruent);
  std::vector<int> io_ranks;
  mpi::agree(p.comm, [&] {
    if (congruent != MPI_IDENT && congruent != MPI_CONGRUENT)
      throw UsageError("a rearrangement needs the decomposition and the I/O system on one communicator");
    io_ranks = io.io_ranks();
  });
  const int K = int(io_ranks.size());
  const uint64_t rows = p.shape[0];
  p.row_elements = product(p.shape) / rows;
  // Box: I/O task k stores rows [k * rows / K, (k + 1) * rows / K).
  std::vector<uint64_t> row_start(std::size_t(K) + 1);
  for (int k = 0; k <= K; ++k) row_start[std::size_t(k)] = uint64_t(k) * rows / uint64_t(K);
  const auto task_of = [&](int64_t offset) -> int {
    if (kind == Rearranger::Subset) return int(int64_t(rank) * K / size);  // this rank's group
    const uint64_t row = uint64_t(offset) / p.row_elements;
    return int(std::upper_bound(row_start.begin(), row_start.end(), row) - row_start.begin()) - 1;
  };
  const auto& map = decomposition.map();
  p.send_counts.assign(std::size_t(size), 0);
  std::vector<int> dest(map.size(), -1);
  for (std::size_t i = 0; i < map.size(); ++i)
    if (map[i] >= 0) ++p.send_counts[std::size_t(dest[i] = io_ranks[std::size_t(task_of(map[i]))])];
  p.send_displs = displacements(p.send_counts);
  p.send_index.resize(std::size_t(p.send_displs.back() + p.send_counts.back()));
  std::vector<int> at = p.send_displs;
  for (std::size_t i = 0; i < map.size(); ++i)
    if (dest[i] >= 0) p.send_index[std::size_t(at[std::size_t(dest[i])]++)] = i;
  std::vector<int64_t> offsets(p.send_index.size());
  for (std::size_t j = 0; j < offsets.size(); ++j) offsets[j] = map[p.send_index[j]];
  p.recv_counts.assign(std::size_t(size), 0);
  MPI_Alltoall(p.send_counts.data(), 1, MPI_INT, p.recv_counts.data(), 1, MPI_INT, p.comm);
  p.recv_displs = displacements(p.recv_counts);
  p.received.resize(std::size_t(p.recv_displs.back() + p.recv_counts.back()));
  MPI_Alltoallv(offsets.data(), p.send_counts.data(), p.send_displs.data(), MPI_INT64_T, p.received.data(),
                p.recv_counts.data(), p.recv_displs.data(), MPI_INT64_T, p.comm);
  const auto me = std::find(io_ranks.begin(), io_ranks.end(), rank);
  p.io_task = me != io_ranks.end();
  if (!p.io_task) return;
  const std::size_t k = std::size_t(me - io_ranks.begin());
  p.first_row = row_start[k], p.end_row = row_start[k + 1];
  if (kind == Rearranger::Subset) {
    p.sorted_order.resize(p.received.size());
    std::iota(p.sorted_order.begin(), p.sorted_order.end(), std::size_t(0));
    std::sort(p.sorted_order.begin(), p.sorted_order.end(),
              [&](std::size_t a, std::size_t b) { return p.received[a] < p.received[b]; });
    for (std::size_t j : p.sorted_order) p.sorted.push_back(p.received[j]);
    const uint64_t fastest = p.shape.back();
    for (std::size_t j = 0; j < p.sorted.size(); ++j) {
      const int64_t x = p.sorted[j];
      if (!p.runs.empty() && p.runs.back().offset + int64_t(p.runs.back().length) == x && uint64_t(x) % fastest != 0)
        ++p.runs.back().length;
      else
        p.runs.push_back({x, 1, j});
    }
  }
}

Rearrangement::~Rearrangement() = default;
Rearrangement::Rearrangement(Rearrangement&&) noexcept = default;
Rearrangement& Rearrangement::operator=(Rearrangement&&) noexcept = default;

Rearranger Rearrangement::kind() const { return plan_->kind; }
std::size_t Rearrangement::local_size() const { return plan_->local_size; }
bool Rearrangement::is_io_task() const { return plan_->io_task; }

std::vector<std::pair<Dims, Dims>> Rearrangement::io_boxes() const {
  const Plan& p = *plan_;
  std::vector<std::pair<Dims, Dims>> out;
  if (!p.io_task) return out;
  if (p.kind == Rearranger::Box) {
    if (p.end_row == p.first_row) return out;
    Dims start(p.shape.size(), 0), count = p.shape;
    start[0] = p.first_row, count[0] = p.end_row - p.first_row;
    out.emplace_back(start, count);
    return out;
  }
  for (const auto& r : p.runs) {
    Dims count(p.shape.size(), 1);
    count.back() = r.length;
    out.emplace_back(p.start_of(r.offset), count);
  }
  return out;
}

namespace {

// Checks every rank makes before the exchange, agreed on (a rank alone refusing would leave the others waiting).
void check_transfer(MPI_Comm comm, const Dims& shape, std::size_t local_size, const Dataset& ds,
                    const Datatype& dtype, const void* local, std::size_t n, uint64_t frame, const char* what) {
  mpi::agree(comm, [&] {
    if (n != local_size)
      throw SelectionError(std::string(what) + " of dataset '" + ds.path() + "': " + std::to_string(n) +
                           " elements given for a decomposition that holds " + std::to_string(local_size) + " here");
    if (!local && local_size)
      throw UsageError(std::string(what) + " of dataset '" + ds.path() + "': null data for " +
                       std::to_string(local_size) + " elements");
    if (dtype.in_memory() != ds.dtype().in_memory())
      throw DatatypeError(std::string(what) + " of dataset '" + ds.path() + "' of type " + ds.dtype().name() +
                          " with data of type " + dtype.name());
    in_dataset(ds, shape.size(), Dims(shape.size(), 0), Dims(shape.size(), 1), frame);
  });
}

}  // namespace

void Rearrangement::write_raw(Dataset& ds, Datatype dtype, const void* local, std::size_t n, uint64_t frame) {
  const Plan& p = *plan_;
  const std::size_t es = datatype_size(dtype);
  check_transfer(p.comm, p.shape, p.local_size, ds, dtype, local, n, frame, "write");
  std::vector<unsigned char> send(p.send_index.size() * es), recv(p.received.size() * es);
  const auto* in = static_cast<const unsigned char*>(local);
  for (std::size_t j = 0; j < p.send_index.size(); ++j) std::memcpy(&send[j * es], in + p.send_index[j] * es, es);
  exchange(p.comm, send.data(), p.send_counts, p.send_displs, recv.data(), p.recv_counts, p.recv_displs, es);
  if (!p.io_task) return;
  const auto boxes = io_boxes();
  if (p.kind == Rearranger::Box) {
    if (boxes.empty()) return;
    // The whole slab: the elements no rank holds (the holes) as the fill value.
    const uint64_t slab_n = (p.end_row - p.first_row) * p.row_elements;
    std::vector<unsigned char> slab(slab_n * es);
    const std::vector<unsigned char> fill = ds.fill_value();
    for (uint64_t i = 0; i < slab_n; ++i)
      if (fill.size() == es) std::memcpy(&slab[i * es], fill.data(), es);
    const int64_t first = int64_t(p.first_row * p.row_elements);
    for (std::size_t j = 0; j < p.received.size(); ++j)
      std::memcpy(&slab[std::size_t(p.received[j] - first) * es], &recv[j * es], es);
    ds.write_raw(in_dataset(ds, p.shape.size(), boxes[0].first, boxes[0].second, frame), dtype, slab.data(), slab_n,
                 true);
    return;
  }
  // Subset: the elements in offset order (sorted once, in the plan), written run by run.
  std::vector<unsigned char> values(p.received.size() * es);
  for (std::size_t j = 0; j < p.sorted_order.size(); ++j)
    std::memcpy(&values[j * es], &recv[p.sorted_order[j] * es], es);
  for (std::size_t r = 0; r < p.runs.size(); ++r)
    ds.write_raw(in_dataset(ds, p.shape.size(), boxes[r].first, boxes[r].second, frame), dtype,
                 &values[p.runs[r].at * es], p.runs[r].length, true);
}

void Rearrangement::read_raw(Dataset& ds, Datatype dtype, void* local, std::size_t n, uint64_t frame) {
  const Plan& p = *plan_;
  const std::size_t es = datatype_size(dtype);
  check_transfer(p.comm, p.shape, p.local_size, ds, dtype, local, n, frame, "read");
  // Every rank reads once (reads are collective): an I/O task the slab that
  // holds its elements (subset: from the first one's row to the last one's), the others nothing.
  uint64_t first_row = p.first_row, end_row = p.end_row;
  if (p.kind == Rearranger::Subset) {
    first_row = p.sorted.empty() ? 0 : uint64_t(p.sorted.front()) / p.row_elements;
    end_row = p.sorted.empty() ? 0 : uint64_t(p.sorted.back()) / p.row_elements + 1;
  }
  const uint64_t slab_n = p.io_task ? (end_row - first_row) * p.row_elements : 0;
  std::vector<unsigned char> slab(slab_n * es);
  if (slab_n) {
    Dims start(p.shape.size(), 0), count = p.shape;
    start[0] = first_row, count[0] = end_row - first_row;
    ds.read_raw(in_dataset(ds, p.shape.size(), start, count, frame), dtype, slab.data(), slab_n);
  } else {
    ds.read_raw(Selection::none(), dtype, slab.data(), 0);
  }
  std::vector<unsigned char> back(p.received.size() * es), mine(p.send_index.size() * es);
  const int64_t first = int64_t(first_row * p.row_elements);
  for (std::size_t j = 0; j < p.received.size(); ++j)
    std::memcpy(&back[j * es], &slab[std::size_t(p.received[j] - first) * es], es);
  exchange(p.comm, back.data(), p.recv_counts, p.recv_displs, mine.data(), p.send_counts, p.send_displs, es);
  auto* out = static_cast<unsigned char*>(local);
  const std::vector<unsigned char> fill = ds.fill_value();
  for (std::size_t i = 0; i < p.local_size; ++i)  // holes: the fill value (zero if none)
    if (fill.size() == es) std::memcpy(out + i * es, fill.data(), es);
    else std::memset(out + i * es, 0, es);
  for (std::size_t j = 0; j < p.send_index.size(); ++j) std::memcpy(out + p.send_index[j] * es, &mine[j * es], es);
}

}  // namespace h5loom::pio
