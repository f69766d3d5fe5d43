// A program that leaves an open file because of an exception, on one rank or
// on all (tests/python/package/test_data_safety.py): the File's destructor runs
// while the exception unwinds, and main catches it, as HPC codes often do.
//   leave_on_error FILE one|all
#include <h5loom/h5loom.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string path = argv[1], who = argv[2];
  int rank = 0;
  try {
    auto f = h5loom::File::create(path);
    rank = f.rank();
    auto ds = f.create_dataset<double>("x", {uint64_t(f.size()) * 4});
    ds.write(h5loom::Selection::box({uint64_t(rank) * 4}, {4}), std::vector<double>(4, double(rank)));
    f.flush();
    if (who == "all" || rank == f.size() - 1) throw std::runtime_error("the simulation failed");
    f.create_group("after");  // the other ranks go on to a collective call
    f.close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    return 3;
  }
  return 0;
}
