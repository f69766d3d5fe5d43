// The application I/O kernels of `h5loom bench`: the write and read patterns of
// QMCPACK, VPIC, HACC, AMReX and E3SM, each run through any engine beside POSIX
// and each checking every value it reads. docs/benchmarks.md.
#include <algorithm>
#include <cstring>
#include <isa-l/crc64.h>
#include <numeric>

#include "bench_kernel.hpp"
#include "h5loom/pio.hpp"

namespace h5loom::bench {

namespace {

int my_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int n_ranks() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// The exclusive prefix sum of `mine` over the ranks, and the total.
std::pair<uint64_t, uint64_t> offset_and_total(uint64_t mine) {
  uint64_t off = 0, total = 0;
  MPI_Exscan(&mine, &off, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (my_rank() == 0) off = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return {off, total};
}

// An even split of n items over the ranks: [begin, end) of this rank.
std::pair<uint64_t, uint64_t> my_share(uint64_t n) {
  uint64_t r = uint64_t(my_rank()), p = uint64_t(n_ranks());
  return {n * r / p, n * (r + 1) / p};
}

template <class T>
uint64_t count_wrong(const std::vector<T>& got, const std::function<T(uint64_t)>& want, uint64_t first = 0) {
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < got.size(); ++i) wrong += got[i] != want(first + i);
  return wrong;
}

}  // namespace

// ---- QMCPACK: a restart file, walkers written one at a time ----------------------

int run_qmcpack(const KernelOptions& o) {
  const uint64_t W = o.walkers, P = o.walker_particles, S = o.state_size, N = uint64_t(n_ranks());
  const uint64_t first = uint64_t(my_rank()) * W, walker_bytes = P * 3 * sizeof(double);
  auto value = [](uint64_t w, uint64_t p, uint64_t d) { return double(w) + double(p) * 1e-3 + double(d) * 1e-6; };
  KernelSpec k;
  k.name = "qmcpack";
  k.description = std::to_string(W) + " walkers per rank of " + std::to_string(P) + " particles (" +
                  std::to_string(walker_bytes) + " B), written one at a time";
  k.bytes_per_rank = W * walker_bytes + W * sizeof(double) + S * sizeof(uint64_t);
  k.posix_piece = walker_bytes;
  k.posix_description = "pwrite walker by walker";
  // The walkers live in memory, as in QMCPACK; they are made before the clock
  // starts (the POSIX baseline does not compute its bytes either).
  std::vector<double> all_walkers(W * P * 3);
  for (uint64_t w = 0; w < W; ++w)
    for (uint64_t p = 0; p < P; ++p)
      for (uint64_t d = 0; d < 3; ++d) all_walkers[(w * P + p) * 3 + d] = value(first + w, p, d);
  k.write = [&](File& f, StepClock&) {
    auto walkers = f.create_dataset<double>("state_0/walkers", {W * N, P, 3});
    auto wts = f.create_dataset<double>("state_0/walker_weights", {W * N});
    auto part = f.create_dataset<int64_t>("state_0/walker_partition", {N + 1});
    auto rng = f.create_dataset<uint64_t>("state_0/random", {N, S});
    std::vector<double> weights(W);
    for (uint64_t w = 0; w < W; ++w) {  // one walker at a time, from the walker array
      walkers.write_copy(Selection::box({first + w, 0, 0}, {1, P, 3}), all_walkers.data() + w * P * 3, P * 3);
      weights[w] = 1.0 / double(first + w + 1);
    }
    wts.write_copy(Selection::box({first}, {W}), weights);
    std::vector<int64_t> offsets(N + 1);
    for (uint64_t r = 0; r <= N; ++r) offsets[r] = int64_t(r * W);
    part.write_copy(my_rank() == 0 ? Selection::all() : Selection::none(),
                    my_rank() == 0 ? offsets : std::vector<int64_t>{});
    std::vector<uint64_t> state(S);
    for (uint64_t i = 0; i < S; ++i) state[i] = uint64_t(my_rank()) * 1000003 + i;
    rng.write_copy(Selection::box({uint64_t(my_rank()), 0}, {1, S}), state);
  };
  k.read = [&](File& f) {
    uint64_t wrong = 0;
    std::vector<double> back(W * P * 3);
    f.dataset("state_0/walkers").read(Selection::box({first, 0, 0}, {W, P, 3}), back.data(), back.size());
    for (uint64_t w = 0; w < W; ++w)
      for (uint64_t p = 0; p < P; ++p)
        for (uint64_t d = 0; d < 3; ++d) wrong += back[(w * P + p) * 3 + d] != value(first + w, p, d);
    auto wts = f.dataset("state_0/walker_weights").read<double>(Selection::box({first}, {W}));
    for (uint64_t w = 0; w < W; ++w) wrong += wts[w] != 1.0 / double(first + w + 1);
    auto part = f.dataset("state_0/walker_partition").read<int64_t>();
    for (uint64_t i = 0; i <= N; ++i) wrong += part[i] != int64_t(i * W);
    std::vector<uint64_t> state(S);
    f.dataset("state_0/random").read(Selection::box({uint64_t(my_rank()), 0}, {1, S}), state.data(), S);
    for (uint64_t i = 0; i < S; ++i) wrong += state[i] != uint64_t(my_rank()) * 1000003 + i;
    return wrong;
  };
  return run_kernel(o, o.repeat, k);
}

// ---- VPIC-IO: 8 particle arrays per time step; BD-CATS-style read back ------------

int run_vpic(const KernelOptions& o) {
  const uint64_t n = o.particles, steps = o.steps, N = uint64_t(n_ranks()), first = uint64_t(my_rank()) * n;
  const char* names[8] = {"x", "y", "z", "px", "py", "pz", "id1", "id2"};
  auto fval = [](uint64_t step, int var, uint64_t i) { return float(double(i % 1000003) * 1e-3 + var + step * 10); };
  KernelSpec k;
  k.name = "vpic";
  k.description = std::to_string(n) + " particles per rank x " + std::to_string(steps) +
                  " steps, 8 arrays (32 B per particle); read back in full and partly (x, y, z of the last step)";
  k.bytes_per_rank = n * 32 * steps;
  k.posix_piece = n * 4;
  k.posix_description = "one pwrite per array and step";
  // --lend: the arrays are lent (write(span)), not copied (kLentStepSets).
  const std::size_t sets = o.lend ? kLentStepSets : 1;
  std::vector<std::vector<float>> floats(sets * 8, std::vector<float>(n));
  std::vector<std::vector<int32_t>> ids(sets, std::vector<int32_t>(n));
  k.write = [&](File& f, StepClock& clock) {
    for (uint64_t s = 0; s < steps; ++s) {
      std::string g = "Step#" + std::to_string(s) + "/";
      const std::size_t set = s % sets;
      // The simulation's step makes all eight arrays and ends together on
      // every rank (as a step's collective, e.g. the time step's reduction,
      // ends it); then its dump writes them. Values made between two I/O
      // calls, or ranks arriving apart, would charge one rank's arithmetic
      // to the others' I/O calls where ranks share cores.
      clock.untimed([&] {
        for (int v = 0; v < 8; ++v)
          if (v == 6)
            for (uint64_t i = 0; i < n; ++i) ids[set][i] = int32_t((first + i) % 2147483647);
          else
            for (uint64_t i = 0; i < n; ++i) floats[set * 8 + std::size_t(v)][i] = fval(s, v, first + i);
        MPI_Barrier(MPI_COMM_WORLD);
      });
      for (int v = 0; v < 8; ++v) {
        auto sel = Selection::box({first}, {n});
        if (v == 6) {
          auto ds = f.create_dataset<int32_t>(g + names[v], {n * N});
          std::vector<int32_t>& buf = ids[set];
          o.lend ? ds.write(sel, buf.data(), n) : ds.write_copy(sel, buf);
        } else {
          auto ds = f.create_dataset<float>(g + names[v], {n * N});
          std::vector<float>& buf = floats[set * 8 + std::size_t(v)];
          o.lend ? ds.write(sel, buf.data(), n) : ds.write_copy(sel, buf);
        }
      }
      clock.end_step(f);  // a time step ends: its flush point, then the compute phase
    }
  };
  k.read = [&](File& f) {
    uint64_t wrong = 0;
    auto [b, e] = my_share(n * N);  // BD-CATS: every reader its even share, whatever the writers were
    for (uint64_t s = 0; s < steps; ++s)
      for (int v = 0; v < 8; ++v) {
        std::string p = "Step#" + std::to_string(s) + "/" + names[v];
        if (v == 6) {
          auto got = f.dataset(p).read<int32_t>(Selection::box({b}, {e - b}));
          for (uint64_t i = 0; i < got.size(); ++i) wrong += got[i] != int32_t((b + i) % 2147483647);
        } else {
          auto got = f.dataset(p).read<float>(Selection::box({b}, {e - b}));
          for (uint64_t i = 0; i < got.size(); ++i) wrong += got[i] != fval(s, v, b + i);
        }
      }
    // Partial: the positions of the last step, every 8th particle of this rank's share.
    for (int v = 0; v < 3; ++v) {
      std::string p = "Step#" + std::to_string(steps - 1) + "/" + names[v];
      uint64_t count = (e - b + 7) / 8;
      auto got = f.dataset(p).read<float>(Selection::hyperslab({b}, {count}, {8}));
      for (uint64_t i = 0; i < count; ++i) wrong += got[i] != fval(steps - 1, v, b + 8 * i);
    }
    return wrong;
  };
  return run_kernel(o, o.repeat, k);
}

// ---- HACC GenericIO: 9 variables, ±1 % counts, a CRC-64 per variable and rank ----

int run_hacc(const KernelOptions& o) {
  const int rank = my_rank();
  // ±1 %: a fixed pseudo-random count per rank.
  const uint64_t n = o.particles + (uint64_t(rank) * 2654435761u % (o.particles / 50 + 1)) - o.particles / 100;
  auto [first, total] = offset_and_total(n);
  const uint64_t N = uint64_t(n_ranks());
  const char* fnames[7] = {"x", "y", "z", "vx", "vy", "vz", "phi"};
  auto fv = [](int v, uint64_t i) { return float(double(i % 999983) * 0.5 + v); };
  auto crc = [](const void* p, std::size_t bytes) { return crc64_ecma_refl(0, static_cast<const uint8_t*>(p), bytes); };
  constexpr uint64_t kRecord = 7 * 4 + 8 + 2;  // 38 B per particle
  // The interleaved layout is a packed compound record per particle (h5py
  // reads it as a structured array with these field names).
  std::vector<Member> members;
  for (int v = 0; v < 7; ++v) members.push_back({fnames[v], std::size_t(4 * v), Datatype::Float32});
  members.push_back({"id", 28, Datatype::Int64});
  members.push_back({"mask", 36, Datatype::UInt16});
  const Datatype record = Datatype::compound(members, kRecord);
  KernelSpec k;
  k.name = "hacc";
  k.description = "about " + std::to_string(o.particles) +
                  " particles per rank (±1 %), 9 variables (38 B each) with a CRC-64 per variable and rank; "
                  "stored one dataset per variable and once interleaved";
  k.bytes_per_rank = 2 * n * kRecord;
  k.posix_piece = n * 4;
  k.posix_description = "one pwrite per variable, twice";
  // The rank's particles as arrays (the per-variable layout) and as records (the interleaved one).
  auto fill = [&](std::vector<std::vector<float>>& fl, std::vector<int64_t>& id, std::vector<uint16_t>& mask) {
    fl.assign(7, std::vector<float>(n));
    for (int v = 0; v < 7; ++v)
      for (uint64_t i = 0; i < n; ++i) fl[v][i] = fv(v, first + i);
    id.resize(n), mask.resize(n);
    for (uint64_t i = 0; i < n; ++i) id[i] = int64_t(first + i) * 7, mask[i] = uint16_t((first + i) % 65521);
  };
  k.write = [&](File& f, StepClock&) {
    std::vector<std::vector<float>> fl;
    std::vector<int64_t> id;
    std::vector<uint16_t> mask;
    fill(fl, id, mask);
    auto sel = Selection::box({first}, {n});
    std::vector<uint64_t> crcs(10);
    for (int v = 0; v < 7; ++v) {
      f.create_dataset<float>(std::string("vars/") + fnames[v], {total}).write(sel, fl[v]);
      crcs[v] = crc(fl[v].data(), n * 4);
    }
    f.create_dataset<int64_t>("vars/id", {total}).write(sel, id);
    f.create_dataset<uint16_t>("vars/mask", {total}).write(sel, mask);
    crcs[7] = crc(id.data(), n * 8), crcs[8] = crc(mask.data(), n * 2);
    // Interleaved: one record of 38 bytes per particle.
    std::vector<uint8_t> rec(n * kRecord);
    for (uint64_t i = 0; i < n; ++i) {
      uint8_t* r = &rec[i * kRecord];
      for (int v = 0; v < 7; ++v) std::memcpy(r + 4 * v, &fl[v][i], 4);
      std::memcpy(r + 28, &id[i], 8);
      std::memcpy(r + 36, &mask[i], 2);
    }
    crcs[9] = crc(rec.data(), rec.size());
    DatasetSpec spec;
    spec.dtype = record;
    spec.shape = {total};
    f.create_dataset("interleaved/records", spec).write_raw(Selection::box({first}, {n}), record, rec.data(), n, false);
    // Beside the data: each rank's count, offset and CRCs.
    auto meta = f.create_dataset<uint64_t>("crc64", {N, 12});
    std::vector<uint64_t> row{n, first};
    row.insert(row.end(), crcs.begin(), crcs.end());
    meta.write_copy(Selection::box({uint64_t(rank), 0}, {1, 12}), row);
    f.flush();  // the buffers above are local to this call
  };
  k.read = [&](File& f) {
    uint64_t wrong = 0;
    std::vector<uint64_t> row(12);
    f.dataset("crc64").read(Selection::box({uint64_t(rank), 0}, {1, 12}), row.data(), 12);
    wrong += row[0] != n || row[1] != first;
    auto sel = Selection::box({first}, {n});
    for (int v = 0; v < 7; ++v) {
      auto got = f.dataset(std::string("vars/") + fnames[v]).read<float>(sel);
      wrong += crc(got.data(), n * 4) != row[2 + v];  // the GenericIO check
      for (uint64_t i = 0; i < n; ++i) wrong += got[i] != fv(v, first + i);
    }
    auto id = f.dataset("vars/id").read<int64_t>(sel);
    auto mask = f.dataset("vars/mask").read<uint16_t>(sel);
    wrong += crc(id.data(), n * 8) != row[9];
    wrong += crc(mask.data(), n * 2) != row[10];
    for (uint64_t i = 0; i < n; ++i) wrong += id[i] != int64_t(first + i) * 7 || mask[i] != uint16_t((first + i) % 65521);
    std::vector<uint8_t> rec(n * kRecord);
    f.dataset("interleaved/records").read_raw(Selection::box({first}, {n}), record, rec.data(), n);
    wrong += crc(rec.data(), rec.size()) != row[11];
    return wrong;
  };
  return run_kernel(o, o.repeat, k);
}

// ---- AMReX: a plotfile level, boxes of max_grid_size, ncomp components -------------

int run_amrex(const KernelOptions& o) {
  const uint64_t L = o.cells, G = std::min(o.max_grid_size, o.cells), C = o.components;
  // Boxes in z, y, x order; box b goes to rank b % nranks (AMReX's round-robin map).
  struct Box { uint64_t lo[3], hi[3], offset; };
  std::vector<Box> boxes;
  uint64_t offset = 0;
  for (uint64_t z = 0; z < L; z += G)
    for (uint64_t y = 0; y < L; y += G)
      for (uint64_t x = 0; x < L; x += G) {
        Box b{{z, y, x}, {std::min(L, z + G), std::min(L, y + G), std::min(L, x + G)}, offset};
        offset += (b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]) * (b.hi[2] - b.lo[2]) * C;
        boxes.push_back(b);
      }
  const uint64_t N = uint64_t(n_ranks()), me = uint64_t(my_rank());
  auto cell = [&](uint64_t comp, uint64_t z, uint64_t y, uint64_t x) {
    return double(comp) * 1e7 + double(z) * 1e4 + double(y) * 1e2 + double(x) * 1e-2;
  };
  auto box_cells = [](const Box& b) { return (b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]) * (b.hi[2] - b.lo[2]); };
  uint64_t mine = 0;
  for (uint64_t i = me; i < boxes.size(); i += N) mine += box_cells(boxes[i]) * C * 8;
  KernelSpec k;
  k.name = "amrex";
  k.description = std::to_string(L) + "^3 cells in " + std::to_string(boxes.size()) + " boxes of up to " +
                  std::to_string(G) + "^3, " + std::to_string(C) + " components, boxes round-robin over ranks";
  k.bytes_per_rank = mine;
  k.posix_piece = G * G * G * 8;
  k.posix_description = "one pwrite per box and component";
  auto fill_box = [&](const Box& b, std::vector<double>& v) {  // component-major, then z, y, x (AMReX's FAB order)
    v.resize(box_cells(b) * C);
    uint64_t i = 0;
    for (uint64_t c = 0; c < C; ++c)
      for (uint64_t z = b.lo[0]; z < b.hi[0]; ++z)
        for (uint64_t y = b.lo[1]; y < b.hi[1]; ++y)
          for (uint64_t x = b.lo[2]; x < b.hi[2]; ++x) v[i++] = cell(c, z, y, x);
  };
  k.write = [&](File& f, StepClock& clock) {
    f.set_attribute("num_levels", int32_t(1));
    f.set_attribute("num_components", int32_t(C));
    auto data = f.create_dataset<double>("level_0/data:datatype=0", {offset});
    auto bx = f.create_dataset<int32_t>("level_0/boxes", {boxes.size(), 6});
    auto offs = f.create_dataset<int64_t>("level_0/data:offsets=0", {boxes.size() + 1});
    if (me == 0) {
      std::vector<int32_t> b6;
      std::vector<int64_t> o1;
      for (const auto& b : boxes) {
        for (int d = 0; d < 3; ++d) b6.push_back(int32_t(b.lo[d]));
        for (int d = 0; d < 3; ++d) b6.push_back(int32_t(b.hi[d] - 1));
        o1.push_back(int64_t(b.offset));
      }
      o1.push_back(int64_t(offset));
      bx.write_copy(Selection::all(), b6);
      offs.write_copy(Selection::all(), o1);
    }
    std::vector<double> v;
    for (uint64_t i = me; i < boxes.size(); i += N) {
      clock.untimed([&] { fill_box(boxes[i], v); });
      data.write_copy(Selection::box({boxes[i].offset}, {v.size()}), v);
    }
    // The plotfile's one step: its close returns at once (File::close_async),
    // and the compute phase runs before the close completes.
    clock.end_file(f);
  };
  k.read = [&](File& f) {
    uint64_t wrong = 0;
    auto offs = f.dataset("level_0/data:offsets=0").read<int64_t>();
    auto data = f.dataset("level_0/data:datatype=0");
    std::vector<double> want, got;
    // Each rank reads back its own boxes; reads are collective, so a rank with
    // fewer boxes takes part with empty selections.
    const uint64_t rounds = (boxes.size() + N - 1) / N;
    for (uint64_t round = 0; round < rounds; ++round) {
      uint64_t i = round * N + me;
      if (i >= boxes.size()) {
        data.read(Selection::none(), got.data(), 0);
        continue;
      }
      wrong += uint64_t(offs[i]) != boxes[i].offset;
      fill_box(boxes[i], want);
      got.resize(want.size());
      data.read(Selection::box({uint64_t(offs[i])}, {want.size()}), got.data(), got.size());
      for (uint64_t j = 0; j < want.size(); ++j) wrong += got[j] != want[j];
    }
    return wrong;
  };
  return run_kernel(o, o.repeat, k);
}

