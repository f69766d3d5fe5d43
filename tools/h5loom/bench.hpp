// `h5loom bench`: benchmarks that run through any engine and report every
// result beside what plain POSIX I/O does with the same bytes in the same run.
// docs/benchmarks.md describes each one and its results.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <h5loom/errors.hpp>
#include <string>
#include <vector>

namespace h5loom::bench {

struct CommonOptions {
  std::vector<std::string> engines{"hdf5"};  // each engine runs every case
  std::string dir = ".";                     // where the files go (all ranks must see it)
  // Where the engines' files go instead of `dir`, if given: a store URL
  // ("s3://bucket/prefix", for the zarr engine). The POSIX baseline and the
  // CSV stay in `dir`.
  std::string store;
  std::string csv;                           // CSV output (empty: the benchmark's default)
  bool progress = true;                      // a progress line on stderr (rank 0)
  bool keep_files = false;
  bool posix_sync = true;                    // the POSIX baseline ends with fsync (durable, like a synced engine)
  // Seconds of "compute" (a sleep, as hdf5-iotest's delay) after each time
  // step's writes, during which an async engine moves them (docs/async.md).
  double compute = 0;
  // The compute phase keeps the rank's core busy instead of sleeping, as a
  // simulation's step does: an async engine's background thread then has
  // no idle core to move the data on.
  bool busy = false;
};

// hdf5-iotest: the ini format and the eight nested loops of HDF5's hdf5-iotest.
struct IotestOptions : CommonOptions {
  std::string ini;  // file; empty: the built-in default (bench/iotest/default.ini)
  int repeat = 1;   // each case this many times, best time of each metric (hdf5-iotest: once)
  // "h5loom": through h5loom's object model; "hdf5": through HDF5's C API (engine
  // "native": HDF5 alone; any other: h5loom's VOL connector with that configuration).
  std::string api = "h5loom";
  // Lend the tiles to h5loom until their step's flush completes (write(span)),
  // as hdf5-iotest's async mode leaves its buffer to H5Dwrite_async until
  // H5ESwait, instead of copying them (write_copy). --api h5loom only.
  bool lend = false;
};
int run_iotest(const IotestOptions& o);

// How many steps' buffers take turns when they are lent (vpic, iotest
// --lend): a lent buffer stays untouched until its step's flush has
// completed. That flush begins at the next step's flush point and completes
// at the one after (async+log commits in two stages, the second at the next
// flush's collective part: async.md), and a step's values are made before
// its first collective call - so the two steps before it still hold theirs.
// The last flushes complete at the close, which the buffers outlive.
constexpr std::size_t kLentStepSets = 3;

// The application kernels (bench_kernels.cpp); each verifies what it reads.
struct KernelOptions : CommonOptions {
  int repeat = 3;  // best of
  // qmcpack: walkers per rank written one at a time, particles per walker, RNG state words per rank
  uint64_t walkers = 4000, walker_particles = 32, state_size = 1024;
  // vpic and hacc: particles per rank, time steps
  uint64_t particles = 1 << 19, steps = 2;
  bool lend = false;  // vpic: lend the arrays (write(span)) instead of copying them (write_copy)
  // amrex: cells per side of the cubic domain, max_grid_size, components
  uint64_t cells = 128, max_grid_size = 32, components = 4;
  // e3sm: decomposition map (.dat) and variables per map
  std::string map;
  uint64_t variables = 20;
};
int run_qmcpack(const KernelOptions& o);
int run_vpic(const KernelOptions& o);
int run_hacc(const KernelOptions& o);
int run_amrex(const KernelOptions& o);
int run_e3sm(const KernelOptions& o);

// PIO's pioperformance pattern through the netCDF layer (bench_pio.cpp).
struct PioOptions : CommonOptions {
  std::string map;                                     // PIO decomposition file (.dat)
  uint64_t variables = 2;                              // of each type: int, float, double
  uint64_t frames = 2;                                 // records
  std::vector<std::string> rearrangers{"box", "subset"};
  std::vector<int> iotasks{1, 2, 4, 8, 16};           // those up to the number of ranks
  int repeat = 3;                                      // best of
};
int run_pio(const PioOptions& o);

// The cost of submitting one small write (bench_submit.cpp).
struct SubmitOptions : CommonOptions {
  uint64_t writes = 20000;  // per rank
  uint64_t bytes = 256;     // per write
  int repeat = 3;           // best of
};
int run_submit(const SubmitOptions& o);

// ---- shared helpers (bench_common.cpp) ----

// An error that every rank of the command raises at the same point (made so by
// agree()): no rank is left waiting, so the command ends normally with it and
// rank 0 alone prints it.
class AgreedError : public Error {
 public:
  using Error::Error;
};
// Collective: runs checks that talk to no other rank (arguments, ini and map
// files, engine names), then agrees on the outcome. If they failed on any rank,
// every rank throws AgreedError with the code and message of the lowest failing
// rank (naming that rank when the others passed). Without it, a rank whose
// checks fail leaves while the others wait for it in their next collective call.
void agree(MPI_Comm comm, const std::function<void()>& local_checks);
// Throws ConfigError unless `engine` names a registered engine or is a valid
// JSON configuration of one.
void check_engine(const std::string& engine);

// Seconds of wall time of fn, measured barrier to barrier, the maximum over ranks.
double timed(MPI_Comm comm, const std::function<void()>& fn);
// The compute phase: `seconds` asleep, or (busy) spent on the CPU.
void compute_phase(double seconds, bool busy);
// Plain POSIX: each rank pwrites `bytes` into one shared file in pieces of
// `piece` bytes (fsync at the end unless !sync), then preads them back. The
// pieces of all ranks interleave (as tiles of a dataset do), or each rank's
// pieces are one contiguous run.
struct PosixResult {
  double write_s = 0, read_s = 0;
};
PosixResult posix_limit(MPI_Comm comm, const std::string& path, uint64_t bytes_per_rank, uint64_t piece,
                        bool sync = true, bool interleaved = true);
// Collective: rank 0 creates `dir` (with parents) if missing; every rank throws
// the same error if it cannot.
void prepare_dir(MPI_Comm comm, const std::string& dir);
// Collective: rank 0 opens `path` for writing (others get nullptr); every rank
// throws if rank 0 could not.
std::FILE* open_csv(MPI_Comm comm, const std::string& path);
// Total size of the files an engine keeps for `path`.
uint64_t engine_file_size(const std::string& engine, const std::string& path);
void remove_engine_files(const std::string& engine, const std::string& path);
// The location of the engines' file `name`: under CommonOptions::store if set, else under dir.
std::string engine_path(const CommonOptions& o, const std::string& name);
// A short label for an engine configuration: its name, or the JSON's engine name.
std::string engine_label(const std::string& engine);
std::string base_engine(const std::string& engine);
// A CSV field: quoted, with quotes doubled (engine labels hold JSON, commas included).
std::string csv_field(const std::string& s);

}  // namespace h5loom::bench
