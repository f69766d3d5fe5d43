#include "hdf5lib/dataspace.hpp"

namespace h5loom::hdf5lib {

Hid select(hid_t file_space, const Selection& sel, const Dims& shape) {
  if (sel.kind() == Selection::Kind::Hyperslab) {
    auto start = to_hsize(sel.start()), count = to_hsize(sel.count()), stride = to_hsize(sel.stride()),
         block = to_hsize(sel.block());
    // (the message only on failure: selections are made for every write)
    if (H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), stride.data(), count.data(), block.data()) < 0)
      fail("selecting " + sel.to_string());
  } else if (sel.kind() == Selection::Kind::All) {
    check(H5Sselect_all(file_space), "selecting all");
  }
  uint64_t n = sel.num_elements(shape);
  if (sel.kind() == Selection::Kind::None || n == 0) {
    H5Sselect_none(file_space);
    hsize_t one = 1;
    Hid mem = checked(H5Screate_simple(1, &one, nullptr), H5Sclose, "creating an empty memory space");
    H5Sselect_none(mem.get());
    return mem;
  }
  auto dims = to_hsize(sel.selected_shape(shape));
  return checked(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
                 "creating a memory space");
}

}  // namespace h5loom::hdf5lib
