// The frame every application kernel of `h5loom bench` runs in (bench_kernel.cpp).
#pragma once

#include <functional>
#include <h5loom/h5loom.hpp>
#include <string>

#include "bench.hpp"

namespace h5loom::bench {

struct KernelSpec {
  std::string name, description;
  uint64_t bytes_per_rank = 0;              // what this rank writes
  uint64_t posix_piece = 1 << 20;           // the baseline's write size
  bool posix_interleaved = false;           // the baseline's pieces interleave across ranks
  std::string posix_description;
  std::function<void(File&)> write;         // between create and close (both timed)
  std::function<uint64_t(File&)> read;      // between open and close; returns this rank's wrong values
};

// Times k on every engine of o (best of `repeat`), beside POSIX; prints a table
// and writes <dir>/<name>.csv. Returns 4 if any value read back was wrong.
int run_kernel(const CommonOptions& o, int repeat, const KernelSpec& k);

}  // namespace h5loom::bench