// ---- E3SM: writes driven by PIO decomposition maps ------------------------------

int run_e3sm(const KernelOptions& o) {
  if (o.map.empty()) throw ConfigError("bench e3sm needs --map FILE (e.g. bench/e3sm/f_case_866x72_16p.dat)");
  // PIO's map file (src/pio): its tasks dealt to the ranks, task t to rank t % ranks; an error on every rank.
  const auto decomposition = pio::Decomposition::from_file(MPI_COMM_WORLD, o.map);
  const Dims& dims = decomposition.global_shape();
  const uint64_t V = o.variables;
  // Each rank writes its elements as runs of consecutive offsets along the last dimension.
  struct Run { uint64_t start, length; };
  std::vector<Run> runs;
  std::vector<uint64_t> mine;
  for (int64_t x : decomposition.map())
    if (x >= 0) mine.push_back(uint64_t(x));
  std::sort(mine.begin(), mine.end());
  const uint64_t row = dims.back();
  for (uint64_t x : mine) {
    if (!runs.empty() && runs.back().start + runs.back().length == x && x % row != 0) ++runs.back().length;
    else runs.push_back({x, 1});
  }
  auto value = [](uint64_t var, uint64_t x) { return double(var) * 1e8 + double(x); };
  auto box_of = [&](const Run& r) {  // the run as a box of the N-D array
    Dims start(dims.size()), count(dims.size(), 1);
    uint64_t rem = r.start;
    for (std::size_t d = dims.size(); d-- > 0;) start[d] = rem % dims[d], rem /= dims[d];
    count.back() = r.length;
    return Selection::box(start, count);
  };
  KernelSpec k;
  k.name = "e3sm";
  k.description = "map " + o.map + " (" + dims_to_string(dims) + "), " +
                  std::to_string(V) + " variables, " + std::to_string(runs.size()) + " runs per variable here";
  k.bytes_per_rank = V * mine.size() * sizeof(double);
  k.posix_piece = std::max<uint64_t>(8, mine.empty() ? 8 : mine.size() * 8 / std::max<std::size_t>(1, runs.size()));
  k.posix_description = "pwrites of the average run length";
  k.write = [&](File& f, StepClock&) {
    std::vector<double> buf;
    for (uint64_t v = 0; v < V; ++v) {
      auto ds = f.create_dataset<double>("var" + std::to_string(v), dims);
      for (const auto& r : runs) {
        buf.resize(r.length);
        for (uint64_t i = 0; i < r.length; ++i) buf[i] = value(v, r.start + i);
        ds.write_copy(box_of(r), buf);
      }
    }
  };
  k.read = [&](File& f) {
    uint64_t wrong = 0;
    std::vector<double> got;
    // Each rank reads back its decomposition, run by run; reads are collective,
    // so ranks with fewer runs take part with empty selections.
    uint64_t my_runs = runs.size(), most = 0;
    MPI_Allreduce(&my_runs, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    for (uint64_t v = 0; v < V; ++v) {
      auto ds = f.dataset("var" + std::to_string(v));
      for (uint64_t j = 0; j < most; ++j) {
        if (j >= runs.size()) {
          ds.read(Selection::none(), got.data(), 0);
          continue;
        }
        const Run& r = runs[j];
        got.resize(r.length);
        ds.read(box_of(r), got.data(), got.size());
        for (uint64_t i = 0; i < r.length; ++i) wrong += got[i] != value(v, r.start + i);
      }
    }
    return wrong;
  };
  return run_kernel(o, o.repeat, k);
}

}  // namespace h5loom::bench
