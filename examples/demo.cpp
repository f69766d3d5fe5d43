// The h5loom demo (`make demo`): every rank writes several steps of a 3-D field
// (its slab of z-planes) plus a per-step energy value into one shared file
// through the default engine, reads everything back and verifies it, and
// measures plain pwrite/pread of the same bytes by the same ranks in the same
// run, so the table shows h5loom as a ratio to what the storage does.
//
//   mpirun -n 4 h5loom_demo [--steps 4] [--mib-per-rank 16] [--dir .] [--engine hdf5] [--repeat 2] [--no-sync]
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <h5loom/engine.hpp>
#include <h5loom/h5loom.hpp>
#include <h5loom/tools.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Args {
  int steps = 4;
  double mib_per_rank = 16;  // per step
  std::string dir = ".";
  std::string engine;
  int repeat = 2;
  bool sync = true;  // flush (fsync) at the end of every step, in both h5loom and plain POSIX
};

constexpr uint64_t NY = 128, NX = 128;  // one z-plane: 128 KiB of float64

// The value at global (step, z, y, x): cheap to recompute when verifying.
inline double value_at(uint64_t step, uint64_t z, uint64_t y, uint64_t x) {
  return double(step) * 1e6 + double(z) * 1e3 + double(y) + double(x) * 1e-3;
}

struct Phase {
  double write_s = 1e30, read_s = 1e30;
};

double now() { return MPI_Wtime(); }

// Bandwidth phases are timed from a barrier to a barrier: the slowest rank counts.
double timed(const std::function<void()>& body) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now();
  body();
  MPI_Barrier(MPI_COMM_WORLD);
  return now() - t0;
}

void fill_slab(std::vector<double>& buf, uint64_t step, uint64_t z0, uint64_t nz) {
  for (uint64_t z = 0; z < nz; ++z)
    for (uint64_t y = 0; y < NY; ++y)
      for (uint64_t x = 0; x < NX; ++x) buf[(z * NY + y) * NX + x] = value_at(step, z0 + z, y, x);
}

