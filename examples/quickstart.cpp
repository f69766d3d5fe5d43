// The C++ quick start: each rank writes its rows of a 2-D field, then reads the
// whole field back. Runs as one rank without mpirun, or under mpirun -n N.
#include <h5loom/h5loom.hpp>

#include <cstdio>

int main(int argc, char** argv) try {
  std::string path = argc > 1 ? argv[1] : "quickstart.h5";
  {
    auto f = h5loom::File::create(path);  // MPI_COMM_WORLD; engine from $H5LOOM_ENGINE, else hdf5
    const uint64_t rows = 4, cols = 3, r = f.rank();
    auto rho = f.create_dataset<double>("fields/rho", {rows * f.size(), cols});
    std::vector<double> mine(rows * cols, 1.0 * r);
    rho.write(h5loom::Selection::box({r * rows, 0}, {rows, cols}), mine);  // deferred: keep `mine` alive
    rho.set_attribute("units", "kg/m^3");
    f.close();  // flush point: the data moves here
  }
  auto f = h5loom::File::open(path);
  auto rho = f.dataset("fields/rho");
  auto all = rho.read<double>();
  std::string units = rho.attribute("units").as_string();  // collective: every rank asks
  for (uint64_t i = 0; i < all.size(); ++i)
    if (all[i] != double(i / 12)) {
      std::fprintf(stderr, "wrong value %g at %llu\n", all[i], (unsigned long long)i);
      return 1;
    }
  if (f.rank() == 0)
    std::printf("%s: fields/rho %s in %s, %zu values verified\n", path.c_str(),
                h5loom::dims_to_string(rho.shape()).c_str(), units.c_str(), all.size());
  return 0;
} catch (const h5loom::Error& e) {
  std::fprintf(stderr, "quickstart: %s\n", e.what());
  return 1;
}
