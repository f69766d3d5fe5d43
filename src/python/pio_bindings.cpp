// The PIO layer's classes for Python (h5loom.pio wraps them): decompositions,
// rearrangements, and darray transfers of numpy arrays in the dataset's type.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <h5loom/pio.hpp>

namespace nb = nanobind;
using namespace h5loom;

namespace {

MPI_Comm comm_of(std::optional<long long> comm_f) {
  ensure_mpi();
  return comm_f ? MPI_Comm_f2c(static_cast<MPI_Fint>(*comm_f)) : MPI_COMM_WORLD;
}

}  // namespace

void bind_pio(nb::module_& m) {
  using InMap = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
  using OutArray = nb::ndarray<nb::c_contig, nb::device::cpu>;
  nb::class_<pio::Decomposition>(m, "Decomposition")
      .def_static("from_map", [](const Dims& shape, InMap map, int base, std::optional<long long> comm_f) {
        return pio::Decomposition::from_map(comm_of(comm_f), shape,
                                            std::vector<int64_t>(map.data(), map.data() + map.size()), base);
      }, nb::arg("shape"), nb::arg("map"), nb::arg("base"), nb::arg("comm").none())
      .def_static("from_file", [](const std::string& path, std::optional<long long> comm_f) {
        return pio::Decomposition::from_file(comm_of(comm_f), path);
      }, nb::arg("path"), nb::arg("comm").none())
      .def_prop_ro("shape", &pio::Decomposition::global_shape)
      .def_prop_ro("local_size", &pio::Decomposition::local_size)
      .def_prop_ro("map", &pio::Decomposition::map);
  nb::class_<pio::Rearrangement>(m, "Rearrangement")
      .def("__init__", [](pio::Rearrangement* self, const pio::Decomposition& d, int num_iotasks, int stride, int base,
                          const std::string& kind) {
        new (self) pio::Rearrangement(d, pio::IOSystem{d.comm(), num_iotasks, stride, base},
                                      pio::rearranger_from_name(kind));
      })
      .def_prop_ro("is_io_task", &pio::Rearrangement::is_io_task)
      .def_prop_ro("local_size", &pio::Rearrangement::local_size)
      // The arrays come in the dataset's type (h5loom.pio converts them): its in-memory form.
      .def("write", [](pio::Rearrangement& r, Dataset& ds, InArray local, uint64_t frame) {
        r.write_raw(ds, ds.dtype().in_memory(), local.data(), local.size(), frame);
      })
      .def("read", [](pio::Rearrangement& r, Dataset& ds, OutArray local, uint64_t frame) {
        r.read_raw(ds, ds.dtype().in_memory(), local.data(), local.size(), frame);
      });
}
