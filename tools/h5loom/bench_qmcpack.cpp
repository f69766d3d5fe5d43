// `h5loom bench qmcpack`: the I/O of a QMCPACK restart file. Every rank owns a
// block of walkers and writes them one walker at a time (a small hyperslab
// each: the pattern that makes collective HDF5 slow), plus the walker weights,
// the walker partition and its random-number state; then the file is read back
// and checked. Beside it: plain POSIX pwrite of the same walkers one at a time.
#include <cstdio>
#include <h5loom/h5loom.hpp>
#include <map>

#include "bench.hpp"

namespace h5loom::bench {

namespace {

double walker_value(uint64_t walker, uint64_t particle, uint64_t dim) {
  return double(walker) + double(particle) * 1e-3 + double(dim) * 1e-6;
}

struct KernelTimes {
  double write_s = 1e300, read_s = 1e300;
  uint64_t wrong = 0;
};

}  // namespace

int run_qmcpack(const QmcpackOptions& o) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const uint64_t W = o.walkers_per_rank, P = o.particles, S = o.state_size, N = uint64_t(nranks);
  const uint64_t first = uint64_t(rank) * W, walker_bytes = P * 3 * sizeof(double);
  const uint64_t bytes_per_rank = W * walker_bytes + W * sizeof(double) + S * sizeof(uint64_t);
  const std::string path = o.dir + "/qmcpack.h5";
  if (rank == 0)
    std::printf("qmcpack: %d ranks x %llu walkers of %llu particles (%llu B each, written one at a time), "
                "%.1f MiB per rank, best of %d\n",
                nranks, (unsigned long long)W, (unsigned long long)P, (unsigned long long)walker_bytes,
                bytes_per_rank / 1048576.0, o.repeat);

  PosixResult posix{1e300, 1e300};
  for (int rep = 0; rep < o.repeat; ++rep) {
    auto p = posix_limit(comm, path + ".posix", W * walker_bytes, walker_bytes, o.posix_sync, /*interleaved=*/false);
    posix.write_s = std::min(posix.write_s, p.write_s), posix.read_s = std::min(posix.read_s, p.read_s);
  }

  std::vector<double> walker(P * 3), weights(W), back(W * P * 3);
  std::vector<uint64_t> state(S), state_back(S);
  for (uint64_t i = 0; i < S; ++i) state[i] = uint64_t(rank) * 1000003 + i;
  for (uint64_t w = 0; w < W; ++w) weights[w] = 1.0 / double(first + w + 1);

