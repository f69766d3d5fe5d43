// Steps with particles and a 3-D block field, in the openPMD or H5Part layout.
// Each rank owns a slab of the grid along x and its own particles (rank 1 none);
// the library computes global sizes and offsets. Then every rank reads its slab
// with a halo of one cell from its neighbours.
//   particles_fields_cpp FILE [openpmd|h5part]
#include <h5loom/series.hpp>

#include <cstdio>

int main(int argc, char** argv) try {
  std::string path = argc > 1 ? argv[1] : "particles_fields.h5";
  h5loom::SeriesOptions options;
  options.layout = h5loom::layout_from_name(argc > 2 ? argv[2] : "openpmd");
  const uint64_t nz = 4, ny = 4, nx_local = 8;
  uint64_t rank, nranks;
  {
    auto series = h5loom::Series::create(path, options);
    rank = series.file().rank(), nranks = series.file().size();
    for (uint64_t n = 0; n < 3; ++n) {
      auto step = series.write_step(n, /*time=*/0.1 * n, /*dt=*/0.1);
      auto electrons = step.particles("electrons");
      std::vector<double> x(rank == 1 ? 0 : 1000);  // a rank may have no particles
      for (size_t i = 0; i < x.size(); ++i) x[i] = rank * nx_local + i * nx_local / double(x.size());
      electrons.set_local_count(x.size());           // exclusive scan: offset and global count
      electrons.write("x", x);                       // deferred until the step ends
      h5loom::FieldSpec spec{{nz, ny, nx_local * nranks}};  // [z][y][x], C order
      spec.spacing = {0.5, 0.5, 0.5};
      auto rho = step.field("rho", spec);
      std::vector<double> local((nz + 2) * (ny + 2) * (nx_local + 2), double(rank));  // box + 1 ghost cell
      rho.write(local.data(), {nz + 2, ny + 2, nx_local + 2}, {0, 0, rank * nx_local}, /*ghost=*/1);
      step.close();  // flush point: x and local are used here
    }
  }
  auto series = h5loom::Series::open(path);  // the layout is detected
  for (uint64_t n : series.steps()) {
    auto step = series.step(n);
    auto x = step.particles(step.particle_species().at(0)).read_my_share<double>("x");
    auto rho = step.field("rho").read<double>({0, 0, rank * nx_local}, {nz, ny, nx_local}, /*halo=*/1, -1.0);
    // rho is (nz+2) x (ny+2) x (nx_local+2); at z=y=1 the x-row holds the left neighbour, mine, the right one
    const double* row = &rho[(1 * (ny + 2) + 1) * (nx_local + 2)];
    double left = rank == 0 ? -1.0 : rank - 1.0, right = rank + 1 == nranks ? -1.0 : rank + 1.0;
    if (row[0] != left || row[1] != double(rank) || row[nx_local + 1] != right) {
      std::fprintf(stderr, "rank %llu: wrong halo in step %llu\n", (unsigned long long)rank, (unsigned long long)n);
      return 1;
    }
    if (rank == 0)
      std::printf("%s step %llu (t=%g): %zu particles read here, halo verified\n", path.c_str(),
                  (unsigned long long)n, step.time(), x.size());
  }
  return 0;
} catch (const h5loom::Error& e) {
  std::fprintf(stderr, "particles_fields: %s\n", e.what());
  return 1;
}
