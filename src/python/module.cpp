// h5loom._core: the nanobind binding of the C++ API. It stays thin on purpose —
// the pythonic layer (slicing, attrs mapping, context managers, dtype handling)
// is plain Python in python/h5loom/__init__.py.
//
// Buffers: reads fill a numpy array in place; writes either copy (copy=True) or
// keep the array alive until the flush point and read it there (copy=False).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <h5loom/h5loom.hpp>

namespace nb = nanobind;
using namespace h5loom;

namespace {

using Array = nb::ndarray<nb::c_contig, nb::device::cpu>;

// The Python exception class for an error code, from h5loom._errors.
nb::object exception_class(ErrorCode code) {
  nb::object classes = nb::module_::import_("h5loom._errors").attr("CLASSES");
  return classes[nb::int_(static_cast<int>(code))];
}

Datatype datatype_of_array(const Array& a, const std::string& what) {
  auto dt = a.dtype();
  using C = nb::dlpack::dtype_code;
  if (dt.lanes == 1) {
    if (dt.code == static_cast<uint8_t>(C::Int)) {
      switch (dt.bits) {
        case 8: return Datatype::Int8;
        case 16: return Datatype::Int16;
        case 32: return Datatype::Int32;
        case 64: return Datatype::Int64;
      }
    } else if (dt.code == static_cast<uint8_t>(C::UInt)) {
      switch (dt.bits) {
        case 8: return Datatype::UInt8;
        case 16: return Datatype::UInt16;
        case 32: return Datatype::UInt32;
        case 64: return Datatype::UInt64;
      }
    } else if (dt.code == static_cast<uint8_t>(C::Float)) {
      if (dt.bits == 32) return Datatype::Float32;
      if (dt.bits == 64) return Datatype::Float64;
    }
  }
  throw DatatypeError("unsupported array element type (code " + std::to_string(dt.code) + ", " +
                      std::to_string(dt.bits) + " bits) for " + what);
}

FileOptions options(std::optional<long long> comm_f, const std::string& engine) {
  ensure_mpi();
  FileOptions o;
  o.engine = engine;
  if (comm_f) o.comm = MPI_Comm_f2c(static_cast<MPI_Fint>(*comm_f));
  return o;
}

// An attribute as (kind, dtype name, payload): payload is bytes for numbers, str for strings.
nb::tuple attribute_to_python(const AttributeValue& v) {
  static const char* kinds[] = {"scalar", "array", "string", "strings"};
  const char* kind = kinds[static_cast<int>(v.kind())];
  if (v.is_string()) return nb::make_tuple(kind, "", v.as_string());
  if (v.is_string_array()) return nb::make_tuple(kind, "", nb::cast(v.as_strings()));
  std::size_t n = v.size() * datatype_size(v.dtype());
  return nb::make_tuple(kind, datatype_name(v.dtype()), nb::bytes(static_cast<const char*>(v.data()), n));
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "h5loom C++ core (use the h5loom package, not this module)";

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const h5loom::Error& e) {
      nb::object cls = exception_class(e.code());
      PyErr_SetString(cls.ptr(), e.what());
    }
  });

  m.def("ensure_mpi", &ensure_mpi);
  m.def("world_rank_size", [] {
    ensure_mpi();
    int r = 0, s = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return std::make_pair(r, s);
  });
  m.def("engine_names", &engine::engine_names);
  m.def("wrapper_names", &engine::wrapper_names);
  m.def("datatype_size", [](const std::string& name) { return datatype_size(datatype_from_name(name)); });
  m.def("canonical_dtype", [](const std::string& name) { return datatype_name(datatype_from_name(name)); });

  nb::class_<Selection>(m, "Selection", "Which elements of a dataset to transfer (HDF5's hyperslab model).")
      .def_static("all", &Selection::all, "The whole dataset.")
      .def_static("none", &Selection::none, "Nothing: for a rank that joins a collective read or write without data.")
      .def_static("box", &Selection::box, nb::arg("start"), nb::arg("count"), "A dense box.")
      .def_static("hyperslab", &Selection::hyperslab, nb::arg("start"), nb::arg("count"),
                  nb::arg("stride") = Dims{}, nb::arg("block") = Dims{},
                  "`count` blocks of `block` elements, `stride` apart, from `start`.")
      .def_prop_ro("kind", [](const Selection& s) {
        return s.kind() == Selection::Kind::All ? "all" : s.kind() == Selection::Kind::None ? "none" : "hyperslab";
      })
      .def_prop_ro("start", &Selection::start)
      .def_prop_ro("count", &Selection::count)
      .def_prop_ro("stride", &Selection::stride)
      .def_prop_ro("block", &Selection::block)
      .def("selected_shape", &Selection::selected_shape)
      .def("num_elements", &Selection::num_elements)
      .def("__repr__", [](const Selection& s) { return "Selection." + s.to_string(); });

  nb::class_<Object>(m, "Object")
      .def_prop_ro("path", &Object::path)
      .def_prop_ro("name", &Object::name)
      .def("set_attribute_string", [](Object& o, const std::string& name, const std::string& v) {
        o.set_attribute(name, AttributeValue(v));
      })
      .def("set_attribute_strings", [](Object& o, const std::string& name, const std::vector<std::string>& v) {
        o.set_attribute(name, AttributeValue(v));
      })
      .def("set_attribute_numeric", [](Object& o, const std::string& name, const Array& a, bool scalar) {
        Datatype t = datatype_of_array(a, "attribute '" + name + "'");
        auto kind = scalar ? AttributeValue::Kind::Scalar : AttributeValue::Kind::Array;
        o.set_attribute(name, AttributeValue::from_raw(kind, t, a.size(), a.data()));
      })
      .def("attribute", [](const Object& o, const std::string& name) { return attribute_to_python(o.attribute(name)); })
      .def("has_attribute", &Object::has_attribute)
      .def("attribute_names", &Object::attribute_names);

  nb::class_<Dataset, Object>(m, "Dataset")
      .def_prop_ro("dtype", [](const Dataset& d) { return datatype_name(d.dtype()); })
      .def_prop_ro("shape", &Dataset::shape)
      .def_prop_ro("max_shape", &Dataset::max_shape)
      .def_prop_ro("chunks", &Dataset::chunks)
      .def_prop_ro("layout", [](const Dataset& d) { return d.layout() == Layout::Chunked ? "chunked" : "contiguous"; })
      .def("extend", &Dataset::extend)
      .def("write", [](Dataset& d, const Selection& sel, nb::object obj, bool copy) {
        Array a;
        if (!nb::try_cast(obj, a))
          throw DatatypeError("a write to dataset '" + d.path() + "' needs a C-contiguous numeric numpy array");
        Datatype t = datatype_of_array(a, "a write to dataset '" + d.path() + "'");
        if (copy) return d.write_raw(sel, t, a.data(), a.size(), true);
        // Deferred: the numpy array stays alive (and is read) until the flush point.
        PyObject* ref = obj.release().ptr();
        std::shared_ptr<const void> keep(ref, [](const void* p) {
          if (!Py_IsInitialized()) return;
          nb::gil_scoped_acquire gil;
          Py_DECREF(static_cast<PyObject*>(const_cast<void*>(p)));
        });
        d.write_raw(sel, t, a.data(), a.size(), std::move(keep));
      }, nb::arg("selection"), nb::arg("data"), nb::arg("copy"))
      .def("read", [](Dataset& d, const Selection& sel, Array out) {
        Datatype t = datatype_of_array(out, "a read of dataset '" + d.path() + "'");
        d.read_raw(sel, t, out.data(), out.size());
      }, nb::arg("selection"), nb::arg("out"));

  nb::class_<Group, Object>(m, "Group")
      .def("create_group", &Group::create_group)
      .def("group", &Group::group)
      .def("create_dataset", [](Group& g, const std::string& path, const std::string& dtype, const Dims& shape,
                                const Dims& max_shape, const std::optional<Dims>& chunks, const std::string& layout) {
        DatasetSpec spec;
        spec.dtype = datatype_from_name(dtype);
        spec.shape = shape;
        spec.max_shape = max_shape;
        if (layout == "chunked" || chunks) {
          spec.layout = Layout::Chunked;
          spec.layout_auto = false;
          if (chunks) spec.chunks = *chunks;
        } else if (layout == "contiguous") {
          spec.layout = Layout::Contiguous;
          spec.layout_auto = false;
        } else if (!layout.empty()) {
          throw UsageError("layout must be 'contiguous', 'chunked' or None, not '" + layout + "'");
        }
        return g.create_dataset(path, spec);
      })
      .def("dataset", &Group::dataset)
      .def("kind", [](const Group& g, const std::string& path) -> std::optional<std::string> {
        switch (g.kind(path)) {
          case ObjectKind::Group: return "group";
          case ObjectKind::Dataset: return "dataset";
          case ObjectKind::None: return std::nullopt;
        }
        return std::nullopt;
      })
      .def("list", &Group::list);

  nb::class_<File, Group>(m, "File")
      .def_static("open", [](const std::string& name, int mode, std::optional<long long> comm_f,
                             const std::string& engine) {
        return File::open(name, static_cast<Mode>(mode), options(comm_f, engine));
      })
      .def("flush", &File::flush)
      .def("close", &File::close)
      .def_prop_ro("is_open", &File::is_open)
      .def_prop_ro("filename", &File::filename)
      .def_prop_ro("engine", &File::engine_name)
      .def_prop_ro("rank", &File::rank)
      .def_prop_ro("size", &File::size)
      .def_prop_ro("pending_writes", &File::pending_writes)
      .def_prop_ro("mode", [](const File& f) { return static_cast<int>(f.mode()); })
      .def("describe", &File::describe);
}
