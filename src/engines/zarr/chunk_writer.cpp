#include "engines/zarr/chunk_writer.hpp"

#include <algorithm>
#include <climits>
#include <optional>
#include <tuple>
#include <cstring>

#include "core/mpi_util.hpp"
#include "engines/zarr/chunk_grid.hpp"

namespace h5loom::zarr {

namespace {

// A chunk of a dataset: (dataset number, chunk coordinates).
using ChunkId = std::pair<uint32_t, Dims>;

// Part of one write that falls in one chunk: its runs in the chunk, and where
// its elements are in `data`, a dense buffer of shape `mem`.
struct Piece {
  ChunkId chunk;
  std::vector<ChunkSlice> slices;
  Dims mem;
  const unsigned char* data = nullptr;
  int from = 0;        // the rank that wrote it
  uint64_t order = 0;  // its place among that rank's writes
  uint64_t elements = 0;

  ChunkPart part() const {
    ChunkPart p;
    for (const ChunkSlice& s : slices) p.push_back(&s);
    return p;
  }
};

const ArrayMeta& array_of(const ZarrFile& f, uint32_t ds) { return f.nodes.at(f.dataset_paths.at(ds)).array; }

// This rank's pending writes, cut at chunk boundaries.
std::vector<Piece> cut_into_pieces(const ZarrFile& f) {
  std::vector<Piece> out;
  for (std::size_t i = 0; i < f.pending.size(); ++i) {
    const engine::Write& w = f.pending[i];
    if (w.elements == 0) continue;
    const uint32_t ds = f.dataset_ids.at(w.dataset);
    const ArrayMeta& a = array_of(f, ds);
    const auto slices = slice_by_chunks(w.selection, a.shape, a.chunk_shape);
    const Dims mem = w.selection.selected_shape(a.shape);
    for_each_chunk(slices, [&](const ChunkPart& part) {
      Piece p;
      p.chunk.first = ds;
      p.elements = 1;
      for (const ChunkSlice* s : part) {
        p.chunk.second.push_back(s->index);
        p.slices.push_back(*s);
        p.elements *= s->count();
      }
      p.mem = mem;
      p.data = w.data();
      p.from = f.rank;
      p.order = i;
      out.push_back(std::move(p));
    });
  }
  return out;
}

// Collective: the owner of every chunk some rank wrote - the rank that wrote
// the most of its bytes (ties: the lowest rank).
std::map<ChunkId, int> agree_on_owners(const ZarrFile& f, const std::vector<Piece>& pieces) {
  std::map<ChunkId, uint64_t> mine;
  for (const Piece& p : pieces) mine[p.chunk] += p.elements;
  std::vector<uint64_t> words;  // per chunk: dataset, rank of coordinates, coordinates..., elements
  for (const auto& [id, n] : mine) {
    words.push_back(id.first);
    words.push_back(id.second.size());
    words.insert(words.end(), id.second.begin(), id.second.end());
    words.push_back(n);
  }
  uint64_t count = words.size();
  std::vector<uint64_t> counts64(std::size_t(f.size));
  MPI_Allgather(&count, 1, MPI_UINT64_T, counts64.data(), 1, MPI_UINT64_T, f.comm);
  uint64_t sum = 0;
  for (uint64_t c : counts64) sum += c;
  if (sum > uint64_t(INT_MAX))  // every rank sees the same counts: every rank raises
    throw UsageError(f.where() + ": one flush touches too many chunks to agree on their owners (" +
                     std::to_string(sum / 4) + " or so); flush more often");
  std::vector<int> counts(std::size_t(f.size)), displs(std::size_t(f.size));
  int total = 0;
  for (int r = 0; r < f.size; ++r)
    counts[std::size_t(r)] = int(counts64[std::size_t(r)]), displs[std::size_t(r)] = total, total += counts[std::size_t(r)];
  std::vector<uint64_t> all(std::size_t(std::max(total, 1)));
  MPI_Allgatherv(words.data(), int(count), MPI_UINT64_T, all.data(), counts.data(), displs.data(), MPI_UINT64_T,
                 f.comm);
  std::map<ChunkId, std::pair<int, uint64_t>> best;
  for (int r = 0; r < f.size; ++r) {
    const uint64_t* w = all.data() + displs[std::size_t(r)];
    const uint64_t* end = w + counts[std::size_t(r)];
    while (w < end) {
      ChunkId id;
      id.first = uint32_t(*w++);
      const uint64_t rank = *w++;
      id.second.assign(w, w + rank);
      w += rank;
      const uint64_t n = *w++;
      auto it = best.find(id);
      if (it == best.end()) best.emplace(std::move(id), std::make_pair(r, n));
      else if (n > it->second.second) it->second = {r, n};
    }
  }
  std::map<ChunkId, int> owners;
  for (auto& [id, b] : best) owners.emplace(id, b.first);
  return owners;
}

void put_words(std::vector<unsigned char>& out, std::initializer_list<uint64_t> words) {
  for (uint64_t w : words) {
    const auto* p = reinterpret_cast<const unsigned char*>(&w);
    out.insert(out.end(), p, p + sizeof w);
  }
}

// A piece for another rank: its header (numbers), then its elements packed.
void pack(const Piece& p, std::size_t es, const Dims& chunk_shape, std::vector<unsigned char>& out) {
  put_words(out, {p.chunk.first, p.order, p.chunk.second.size()});
  for (uint64_t c : p.chunk.second) put_words(out, {c});
  const ChunkPart part = p.part();
  for (const ChunkSlice& s : packed(part)) {
    put_words(out, {s.runs.size()});
    for (const Run& r : s.runs) put_words(out, {r.at, r.n});
  }
  for_each_row(part, chunk_shape, p.mem, [&](uint64_t, uint64_t mem, uint64_t n) {
    out.insert(out.end(), p.data + mem * es, p.data + (mem + n) * es);
  });
}

// The pieces rank `from` sent, pointing into `bytes`.
void unpack(const ZarrFile& f, const unsigned char* bytes, std::size_t size, int from, std::vector<Piece>& out) {
  std::size_t at = 0;
  auto word = [&] {
    if (at + 8 > size) throw CorruptionError(f.where() + ": a chunk piece from rank " + std::to_string(from) + " is cut short");
    uint64_t w;
    std::memcpy(&w, bytes + at, 8);
    at += 8;
    return w;
  };
  while (at < size) {
    Piece p;
    p.from = from;
    p.chunk.first = uint32_t(word());
    p.order = word();
    const uint64_t rank = word();
    for (uint64_t d = 0; d < rank; ++d) p.chunk.second.push_back(word());
    p.elements = 1;
    for (uint64_t d = 0; d < rank; ++d) {
      ChunkSlice s{p.chunk.second[d], {}};
      const uint64_t runs = word();
      uint64_t mem = 0;
      for (uint64_t i = 0; i < runs; ++i) {
        const uint64_t run_at = word(), n = word();
        s.runs.push_back({run_at, mem, n});
        mem += n;
      }
      p.mem.push_back(mem);
      p.elements *= mem;
      p.slices.push_back(std::move(s));
    }
    p.data = bytes + at;
    at += p.elements * datatype_size(array_of(f, p.chunk.first).dtype);
    out.push_back(std::move(p));
  }
}

// The owner's part: the chunk's new bytes from its pieces (in each rank's
// order, lower ranks first), over its old bytes where they do not cover it.
void write_chunk(ZarrFile& f, const ChunkId& id, std::vector<const Piece*>& pieces, std::vector<unsigned char>& scratch) {
  const std::string& path = f.dataset_paths.at(id.first);
  const ArrayMeta& a = array_of(f, id.first);
  const std::size_t es = datatype_size(a.dtype);
  const uint64_t n = product(a.chunk_shape);
  const std::string key = chunk_key(path, id.second);
  uint64_t inside = 1;  // elements of the chunk inside the dataset
  for (std::size_t d = 0; d < a.shape.size(); ++d)
    inside *= std::min(a.chunk_shape[d], a.shape[d] - std::min(a.shape[d], id.second[d] * a.chunk_shape[d]));
  uint64_t written = 0;
  for (const Piece* p : pieces) written += p->elements;
  // Whether the writes cover every element inside: the union of their rows
  // (a chunk has a few hundred, not one per element), counted if they could.
  bool whole = false;
  if (written >= inside) {
    std::vector<std::pair<uint64_t, uint64_t>> rows;  // (first element, end)
    for (const Piece* p : pieces)
      for_each_row(p->part(), a.chunk_shape, p->mem, [&](uint64_t at, uint64_t, uint64_t k) { rows.emplace_back(at, at + k); });
    std::sort(rows.begin(), rows.end());
    uint64_t covered = 0, end = 0;
    for (const auto& [from, to] : rows) {
      if (to <= end) continue;
      covered += to - std::max(from, end);
      end = to;
    }
    whole = covered == inside;
  }
  // The chunk's bytes, with room for the codecs' trailer (crc32c: 4 bytes).
  std::vector<unsigned char>& chunk = scratch;
  chunk.reserve(n * es + 4);
  chunk.resize(n * es);
  std::optional<std::vector<unsigned char>> old;
  if (!whole) old = f.store->get(key);
  if (old) a.decode_chunk(*old, chunk.data(), "chunk '" + key + "' of " + f.where());
  else if (!(whole && inside == n)) a.fill_elements(chunk.data(), n);
  std::sort(pieces.begin(), pieces.end(),
            [](const Piece* x, const Piece* y) { return std::tie(x->from, x->order) < std::tie(y->from, y->order); });
  for (const Piece* p : pieces)
    for_each_row(p->part(), a.chunk_shape, p->mem, [&](uint64_t at, uint64_t mem, uint64_t k) {
      std::memcpy(chunk.data() + at * es, p->data + mem * es, k * es);
    });
  a.encode_chunk(chunk);
  f.store->put(key, chunk.data(), chunk.size());
}

}  // namespace

void write_pending_chunks(ZarrFile& f, mpi::CaughtError& error) {
  std::vector<Piece> mine;
  error.run([&] { mine = cut_into_pieces(f); });
  const std::map<ChunkId, int> owners = agree_on_owners(f, mine);

  // Every piece of another rank's chunk goes to that rank.
  std::vector<std::vector<unsigned char>> to(std::size_t(f.size));
  error.run([&] {
    for (const Piece& p : mine)
      if (int owner = owners.at(p.chunk); owner != f.rank) {
        const ArrayMeta& a = array_of(f, p.chunk.first);
        pack(p, datatype_size(a.dtype), a.chunk_shape, to[std::size_t(owner)]);
      }
  });
  std::vector<uint64_t> send_sizes(std::size_t(f.size)), recv_sizes(std::size_t(f.size));
  for (int r = 0; r < f.size; ++r) send_sizes[std::size_t(r)] = to[std::size_t(r)].size();
  MPI_Alltoall(send_sizes.data(), 1, MPI_UINT64_T, recv_sizes.data(), 1, MPI_UINT64_T, f.comm);
  uint64_t sent = 0, received = 0;
  for (int r = 0; r < f.size; ++r) sent += send_sizes[std::size_t(r)], received += recv_sizes[std::size_t(r)];
  int too_much = sent > uint64_t(INT_MAX) || received > uint64_t(INT_MAX), any_too_much = 0;
  MPI_Allreduce(&too_much, &any_too_much, 1, MPI_INT, MPI_MAX, f.comm);
  if (any_too_much) {
    f.pending.clear();
    if (error.code == 0)
      error.run([&] {
        throw UsageError(f.where() + ": more than 2 GiB of one rank's writes go to other ranks' chunks in one "
                         "flush; flush more often");
      });
    return;
  }
  // The buffers, agreed on before the exchange: a rank that cannot have them must not leave the others in it.
  std::vector<unsigned char> send, recv;
  int allocated = 1, all_allocated = 0;
  try {
    send.resize(sent), recv.resize(received);
  } catch (const std::bad_alloc&) {
    allocated = 0;
    if (error.code == 0)
      error.run([&] { throw IOError(f.where() + ": no memory for the chunk exchange of this flush"); });
  }
  MPI_Allreduce(&allocated, &all_allocated, 1, MPI_INT, MPI_MIN, f.comm);
  if (!all_allocated) {
    f.pending.clear();
    return;
  }
  std::vector<int> scounts(std::size_t(f.size)), sdispls(std::size_t(f.size)), rcounts(std::size_t(f.size)),
      rdispls(std::size_t(f.size));
  for (int r = 0, s = 0, q = 0; r < f.size; ++r) {
    const auto i = std::size_t(r);
    std::copy(to[i].begin(), to[i].end(), send.begin() + s);
    scounts[i] = int(send_sizes[i]), sdispls[i] = s, s += scounts[i];
    rcounts[i] = int(recv_sizes[i]), rdispls[i] = q, q += rcounts[i];
  }
  to.clear();
  MPI_Alltoallv(send.data(), scounts.data(), sdispls.data(), MPI_BYTE, recv.data(), rcounts.data(), rdispls.data(),
                MPI_BYTE, f.comm);

  // This rank's chunks: its own pieces of them and the ones it received.
  error.run([&] {
    std::vector<Piece> received_pieces;
    for (int r = 0; r < f.size; ++r)
      unpack(f, recv.data() + rdispls[std::size_t(r)], std::size_t(rcounts[std::size_t(r)]), r, received_pieces);
    std::map<ChunkId, std::vector<const Piece*>> chunks;
    for (const Piece& p : mine)
      if (owners.at(p.chunk) == f.rank) chunks[p.chunk].push_back(&p);
    for (const Piece& p : received_pieces) chunks[p.chunk].push_back(&p);
    std::vector<unsigned char> scratch;  // one chunk's bytes, reused: fresh memory costs page faults
    for (auto& [id, pieces] : chunks) write_chunk(f, id, pieces, scratch);
  });
  f.pending.clear();
}

}  // namespace h5loom::zarr