uint64_t count_wrong(const std::vector<double>& buf, uint64_t step, uint64_t z0, uint64_t nz) {
  uint64_t wrong = 0;
  for (uint64_t z = 0; z < nz; ++z)
    for (uint64_t y = 0; y < NY; ++y)
      for (uint64_t x = 0; x < NX; ++x) wrong += buf[(z * NY + y) * NX + x] != value_at(step, z0 + z, y, x);
  return wrong;
}

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "h5loom_demo: %s\n", msg.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value after " + k);
      return argv[++i];
    };
    if (k == "--steps") a.steps = std::stoi(next());
    else if (k == "--mib-per-rank") a.mib_per_rank = std::stod(next());
    else if (k == "--dir") a.dir = next();
    else if (k == "--engine") a.engine = next();
    else if (k == "--repeat") a.repeat = std::stoi(next());
    else if (k == "--no-sync") a.sync = false;
    else die("unknown option '" + k + "' (use --steps, --mib-per-rank, --dir, --engine, --repeat, --no-sync)");
  }
  const uint64_t plane = NY * NX;
  const uint64_t nz = std::max<uint64_t>(1, uint64_t(a.mib_per_rank * 1048576.0 / (plane * sizeof(double))));
  const uint64_t slab_bytes = nz * plane * sizeof(double);
  const uint64_t total_bytes = slab_bytes * size * a.steps;
  const uint64_t z0 = nz * rank;
  const std::string h5path = a.dir + "/h5loom_demo.h5", rawpath = a.dir + "/h5loom_demo.raw";

  // One buffer per step, filled before timing starts: the deferred writes keep pointers into them.
  std::vector<std::vector<double>> slabs(a.steps, std::vector<double>(nz * plane));
  for (int s = 0; s < a.steps; ++s) fill_slab(slabs[s], s, z0, nz);
  std::vector<double> readback(nz * plane);
  h5loom::FileOptions opts;
  opts.engine = a.engine;
  std::string engine_name;
  uint64_t wrong = 0;

  Phase raw, loom;
  for (int rep = 0; rep < a.repeat; ++rep) {
    // ---- plain POSIX: each rank pwrites its slab of each step at a fixed offset ----
    if (rank == 0) {
      int fd = ::open(rawpath.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
      if (fd < 0) die("cannot create " + rawpath + ": " + std::strerror(errno));
      ::close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    raw.write_s = std::min(raw.write_s, timed([&] {
      int fd = ::open(rawpath.c_str(), O_WRONLY);
      for (int s = 0; s < a.steps; ++s) {
        off_t off = off_t((uint64_t(s) * size + rank) * slab_bytes);
        if (::pwrite(fd, slabs[s].data(), slab_bytes, off) != ssize_t(slab_bytes)) die("pwrite failed");
        if (a.sync && ::fsync(fd) != 0) die("fsync failed");  // the same durability as h5loom's step flush
      }
      ::close(fd);
    }));
    raw.read_s = std::min(raw.read_s, timed([&] {
      int fd = ::open(rawpath.c_str(), O_RDONLY);
      for (int s = 0; s < a.steps; ++s) {
        off_t off = off_t((uint64_t(s) * size + rank) * slab_bytes);
        if (::pread(fd, readback.data(), slab_bytes, off) != ssize_t(slab_bytes)) die("pread failed");
        wrong += count_wrong(readback, s, z0, nz);
      }
      ::close(fd);
    }));

    // ---- h5loom: one dataset per step, each rank writes its z-slab; a flush ends each step ----
    // Like the raw file, the old file goes before the clock starts (truncating it is not I/O).
    // Every piece of storage the engine that wrote it keeps for this name.
    if (rank == 0 && !h5loom::file_storage(h5path).empty()) h5loom::remove_file(h5path);
    loom.write_s = std::min(loom.write_s, timed([&] {
      auto f = h5loom::File::create(h5path, opts);
      engine_name = f.engine_name();
      f.set_attribute("steps", int32_t(a.steps));
      auto energy = f.create_dataset<double>("energy", {0, uint64_t(size)}, {h5loom::kUnlimited, uint64_t(size)});
      for (int s = 0; s < a.steps; ++s) {
        char name[64];
        std::snprintf(name, sizeof name, "step_%04d/density", s);
        auto rho = f.create_dataset<double>(name, {nz * size, NY, NX});
        rho.set_attribute("time", 0.1 * s);
        rho.write(h5loom::Selection::box({z0, 0, 0}, {nz, NY, NX}), slabs[s]);
        energy.extend({uint64_t(s) + 1, uint64_t(size)});
        double e = value_at(s, rank, 0, 0);
        energy.write_copy(h5loom::Selection::box({uint64_t(s), uint64_t(rank)}, {1, 1}), &e, 1);
        if (a.sync) f.flush();  // end of step: the data is on storage (HDF5 calls MPI_File_sync)
      }
      f.close();
    }));
    loom.read_s = std::min(loom.read_s, timed([&] {
      auto f = h5loom::File::open(h5path, h5loom::Mode::Read, opts);
      for (int s = 0; s < a.steps; ++s) {
        char name[64];
        std::snprintf(name, sizeof name, "step_%04d/density", s);
        f.dataset(name).read(h5loom::Selection::box({z0, 0, 0}, {nz, NY, NX}), readback.data(), readback.size());
        wrong += count_wrong(readback, s, z0, nz);
      }
      auto energy = f.dataset("energy").read<double>();
      for (int s = 0; s < a.steps; ++s)
        for (int r = 0; r < size; ++r) wrong += energy[s * size + r] != value_at(s, r, 0, 0);
    }));
  }
  uint64_t wrong_all = 0;
  MPI_Allreduce(&wrong, &wrong_all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);

  if (rank == 0) {
    const double mib = total_bytes / 1048576.0;
    std::printf("\nh5loom demo: %d ranks x %d steps x %.1f MiB per rank per step = %.1f MiB, engine %s\n", size,
                a.steps, slab_bytes / 1048576.0, mib, engine_name.c_str());
    std::printf("best of %d runs each, timed barrier to barrier (open to close), same directory: %s\n", a.repeat,
                a.dir.c_str());
    std::printf("%s\n\n", a.sync ? "every step ends with a flush to storage (fsync) in both; --no-sync to skip"
                                 : "no flush to storage between steps (--no-sync)");
    std::printf("%-28s %14s %14s\n", "", "write MiB/s", "read MiB/s");
    std::printf("%-28s %14.1f %14.1f\n", "plain pwrite / pread", mib / raw.write_s, mib / raw.read_s);
    std::printf("%-28s %14.1f %14.1f\n", ("h5loom (" + engine_name + ")").c_str(), mib / loom.write_s,
                mib / loom.read_s);
    std::printf("%-28s %14.2f %14.2f\n\n", "ratio h5loom / plain", raw.write_s / loom.write_s,
                raw.read_s / loom.read_s);
    if (wrong_all == 0)
      std::printf("verified: every value read back by h5loom and by pread is correct (%d runs)\n", a.repeat);
    else
      std::printf("VERIFICATION FAILED: %llu wrong values\n", (unsigned long long)wrong_all);
  }
  if (rank == 0) {
    std::remove(rawpath.c_str());
  }
  MPI_Finalize();
  return wrong_all == 0 ? 0 : 1;
}
