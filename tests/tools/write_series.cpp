// Writes a small series with known content, for the interop tests
// (tests/python/interop/test_series_readers.py reads it with openPMD-api and h5py).
//   mpirun -n 2 write_series FILE openpmd|h5part
// Rank r has r+2 particles per step (id = global index, x = id + 0.5*step);
// field rho[z][y][x] = 100*z + 10*y + x on a 2 x 3 x (2*ranks) grid, split along x;
// vector field E = rho + 1000*component.
#include <h5loom/series.hpp>

#include <numeric>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  h5loom::SeriesOptions o;
  o.layout = h5loom::layout_from_name(argv[2]);
  auto s = h5loom::Series::create(argv[1], o);
  const int rank = s.file().rank(), size = s.file().size();
  s.set_attribute("comment", "h5loom interop");
  for (uint64_t n = 0; n < 2; ++n) {
    auto st = s.write_step(n, 0.5 * n, 0.5);
    auto e = st.particles("electrons");
    e.set_local_count(rank + 2);
    std::vector<int64_t> id(rank + 2);
    std::iota(id.begin(), id.end(), int64_t(e.offset()));
    std::vector<double> x(id.begin(), id.end()), px(id.size(), -1.0);
    for (auto& v : x) v += 0.5 * n;
    e.write("x", x);
    e.write("px", px);
    e.write("id", id);
    h5loom::FieldSpec spec;
    spec.global_shape = {2, 3, 2 * uint64_t(size)};
    spec.spacing = {1.0, 2.0, 3.0};
    spec.origin = {0.0, 0.0, 10.0};
    auto rho = st.field("rho", spec);
    spec.components = 3;
    auto E = st.field("E", spec);
    std::vector<double> box(2 * 3 * 2);
    for (int c = 0; c < 3; ++c) {
      for (uint64_t z = 0; z < 2; ++z)
        for (uint64_t y = 0; y < 3; ++y)
          for (uint64_t xi = 0; xi < 2; ++xi) box[(z * 3 + y) * 2 + xi] = 100.0 * z + 10 * y + (2 * rank + xi) + 1000 * c;
      E.write(box.data(), {2, 3, 2}, {0, 0, 2 * uint64_t(rank)}, 0, c);
      if (c == 0) rho.write(box.data(), {2, 3, 2}, {0, 0, 2 * uint64_t(rank)});
    }
    st.close();
  }
  s.close();
  return 0;
}
