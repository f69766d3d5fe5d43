// Writes a small file with known content through h5loom, for the independent
// reader test (tests/python/test_independent_reader.py reads it with h5py and h5dump).
//   mpirun -n 2 write_reference FILE [ENGINE]
#include <h5loom/h5loom.hpp>

#include <numeric>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  h5loom::FileOptions o;
  if (argc > 2) o.engine = argv[2];
  auto f = h5loom::File::create(argv[1], o);
  const uint64_t r = f.rank(), n = f.size();
  f.set_attribute("title", "h5loom reference");
  f.set_attribute("ranks", int32_t(n));
  auto rho = f.create_dataset<double>("fields/rho", {2 * n, 3});
  std::vector<double> rows(6);
  for (int i = 0; i < 6; ++i) rows[i] = r * 100 + i;  // row-major: rank r owns rows 2r, 2r+1
  rho.write(h5loom::Selection::box({2 * r, 0}, {2, 3}), rows);
  rho.set_attribute("units", "kg/m^3");
  rho.set_attribute("scale", 2.5);
  f.group("fields").set_attribute("count", std::vector<int32_t>{1, 2, 3});
  auto id = f.create_dataset<int64_t>("particles/id", {0}, {h5loom::kUnlimited});
  for (uint64_t step = 0; step < 2; ++step) {  // two appends of 5 ids per rank
    uint64_t base = step * 5 * n;
    id.extend({base + 5 * n});
    std::vector<int64_t> ids(5);
    std::iota(ids.begin(), ids.end(), int64_t(base + 5 * r));
    id.write_copy(h5loom::Selection::box({base + 5 * r}, {5}), ids);
  }
  std::vector<uint8_t> bytes = {0, 127, 255};
  auto u8 = f.create_dataset<uint8_t>("types/u8", {3});
  auto f32 = f.create_dataset<float>("types/f32", {2});
  std::vector<float> floats = {-1.5f, 3.25f};
  if (r == 0) {
    u8.write(h5loom::Selection::all(), bytes);
    f32.write(h5loom::Selection::all(), floats);
  }
  // A named datatype with an attribute (the engines declaring "named_types").
  if (f.supports("named_types")) {
    auto vec3 = f.commit_datatype("types/vec3", h5loom::Datatype::array(h5loom::Datatype::Float64, {3}));
    vec3.set_attribute("units", "m");
  }
  // A second name for a group (the engines declaring "hard_links").
  if (f.supports("hard_links")) f.create_hard_link("latest", "/fields");
  // An external link to the native file written beside it (the engines declaring "external_links").
  if (f.supports("external_links")) f.create_external_link("outside", "native.h5", "/fields/rho");
  f.close();
  return 0;
}
