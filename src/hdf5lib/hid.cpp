#include "hdf5lib/hid.hpp"

namespace h5loom::hdf5lib {

std::string hdf5_error_text() {
  std::string text;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* err, void* data) -> herr_t {
        auto* out = static_cast<std::string*>(data);
        if (err->desc && *err->desc) *out = std::string(err->func_name ? err->func_name : "") + ": " + err->desc;
        return 0;
      },
      &text);
  H5Eclear2(H5E_DEFAULT);
  return text.empty() ? "no detail from HDF5" : text;
}

void fail(const std::string& what) { throw IOError(what + " (HDF5: " + hdf5_error_text() + ")"); }

Hid checked(hid_t id, herr_t (*closer)(hid_t), const std::string& what) {
  if (id < 0) fail(what);
  return Hid(id, closer);
}

void check(herr_t status, const std::string& what) {
  if (status < 0) fail(what);
}

std::vector<hsize_t> to_hsize(const Dims& d) {
  std::vector<hsize_t> out(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) out[i] = d[i] == kUnlimited ? H5S_UNLIMITED : d[i];
  return out;
}

Dims from_hsize(const hsize_t* d, int n) {
  Dims out(n);
  for (int i = 0; i < n; ++i) out[i] = d[i] == H5S_UNLIMITED ? kUnlimited : d[i];
  return out;
}

}  // namespace h5loom::hdf5lib
