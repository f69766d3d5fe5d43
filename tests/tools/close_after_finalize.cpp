// A program whose file is still closing (close_async, never waited) when it
// finalises MPI and then drops the request (tests/python/package/
// test_data_safety.py). The close cannot run any more; the library must say
// so and go on - though the async wrapper's background thread may still be
// moving the file's many small writes - instead of crashing.
//   close_after_finalize FILE
#include <h5loom/h5loom.hpp>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int provided = 0, rank = 0, size = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const uint64_t n = 64, writes = 400000;  // tasks queued faster than the background thread runs them
  h5loom::Request closing;
  {
    auto f = h5loom::File::create(argv[1], {MPI_COMM_WORLD, "async+log"});
    auto ds = f.create_dataset<double>("x", {uint64_t(size) * n * writes});
    const std::vector<double> values(n, 1.0);
    for (uint64_t i = 0; i < writes; ++i)
      ds.write_copy(h5loom::Selection::box({(i * uint64_t(size) + uint64_t(rank)) * n}, {n}), values);
    closing = f.close_async();
  }
  MPI_Finalize();
  closing = h5loom::Request();  // dropped: the file's last handle
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the program goes on (the background thread too)
  std::printf("rank %d: after the request\n", rank);
  return 0;
}