  std::FILE* csv = nullptr;
  const std::string csv_path = o.csv.empty() ? o.dir + "/qmcpack.csv" : o.csv;
  if (rank == 0) {
    csv = std::fopen(csv_path.c_str(), "w");
    if (!csv) throw IOError("cannot write CSV file '" + csv_path + "'");
    std::fprintf(csv, "kernel,engine,ranks,walkers-per-rank,particles,bytes,write [s],read [s],posix-write [s],"
                      "posix-read [s],write-ratio,read-ratio,verified\n");
    std::printf("plain POSIX, walker by walker: write %.1f MiB/s, read %.1f MiB/s\n\n",
                W * walker_bytes * N / 1048576.0 / posix.write_s, W * walker_bytes * N / 1048576.0 / posix.read_s);
    std::printf("%-40s %12s %12s %10s %10s\n", "engine", "write MiB/s", "read MiB/s", "w/POSIX", "r/POSIX");
  }
  int exit_code = 0;
  std::map<std::string, double> write_time;
  for (const auto& engine : o.engines) {
    KernelTimes best;
    FileOptions fo;
    fo.engine = engine;
    fo.comm = comm;
    for (int rep = 0; rep < o.repeat; ++rep) {
      if (rank == 0) remove_engine_files(engine, path);
      MPI_Barrier(comm);
      double w = timed(comm, [&] {
        auto f = File::create(path, fo);
        auto walkers = f.create_dataset<double>("state_0/walkers", {W * N, P, 3});
        auto wts = f.create_dataset<double>("state_0/walker_weights", {W * N});
        auto part = f.create_dataset<int64_t>("state_0/walker_partition", {N + 1});
        auto rng = f.create_dataset<uint64_t>("state_0/random", {N, S});
        for (uint64_t wk = 0; wk < W; ++wk) {  // one walker at a time, the buffer reused
          for (uint64_t p = 0; p < P; ++p)
            for (uint64_t d = 0; d < 3; ++d) walker[p * 3 + d] = walker_value(first + wk, p, d);
          walkers.write_copy(Selection::box({first + wk, 0, 0}, {1, P, 3}), walker);
        }
        wts.write(Selection::box({first}, {W}), weights);
        std::vector<int64_t> offsets(N + 1);
        for (uint64_t r = 0; r <= N; ++r) offsets[r] = int64_t(r * W);
        part.write(rank == 0 ? Selection::all() : Selection::none(), rank == 0 ? offsets : std::vector<int64_t>{});
        rng.write(Selection::box({uint64_t(rank), 0}, {1, S}), state);
        f.close();
      });
      uint64_t wrong = 0;
      double r = timed(comm, [&] {
        auto f = File::open(path, Mode::Read, fo);
        f.dataset("state_0/walkers").read(Selection::box({first, 0, 0}, {W, P, 3}), back.data(), back.size());
        auto wts = f.dataset("state_0/walker_weights").read<double>(Selection::box({first}, {W}));
        auto part = f.dataset("state_0/walker_partition").read<int64_t>();
        f.dataset("state_0/random").read(Selection::box({uint64_t(rank), 0}, {1, S}), state_back.data(), S);
        f.close();
        for (uint64_t wk = 0; wk < W; ++wk)
          for (uint64_t p = 0; p < P; ++p)
            for (uint64_t d = 0; d < 3; ++d) wrong += back[(wk * P + p) * 3 + d] != walker_value(first + wk, p, d);
        for (uint64_t wk = 0; wk < W; ++wk) wrong += wts[wk] != weights[wk];
        for (uint64_t i = 0; i <= N; ++i) wrong += part[i] != int64_t(i * W);
        wrong += state_back != state;
      });
      MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_UINT64_T, MPI_SUM, comm);
      best.write_s = std::min(best.write_s, w), best.read_s = std::min(best.read_s, r);
      best.wrong += wrong;
    }
    write_time[engine_label(engine)] = best.write_s;
    if (rank == 0) {
      const double mib = bytes_per_rank * N / 1048576.0;
      std::printf("%-40s %12.1f %12.1f %10.2f %10.2f%s\n", engine_label(engine).c_str(), mib / best.write_s,
                  mib / best.read_s, posix.write_s / best.write_s, posix.read_s / best.read_s,
                  best.wrong ? "  WRONG VALUES READ BACK" : "");
      std::fprintf(csv, "qmcpack,%s,%d,%llu,%llu,%llu,%.6f,%.6f,%.6f,%.6f,%.4f,%.4f,%s\n",
                   csv_field(engine_label(engine)).c_str(), nranks, (unsigned long long)W, (unsigned long long)P,
                   (unsigned long long)(bytes_per_rank * N), best.write_s, best.read_s, posix.write_s, posix.read_s,
                   posix.write_s / best.write_s, posix.read_s / best.read_s, best.wrong ? "no" : "yes");
    }
    if (best.wrong) exit_code = 4;
    if (rank == 0 && !o.keep_files) remove_engine_files(engine, path);
  }
  if (rank == 0) {
    if (write_time.count("hdf5") && write_time.count("log"))
      std::printf("\nlog engine writes %.1fx faster than the hdf5 engine (both with their defaults)\n",
                  write_time["hdf5"] / write_time["log"]);
    std::printf("CSV: %s\n", csv_path.c_str());
    std::fclose(csv);
  }
  return exit_code;
}

}  // namespace h5loom::bench
