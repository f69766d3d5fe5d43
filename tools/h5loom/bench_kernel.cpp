// The frame of the application kernels: best-of-N timing of a write phase
// (create to close) and a read phase (open, read, check, close) on every
// engine, beside the POSIX baseline, with a table and a CSV.
#include <cstdio>

#include "bench_kernel.hpp"

namespace h5loom::bench {

void StepClock::start() {
  blocked_.clear();
  mark_ = MPI_Wtime();
}

void StepClock::end_step(File& f) {
  Request flushed = f.flush_async();  // dropped: it completes in the next collective call
  blocked_.push_back(MPI_Wtime() - mark_);
  compute_phase(compute_, busy_);
  mark_ = MPI_Wtime();
}

void StepClock::end_file(File& f) {
  Request closed = f.close_async();
  blocked_.push_back(MPI_Wtime() - mark_);
  compute_phase(compute_, busy_);
  mark_ = MPI_Wtime();
  closed.wait();
}

void StepClock::finish() {
  if (blocked_.empty()) blocked_.push_back(0);
  blocked_.back() += MPI_Wtime() - mark_;
}

namespace {
std::string joined(const std::vector<double>& v, const char* sep) {
  std::string out;
  char buf[32];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, "%.4f", x);
    out += (out.empty() ? "" : sep) + std::string(buf);
  }
  return out;
}
}  // namespace

int run_kernel(const CommonOptions& o, int repeat, const KernelSpec& k) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const std::string path = engine_path(o, k.name + ".h5");
  uint64_t total_bytes = 0;
  MPI_Allreduce(&k.bytes_per_rank, &total_bytes, 1, MPI_UINT64_T, MPI_SUM, comm);
  const double mib = total_bytes / 1048576.0;
  if (rank == 0) std::printf("%s: %d ranks, %s; %.1f MiB in all, best of %d\n", k.name.c_str(), nranks,
                             k.description.c_str(), mib, repeat);

  prepare_dir(comm, o.dir);
  PosixResult posix{1e300, 1e300};
  for (int rep = 0; rep < repeat; ++rep) {
    auto p = posix_limit(comm, o.dir + "/" + k.name + ".h5.posix", k.bytes_per_rank, k.posix_piece, o.posix_sync, k.posix_interleaved);
    posix.write_s = std::min(posix.write_s, p.write_s), posix.read_s = std::min(posix.read_s, p.read_s);
  }
  std::FILE* csv = nullptr;
  const std::string csv_path = o.csv.empty() ? o.dir + "/" + k.name + ".csv" : o.csv;
  csv = open_csv(comm, csv_path);
  if (rank == 0) {
    std::fprintf(csv, "kernel,engine,ranks,bytes,write [s],read [s],posix-write [s],posix-read [s],write-ratio,"
                      "read-ratio,verified,not I/O [s],blocked [s],blocked per step [s]\n");
    std::printf("plain POSIX (%s): write %.1f MiB/s, read %.1f MiB/s\n\n", k.posix_description.c_str(),
                mib / posix.write_s, mib / posix.read_s);
    if (o.compute > 0)
      std::printf("compute phase: %.3f s after each step; write time includes it, blocked time does not (nor the "
                  "time making the values)\n\n", o.compute);
    std::printf("%-40s %12s %12s %10s %10s", "engine", "write MiB/s", "read MiB/s", "w/POSIX", "r/POSIX");
    if (o.compute > 0) std::printf(" %10s %10s %9s  %s", "write [s]", "blocked", "vs first", "blocked per step [s]");
    std::printf("\n");
  }
  // Repetition by repetition, every engine in turn: each meets the machine
  // as the others do (the page cache, the device's queue and its burst
  // budget, which a virtual disk may spend within a run), not a phase of its own.
  struct Best {
    double write = 1e300, read = 1e300, blocked = 0;
    std::vector<double> steps_blocked;  // of the best write, the slowest rank's per step
    uint64_t wrong = 0;
  };
  std::vector<Best> best(o.engines.size());
  for (int rep = 0; rep < repeat; ++rep)
    for (std::size_t e = 0; e < o.engines.size(); ++e) {
      const std::string& engine = o.engines[e];
      Best& b = best[e];
      FileOptions fo;
      fo.engine = engine;
      fo.comm = comm;
      if (rank == 0) remove_engine_files(engine, path);
      MPI_Barrier(comm);
      StepClock clock(o.compute, o.busy);
      const double w = timed(comm, [&] {
        clock.start();
        auto f = File::create(path, fo);
        k.write(f, clock);
        f.close();
        clock.finish();
      });
      std::vector<double> blocked = clock.blocked();
      // The program's time in I/O calls: the rank that spent the most there,
      // counting only its own (a rank waiting at the end of another's step
      // for one that was still in I/O calls does not hide that one's time).
      double mine = 0, most = 0;
      for (double x : blocked) mine += x;
      MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, comm);
      MPI_Allreduce(MPI_IN_PLACE, blocked.data(), int(blocked.size()), MPI_DOUBLE, MPI_MAX, comm);
      if (w < b.write) b.write = w, b.steps_blocked = blocked, b.blocked = most;
      uint64_t wrong = 0;
      b.read = std::min(b.read, timed(comm, [&] {
                          auto f = File::open(path, Mode::Read, fo);
                          wrong = k.read(f);
                          f.close();
                        }));
      MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_UINT64_T, MPI_SUM, comm);
      b.wrong += wrong;
    }
  // (each turn removed the files of the turn before)
  if (rank == 0 && !o.keep_files && !o.engines.empty()) remove_engine_files(o.engines.back(), path);
  int exit_code = 0;
  for (std::size_t e = 0; e < o.engines.size(); ++e) {
    const std::string& engine = o.engines[e];
    const Best& b = best[e];
    if (rank == 0) {
      std::printf("%-40s %12.1f %12.1f %10.2f %10.2f", engine_label(engine).c_str(), mib / b.write, mib / b.read,
                  posix.write_s / b.write, posix.read_s / b.read);
      if (o.compute > 0)
        std::printf(" %10.3f %10.3f %9.2f  %s", b.write, b.blocked, b.blocked / best.front().blocked,
                    joined(b.steps_blocked, " ").c_str());
      std::printf("%s\n", b.wrong ? "  WRONG VALUES READ BACK" : "");
      std::fprintf(csv, "%s,%s,%d,%llu,%.6f,%.6f,%.6f,%.6f,%.4f,%.4f,%s,%.6f,%.6f,%s\n", k.name.c_str(),
                   csv_field(engine_label(engine)).c_str(), nranks, (unsigned long long)total_bytes, b.write, b.read,
                   posix.write_s, posix.read_s, posix.write_s / b.write, posix.read_s / b.read,
                   b.wrong ? "no" : "yes", b.write - b.blocked, b.blocked, joined(b.steps_blocked, ";").c_str());
    }
    if (b.wrong) exit_code = 4;
  }
  if (rank == 0) {
    // Every other engine against the first one named (each with its own settings).
    const std::string first = o.engines.empty() ? "" : engine_label(o.engines.front());
    for (std::size_t e = 1; e < o.engines.size(); ++e)
      if (engine_label(o.engines[e]) != first)
        std::printf("\n%s writes %.2fx as fast as %s\n", engine_label(o.engines[e]).c_str(),
                    best.front().write / best[e].write, first.c_str());
    std::printf("CSV: %s\n", csv_path.c_str());
    std::fclose(csv);
  }
  return exit_code;
}

}  // namespace h5loom::bench
