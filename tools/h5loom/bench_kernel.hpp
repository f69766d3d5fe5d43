// The frame every application kernel of `h5loom bench` runs in (bench_kernel.cpp).
#pragma once

#include <functional>
#include <h5loom/h5loom.hpp>
#include <string>
#include <vector>

#include "bench.hpp"

namespace h5loom::bench {

// The time steps of a kernel's write phase, and how long the program was
// blocked in I/O in each: everything but the compute phases (--compute).
class StepClock {
 public:
  StepClock(double compute, bool busy) : compute_(compute), busy_(busy) {}
  void start();
  // A time step's writes are made: a flush point that returns at once
  // (File::flush_async: an async engine completes it in the next collective
  // call), then the compute phase.
  void end_step(File& f);
  // A file's last step: its close returns at once (File::close_async: an
  // async engine moves the data meanwhile), the compute phase runs, then
  // the close completes - waited for as blocked time (finish() counts it).
  void end_file(File& f);
  // After the file's close: the time since the last compute phase is the last step's.
  void finish();
  // Runs the kernel's own work (making the values to write): not I/O, so not blocked time.
  template <class Fn>
  void untimed(Fn&& fn) {
    const double t0 = MPI_Wtime();
    fn();
    mark_ += MPI_Wtime() - t0;
  }
  // Seconds blocked in each step (this rank): its time in I/O calls.
  const std::vector<double>& blocked() const { return blocked_; }

 private:
  double compute_;
  bool busy_;
  double mark_ = 0;
  std::vector<double> blocked_;
};

struct KernelSpec {
  std::string name, description;
  uint64_t bytes_per_rank = 0;              // what this rank writes
  uint64_t posix_piece = 1 << 20;           // the baseline's write size
  bool posix_interleaved = false;           // the baseline's pieces interleave across ranks
  std::string posix_description;
  std::function<void(File&, StepClock&)> write;  // between create and close (both timed)
  std::function<uint64_t(File&)> read;      // between open and close; returns this rank's wrong values
};

// Times k on every engine of o (best of `repeat`), beside POSIX; prints a table
// and writes <dir>/<name>.csv. Returns 4 if any value read back was wrong.
int run_kernel(const CommonOptions& o, int repeat, const KernelSpec& k);

}  // namespace h5loom::bench
