// `h5loom bench submit`: what one small write costs the program - the time of
// Dataset::write_copy alone, the data moving later (at the flush, or on the
// async wrapper's background thread). HDF5's async VOL documents about 1 ms
// per operation; docs/async.md the async wrapper's.
#include <cstdio>

#include "bench.hpp"

#include <h5loom/h5loom.hpp>

namespace h5loom::bench {

int run_submit(const SubmitOptions& o) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  prepare_dir(comm, o.dir);
  const std::string path = engine_path(o, "submit.h5");
  const uint64_t elements = (o.bytes + 7) / 8;
  if (rank == 0)
    std::printf("submit: %d ranks, %llu writes of %llu bytes per rank (write_copy of one row), best of %d\n\n", nranks,
                (unsigned long long)o.writes, (unsigned long long)(elements * 8), o.repeat);
  if (rank == 0) std::printf("%-40s %16s %16s\n", "engine", "us per write", "flush [s]");
  std::vector<double> row(elements, 1.0);
  for (const auto& engine : o.engines) {
    FileOptions fo;
    fo.engine = engine;
    fo.comm = comm;
    double best = 1e300, flush_s = 0;
    for (int rep = 0; rep < o.repeat; ++rep) {
      if (rank == 0) remove_engine_files(engine, path);
      MPI_Barrier(comm);
      auto f = File::create(path, fo);
      auto ds = f.create_dataset<double>("rows", {o.writes * uint64_t(nranks), elements});
      const double t0 = MPI_Wtime();
      for (uint64_t i = 0; i < o.writes; ++i)
        ds.write_copy(Selection::box({i * uint64_t(nranks) + uint64_t(rank), 0}, {1, elements}), row);
      double per_write = (MPI_Wtime() - t0) / double(o.writes);
      const double f0 = MPI_Wtime();
      f.close();
      const double closing = MPI_Wtime() - f0;
      MPI_Allreduce(MPI_IN_PLACE, &per_write, 1, MPI_DOUBLE, MPI_MAX, comm);
      if (per_write < best) best = per_write, flush_s = closing;
    }
    if (rank == 0) std::printf("%-40s %16.2f %16.3f\n", engine_label(engine).c_str(), best * 1e6, flush_s);
    if (rank == 0 && !o.keep_files) remove_engine_files(engine, path);
  }
  return 0;
}

}  // namespace h5loom::bench
