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

#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include <h5loom/h5loom.hpp>
#include <h5loom/series.hpp>
#include <h5loom/tools.hpp>

#include "shared.hpp"

namespace nb = nanobind;
using namespace h5loom;
using h5loom::python::attribute_to_python;
using h5loom::python::datatype_of_array;

namespace {

using Array = nb::ndarray<nb::c_contig, nb::device::cpu>;
// Data that h5loom only reads (writes, fill values): read-only arrays too
// (np.frombuffer, read-only memory maps, arrays with writeable=False).
using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

// The Python exception class for an error code, from h5loom._errors.
// An object kind as Python sees it: "group", "dataset" or "datatype".
const char* kind_word(ObjectKind k) {
  switch (k) {
    case ObjectKind::Group: return "group";
    case ObjectKind::Dataset: return "dataset";
    case ObjectKind::Datatype: return "datatype";
    case ObjectKind::None: break;
  }
  return "none";
}

nb::object exception_class(ErrorCode code) {
  nb::object classes = nb::module_::import_("h5loom._errors").attr("CLASSES");
  return classes[nb::int_(static_cast<int>(code))];
}

// The error table (include/h5loom/error_codes.def), from which h5loom._errors
// builds the Python classes: one (class name, code, built-in base class name,
// meaning, C status name) per kind, the base class Error first.
nb::list error_table() {
  nb::list rows;
#define H5LOOM_ERROR_KIND(Kind, C_NAME, code, Class, PyBase, meaning) \
  rows.append(nb::make_tuple(#Class, code, #PyBase, meaning, "LOOM_ERR_" #C_NAME));
#include <h5loom/error_codes.def>
#undef H5LOOM_ERROR_KIND
  return rows;
}

// Throws the C++ exception of an error code (the tests: every kind reaches
// Python as its class).
[[noreturn]] void raise_error(int code, const std::string& message) {
  switch (static_cast<ErrorCode>(code)) {
#define H5LOOM_ERROR_BASE(Kind, C_NAME, code, Class, PyBase, meaning) \
  case ErrorCode::Kind: throw Error(ErrorCode::Kind, message);
#define H5LOOM_ERROR_KIND(Kind, C_NAME, code, Class, PyBase, meaning) \
  case ErrorCode::Kind: throw Class(message);
#include <h5loom/error_codes.def>
#undef H5LOOM_ERROR_KIND
#undef H5LOOM_ERROR_BASE
    default: break;
  }
  throw UsageError("_raise_error: no error code " + std::to_string(code));
}

FileOptions options(std::optional<long long> comm_f, const std::string& engine) {
  ensure_mpi();
  FileOptions o;
  o.engine = engine;
  if (comm_f) o.comm = MPI_Comm_f2c(static_cast<MPI_Fint>(*comm_f));
  return o;
}

// References released on a thread that does not hold the GIL (the async
// wrapper's background thread), dropped later by a thread that does. Taking
// the GIL there could deadlock: the Python thread may hold it while it waits
// for that background thread.
std::mutex released_mutex;
std::vector<PyObject*> released;
bool release_scheduled = false;

int drop_released(void* = nullptr) {  // with the GIL
  std::vector<PyObject*> now;
  {
    std::lock_guard<std::mutex> lock(released_mutex);
    now.swap(released);
    release_scheduled = false;
  }
  for (PyObject* p : now) Py_DECREF(p);
  return 0;
}

// Keeps a Python object (a numpy array) alive until h5loom releases the buffer at a flush point.
std::shared_ptr<const void> keep_alive(nb::object obj) {
  drop_released();
  PyObject* ref = obj.release().ptr();
  return std::shared_ptr<const void>(ref, [](const void* p) {
    if (!Py_IsInitialized()) return;
    PyObject* o = static_cast<PyObject*>(const_cast<void*>(p));
    if (PyGILState_Check()) return Py_DECREF(o);
    std::lock_guard<std::mutex> lock(released_mutex);
    released.push_back(o);
    // The interpreter's main thread runs it soon (callable without the GIL);
    // if its queue is full, the next keep_alive() drops them.
    if (!release_scheduled) release_scheduled = Py_AddPendingCall(drop_released, nullptr) == 0;
  });
}

// The hyperslab a basic numpy index names in `shape` - an int, a slice with a
// positive step, or a tuple of them (missing trailing dimensions whole) - and
// the shape it gives without the integer dimensions; nullopt for anything
// else, or an index out of range (Python's own path then explains it).
std::optional<std::pair<Selection, Dims>> basic_hyperslab(nb::handle key, const Dims& shape) {
  const bool is_tuple = PyTuple_Check(key.ptr());
  const Py_ssize_t given = is_tuple ? PyTuple_GET_SIZE(key.ptr()) : 1;
  if (given > Py_ssize_t(shape.size())) return std::nullopt;
  Dims start(shape.size(), 0), count(shape), stride(shape.size(), 1), out;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (Py_ssize_t(d) >= given) {
      out.push_back(shape[d]);
      continue;
    }
    PyObject* k = is_tuple ? PyTuple_GET_ITEM(key.ptr(), Py_ssize_t(d)) : key.ptr();
    const auto n = Py_ssize_t(shape[d]);
    if (PyLong_CheckExact(k)) {
      const Py_ssize_t i = PyLong_AsSsize_t(k);
      if (i == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return std::nullopt;
      }
      if (i < -n || i >= n) return std::nullopt;
      start[d] = uint64_t(i < 0 ? i + n : i), count[d] = 1;
    } else if (PySlice_Check(k)) {
      Py_ssize_t b = 0, e = 0, s = 0;
      if (PySlice_Unpack(k, &b, &e, &s) < 0) {
        PyErr_Clear();
        return std::nullopt;
      }
      if (s <= 0) return std::nullopt;
      const Py_ssize_t c = PySlice_AdjustIndices(n, &b, &e, s);
      start[d] = c ? uint64_t(b) : 0, count[d] = uint64_t(c), stride[d] = uint64_t(s);
      out.push_back(uint64_t(c));
    } else {
      return std::nullopt;
    }
  }
  return std::pair{Selection::hyperslab(start, count, stride), out};
}

// `dims` without its 1s (numpy's reshape between them keeps the elements' order).
Dims squeezed(const Dims& dims) {
  Dims out;
  for (uint64_t n : dims)
    if (n != 1) out.push_back(n);
  return out;
}

InArray as_array(nb::handle obj, const std::string& what) {
  InArray a;
  if (!nb::try_cast(obj, a)) throw DatatypeError(what + " needs a C-contiguous numeric numpy array");
  return a;
}

// A datatype as nested tuples for Python to build a numpy dtype from:
// ("scalar", "float64"), ("string", length, "ascii"|"utf8"), ("vlen", "ascii"|"utf8"),
// ("reference",), ("enum", base, [(name, value)...]), ("compound", size, [(name, offset, tree)...]),
// ("array", [dims...], tree), ("opaque", size, tag as bytes), ("sequence", tree).
nb::object type_tree(const Datatype& t) {
  switch (t.type_class()) {
    case Datatype::Class::Scalar: return nb::make_tuple("scalar", scalar_name(t.scalar()));
    case Datatype::Class::String:
      return nb::make_tuple("string", t.size(), t.charset() == Datatype::Charset::Utf8 ? "utf8" : "ascii");
    case Datatype::Class::VarString:
      return nb::make_tuple("vlen", t.charset() == Datatype::Charset::Utf8 ? "utf8" : "ascii");
    case Datatype::Class::Reference: return nb::make_tuple("reference");
    case Datatype::Class::Enum: {
      nb::list values;
      for (const auto& [name, value] : t.enum_values()) values.append(nb::make_tuple(name, value));
      return nb::make_tuple("enum", scalar_name(t.scalar()), values);
    }
    case Datatype::Class::Array: {
      nb::list dims;
      for (uint64_t d : t.array_dims()) dims.append(d);
      return nb::make_tuple("array", dims, type_tree(t.array_element()));
    }
    case Datatype::Class::Opaque:
      return nb::make_tuple("opaque", t.size(), nb::bytes(t.opaque_tag().data(), t.opaque_tag().size()));
    case Datatype::Class::Sequence: return nb::make_tuple("sequence", type_tree(t.sequence_element()));
    case Datatype::Class::Compound: {
      nb::list members;
      for (const auto& m : t.members()) members.append(nb::make_tuple(m.name, m.offset, type_tree(m.type)));
      return nb::make_tuple("compound", t.size(), members);
    }
  }
  throw DatatypeError("no description of datatype " + t.name());
}

// Elements of a dataset's own datatype handed over as their bytes (a uint8
// view of a structured, string or enum numpy array): how many there are.
template <class AnyArray>
std::size_t elements_in(const Dataset& d, const AnyArray& bytes, const std::string& what) {
  if (bytes.dtype() != nb::dtype<uint8_t>()) throw DatatypeError(what + " needs the bytes of the elements");
  const std::size_t esize = datatype_size(d.dtype());
  if (bytes.size() % esize != 0)
    throw SelectionError(what + ": " + std::to_string(bytes.size()) + " bytes are not whole elements of " +
                         std::to_string(esize) + " bytes");
  return bytes.size() / esize;
}

// Variable-length strings from Python: a sequence of bytes objects (the
// package encodes str), copied into std::strings.
std::vector<std::string> strings_from(const nb::handle& seq, const std::string& what) {
  std::vector<std::string> out;
  for (nb::handle item : seq) {
    if (!PyBytes_Check(item.ptr()))
      throw DatatypeError(what + " needs bytes or str values, not " +
                          std::string(nb::type_name(item.type()).c_str()));
    out.emplace_back(PyBytes_AS_STRING(item.ptr()), static_cast<std::size_t>(PyBytes_GET_SIZE(item.ptr())));
  }
  return out;
}

// Strings to Python str: UTF-8, and bytes that are not (another tool's
// "ASCII") as lone surrogates, so that s.encode("utf-8", "surrogateescape")
// gives the stored bytes back.
nb::list strings_to_python(const std::vector<std::string>& strings) {
  nb::list out;
  for (const auto& s : strings) {
    PyObject* str = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape");
    if (!str) throw nb::python_error();
    out.append(nb::steal(str));
  }
  return out;
}

// The conformance groups of an engine configuration ("" : $H5LOOM_ENGINE, else hdf5).
std::vector<std::string> engine_groups(const std::string& config) {
  std::string c = config;
  if (c.find_first_not_of(" \t\r\n") == std::string::npos) {
    const char* env = std::getenv("H5LOOM_ENGINE");
    c = env && *env ? env : engine::kDefaultEngine;
  }
  auto groups = engine::make_engine(c)->conformance_groups();
  std::sort(groups.begin(), groups.end());
  return groups;
}

}  // namespace

void bind_pio(nb::module_& m);     // pio_bindings.cpp
void bind_netcdf(nb::module_& m);  // netcdf_bindings.cpp

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

  m.def("error_table", &error_table);
  m.def("_raise_error", &raise_error, nb::arg("code"), nb::arg("message"));

  m.def("ensure_mpi", &ensure_mpi);
  bind_pio(m);
  bind_netcdf(m);
  m.def("copy_object", [](File& from, const std::string& from_path, File& to, const std::string& to_path, bool shallow,
                          bool attributes, bool expand_soft_links) {
    CopyOptions options;
    options.shallow = shallow;
    options.attributes = attributes;
    options.expand_soft_links = expand_soft_links;
    copy_object(from, from_path, to, to_path, options);
  });
  m.def("world_rank_size", [] {
    ensure_mpi();
    int r = 0, s = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return std::make_pair(r, s);
  });
  // For h5loom's sys.excepthook: the size of a job already running (0 if MPI
  // has not started or has ended: the hook must not start it), and MPI_Abort.
  m.def("running_world_size", [] {
    int initialized = 0, finalized = 0, s = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
  });
  m.def("abort_world", [](int code) { MPI_Abort(MPI_COMM_WORLD, code); });
  m.def("engine_names", &engine::engine_names);
  m.def("engine_groups", &engine_groups, nb::arg("config"));
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
      .def("set_attribute_numeric", [](Object& o, const std::string& name, const InArray& a, bool scalar) {
        Datatype t = datatype_of_array(a, "attribute '" + name + "'");
        auto kind = scalar ? AttributeValue::Kind::Scalar : AttributeValue::Kind::Array;
        o.set_attribute(name, AttributeValue::from_raw(kind, t, a.size(), a.data()));
      })
      // Any fixed-size datatype (compounds, enums, references, fixed strings): the elements' bytes.
      .def("set_attribute_raw", [](Object& o, const std::string& name, const std::string& dtype, const nb::bytes& data,
                                   bool scalar) {
        const Datatype t = datatype_from_name(dtype);
        const std::size_t esize = datatype_size(t);
        if (esize == 0 || data.size() % esize != 0 || (scalar && data.size() != esize))
          throw SelectionError("attribute '" + name + "' on '" + o.path() + "': " + std::to_string(data.size()) +
                               " bytes are not " + (scalar ? "one element" : "whole elements") + " of " + dtype);
        auto kind = scalar ? AttributeValue::Kind::Scalar : AttributeValue::Kind::Array;
        o.set_attribute(name, AttributeValue::from_raw(kind, t, data.size() / esize, data.data()));
      })
      // Elements with variable-length parts, packed by the package (variable_length.hpp).
      .def("set_attribute_packed", [](Object& o, const std::string& name, const std::string& dtype,
                                      const nb::bytes& packed, std::size_t count, bool scalar) {
        auto kind = scalar ? AttributeValue::Kind::Scalar : AttributeValue::Kind::Array;
        AttributeValue value;
        try {
          value = AttributeValue::from_stored(kind, datatype_from_name(dtype), count, packed.data(), packed.size());
        } catch (const Error& e) {
          throw DatatypeError("attribute '" + name + "' on '" + o.path() + "': the values are not elements of " +
                              dtype + " (" + e.what() + ")");
        }
        o.set_attribute(name, value);
      })
      .def("set_attribute_empty", [](Object& o, const std::string& name, const std::string& dtype) {
        o.set_attribute(name, AttributeValue::empty(datatype_from_name(dtype)));
      })
      .def("attribute", [](const Object& o, const std::string& name) { return attribute_to_python(o.attribute(name)); })
      .def("has_attribute", &Object::has_attribute)
      .def("attribute_names", &Object::attribute_names)
      .def("remove_attribute", &Object::remove_attribute)
      .def("rename_attribute", &Object::rename_attribute)
      .def("attribute_names_in_creation_order", &Object::attribute_names_in_creation_order);

  m.def("type_tree", [](const std::string& name) { return type_tree(datatype_from_name(name)); });

  nb::class_<Dataset, Object>(m, "Dataset")
      .def_prop_ro("dtype", [](const Dataset& d) { return datatype_name(d.dtype()); })
      .def_prop_ro("shape", &Dataset::shape)
      .def_prop_ro("null_space", &Dataset::null_space)
      // [(id, params, optional, name)], in the order they apply on writing.
      .def_prop_ro("dim_names", &Dataset::dim_names)
      .def_prop_ro("filters", [](const Dataset& d) {
        nb::list out;
        for (const auto& f : d.filters()) out.append(nb::make_tuple(f.id, f.params, f.optional, f.name));
        return out;
      })
      .def_prop_ro("fill_value", [](const Dataset& d) {
        auto fill = d.fill_value();
        return nb::bytes(reinterpret_cast<const char*>(fill.data()), fill.size());
      })
      .def_prop_ro("max_shape", &Dataset::max_shape)
      .def_prop_ro("chunks", &Dataset::chunks)
      .def_prop_ro("layout", [](const Dataset& d) { return d.layout() == Layout::Chunked ? "chunked" : "contiguous"; })
      .def("extend", &Dataset::extend)
      .def("resize", &Dataset::resize)
      // ds[key] = array in one call, when both are plain: a basic index and a
      // C-contiguous array of the dataset's numeric type whose shape is the
      // selection's (1s aside). Copied now. False: not that case, nothing done.
      .def("write_basic", [](Dataset& d, nb::handle key, nb::handle obj) {
        InArray a;
        if (d.null_space() || !nb::try_cast(obj, a)) return false;
        Datatype t;
        try {
          t = datatype_of_array(a, "a write");
        } catch (const DatatypeError&) {  // (bool, records, ...: the full path takes them)
          return false;
        }
        if (!(t == d.dtype())) return false;
        auto hyperslab = basic_hyperslab(key, d.shape());
        if (!hyperslab) return false;
        Dims given(a.ndim());
        for (std::size_t i = 0; i < a.ndim(); ++i) given[i] = uint64_t(a.shape(i));
        if (squeezed(given) != squeezed(hyperslab->second)) return false;
        d.write_raw(hyperslab->first, t, a.data(), a.size(), true);
        return true;
      }, nb::arg("key"), nb::arg("data"))
      .def("write", [](Dataset& d, const Selection& sel, nb::object obj, bool copy) {
        std::string what = "a write to dataset '" + d.path() + "'";
        InArray a = as_array(obj, what);
        Datatype t = datatype_of_array(a, what);
        if (copy) return d.write_raw(sel, t, a.data(), a.size(), true);
        // Deferred: the numpy array stays alive (and is read) until the flush point.
        d.write_raw(sel, t, a.data(), a.size(), keep_alive(obj));
      }, nb::arg("selection"), nb::arg("data"), nb::arg("copy"))
      // independent: this rank alone (Dataset::read_raw_independent), else collective.
      .def("read", [](Dataset& d, const Selection& sel, Array out, bool independent) {
        Datatype t = datatype_of_array(out, "a read of dataset '" + d.path() + "'");
        if (independent) d.read_raw_independent(sel, t, out.data(), out.size());
        else d.read_raw(sel, t, out.data(), out.size());
      }, nb::arg("selection"), nb::arg("out"), nb::arg("independent") = false)
      // Compound, string and enum data: the elements' bytes, in the dataset's own datatype.
      .def("write_bytes", [](Dataset& d, const Selection& sel, nb::object obj, bool copy) {
        const std::string what = "a write to dataset '" + d.path() + "'";
        InArray a = as_array(obj, what);
        const std::size_t n = elements_in(d, a, what);
        if (copy) return d.write_raw(sel, d.dtype(), a.data(), n, true);
        d.write_raw(sel, d.dtype(), a.data(), n, keep_alive(obj));
      }, nb::arg("selection"), nb::arg("data"), nb::arg("copy"))
      .def("read_bytes", [](Dataset& d, const Selection& sel, Array out, bool independent) {
        const std::string what = "a read of dataset '" + d.path() + "'";
        if (independent) d.read_raw_independent(sel, d.dtype(), out.data(), elements_in(d, out, what));
        else d.read_raw(sel, d.dtype(), out.data(), elements_in(d, out, what));
      }, nb::arg("selection"), nb::arg("out"), nb::arg("independent") = false)
      // Elements with variable-length parts: their packed form (variable_length.hpp),
      // which the package makes from and turns into numpy objects.
      .def("write_packed", [](Dataset& d, const Selection& sel, nb::bytes packed, std::size_t n) {
        ElementBuffer elements;
        try {  // (the package packed them: a mismatch is a bad value, not a damaged file)
          if (n > packed.size() / min_packed_element_size(d.dtype()))
            throw CorruptionError(std::to_string(n) + " elements in " + std::to_string(packed.size()) + " bytes");
          elements.resize(d.dtype(), n);
          unpack_variable_length(d.dtype(), static_cast<const unsigned char*>(packed.data()), packed.size(),
                                 elements.data(), n);
        } catch (const CorruptionError& e) {
          throw DatatypeError("a write to dataset '" + d.path() + "': the values are not elements of " +
                              d.dtype().name() + " (" + e.what() + ")");
        }
        d.write_raw(sel, d.dtype(), elements.data(), n, /*copy=*/true);
      }, nb::arg("selection"), nb::arg("packed"), nb::arg("n"))
      .def("read_packed", [](Dataset& d, const Selection& sel, std::size_t n, bool independent) {
        ElementBuffer elements(d.dtype(), n);
        if (independent) d.read_raw_independent(sel, d.dtype(), elements.data(), n);
        else d.read_raw(sel, d.dtype(), elements.data(), n);
        const std::vector<unsigned char> packed = pack_variable_length(d.dtype(), elements.data(), n);
        return nb::bytes(reinterpret_cast<const char*>(packed.data()), packed.size());
      }, nb::arg("selection"), nb::arg("n"), nb::arg("independent") = false)
      // Variable-length strings: bytes objects in (copied at once), str out.
      .def("write_strings", [](Dataset& d, const Selection& sel, nb::handle values) {
        d.write(sel, strings_from(values, "a write to dataset '" + d.path() + "'"));
      }, nb::arg("selection"), nb::arg("values"))
      .def("read_strings", [](Dataset& d, const Selection& sel, std::size_t n, bool independent) {
        std::vector<std::string> got(n);
        if (independent) d.read_raw_independent(sel, Datatype::varstring(), got.data(), n);
        else d.read_raw(sel, Datatype::varstring(), got.data(), n);
        return strings_to_python(got);
      }, nb::arg("selection"), nb::arg("n"), nb::arg("independent") = false);

  nb::class_<NamedDatatype, Object>(m, "NamedDatatype")
      .def_prop_ro("dtype", [](const NamedDatatype& t) { return datatype_name(t.dtype()); });

  nb::class_<Group, Object>(m, "Group")
      .def("create_group", &Group::create_group)
      .def("group", &Group::group)
      .def("create_dataset", [](Group& g, const std::string& path, const std::string& dtype, const Dims& shape,
                                const Dims& max_shape, const std::optional<Dims>& chunks, const std::string& layout,
                                const std::optional<nb::bytes>& fill, bool null_space,
                                const std::vector<std::tuple<uint32_t, std::vector<uint32_t>, bool>>& filters,
                                const std::string& named_type, const std::vector<std::string>& dim_names) {
        DatasetSpec spec;
        spec.null_space = null_space;
        spec.named_type = named_type;
        spec.dim_names = dim_names;
        for (const auto& [id, params, optional] : filters) {
          Filter flt;
          flt.id = id, flt.params = params, flt.optional = optional;
          spec.filters.push_back(std::move(flt));
        }
        if (fill) spec.fill.assign(static_cast<const unsigned char*>(fill->data()),
                                   static_cast<const unsigned char*>(fill->data()) + fill->size());
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
      .def("commit_datatype", [](Group& g, const std::string& path, const std::string& dtype) {
        return g.commit_datatype(path, datatype_from_name(dtype));
      })
      .def("named_datatype", &Group::named_datatype)
      .def("kind", [](const Group& g, const std::string& path) -> std::optional<std::string> {
        const ObjectKind k = g.kind(path);
        if (k == ObjectKind::None) return std::nullopt;
        return kind_word(k);
      })
      .def("list", &Group::list)
      .def("list_in_creation_order", &Group::list_in_creation_order)
      .def("remove", &Group::remove)
      .def("move", &Group::move)
      .def("create_soft_link", &Group::create_soft_link)
      .def("soft_link", &Group::soft_link)
      .def("create_hard_link", &Group::create_hard_link)
      .def("create_external_link", &Group::create_external_link)
      .def("external_link", [](const Group& g, const std::string& path) -> std::optional<std::pair<std::string, std::string>> {
        auto link = g.external_link(path);
        if (!link) return std::nullopt;
        return std::make_pair(link->file, link->path);
      })
      .def("link_count", &Group::link_count)
      .def("change_reference_count", &Group::change_reference_count)
      // Every object below, once each: [(absolute path, kind)] - kind as kind() gives it.
      .def("visit", [](const Group& g) {
        std::vector<std::pair<std::string, std::string>> out;
        g.visit([&](const std::string& path, ObjectKind k) { out.emplace_back(path, kind_word(k)); });
        return out;
      })
      .def("reference", [](const Group& g, const std::string& path) { return g.reference(path).token; })
      .def("dereference", [](const Group& g, uint64_t token) { return g.dereference(ObjectRef{token}); });

  // A flush or close that completes later (File::flush_async, close_async): test() is local, wait() collective.
  nb::class_<Request>(m, "Request")
      .def("test", &Request::test)
      .def("wait", &Request::wait);

  nb::class_<File, Group>(m, "File")
      .def_static("open", [](const std::string& name, int mode, std::optional<long long> comm_f,
                             const std::string& engine) {
        return File::open(name, static_cast<Mode>(mode), options(comm_f, engine));
      })
      .def("flush", [](File& f, bool durable) { f.flush(durable ? FlushLevel::Durable : FlushLevel::Visible); },
           nb::arg("durable") = true)
      .def("flush_async",
           [](File& f, bool durable) { return f.flush_async(durable ? FlushLevel::Durable : FlushLevel::Visible); },
           nb::arg("durable") = true)
      .def("close", &File::close)
      .def("close_async", &File::close_async)
      .def("close_on_error", &File::close_on_error, nb::arg("error") = "")
      .def_prop_ro("is_open", &File::is_open)
      .def_prop_ro("filename", &File::filename)
      .def_prop_ro("engine", &File::engine_name)
      .def_prop_ro("userblock", &File::userblock)
      .def_prop_ro("rank", &File::rank)
      .def_prop_ro("size", &File::size)
      .def_prop_ro("pending_writes", &File::pending_writes)
      .def_prop_ro("mode", [](const File& f) { return static_cast<int>(f.mode()); })
      .def("describe", &File::describe);

  // ---- the series veneer ----
  nb::class_<ParticleSpecies>(m, "ParticleSpecies")
      .def_prop_ro("name", &ParticleSpecies::name)
      .def("set_local_count", &ParticleSpecies::set_local_count)
      .def_prop_ro("local_count", &ParticleSpecies::local_count)
      .def_prop_ro("offset", &ParticleSpecies::offset)
      .def_prop_ro("global_count", &ParticleSpecies::global_count)
      .def("write", [](ParticleSpecies& p, const std::string& array, nb::object obj) {
        std::string what = "particle array '" + array + "'";
        InArray a = as_array(obj, what);
        if (a.size() != p.local_count())
          throw SelectionError(what + " of species '" + p.name() + "' has " + std::to_string(a.size()) +
                               " elements but this rank's count is " + std::to_string(p.local_count()));
        p.write_raw(array, datatype_of_array(a, what), a.data(), keep_alive(obj));
      })
      .def("arrays", &ParticleSpecies::arrays)
      .def("dtype", [](const ParticleSpecies& p, const std::string& a) { return datatype_name(p.dtype(a)); })
      .def("my_share", &ParticleSpecies::my_share)
      .def("read_range", [](const ParticleSpecies& p, const std::string& array, uint64_t b, uint64_t e, Array out) {
        if (out.size() != (e > b ? e - b : 0)) throw SelectionError("output array size does not match the range");
        p.read_range_raw(array, b, e, datatype_of_array(out, "a particle read"), out.data());
      })
      .def("read_indices", [](const ParticleSpecies& p, const std::string& array, const std::vector<uint64_t>& idx,
                              Array out) {
        if (out.size() != idx.size()) throw SelectionError("output array size does not match the index list");
        p.read_indices_raw(array, idx, datatype_of_array(out, "a particle read"), out.data());
      });

  nb::class_<Field>(m, "Field")
      .def_prop_ro("name", &Field::name)
      .def_prop_ro("shape", &Field::global_shape)
      .def_prop_ro("components", &Field::components)
      .def_prop_ro("dtype", [](const Field& f) { return datatype_name(f.dtype()); })
      .def_prop_ro("origin", &Field::origin)
      .def_prop_ro("spacing", &Field::spacing)
      .def("write", [](Field& f, InArray local, const Dims& offset, uint64_t ghost, int component) {
        Dims shape(local.ndim());
        for (std::size_t k = 0; k < local.ndim(); ++k) shape[k] = local.shape(k);
        f.write_raw(datatype_of_array(local, "field '" + f.name() + "'"), local.data(), shape, offset, ghost, component);
      })
      .def("read", [](const Field& f, Array out, const Dims& lo, const Dims& count, uint64_t halo, nb::object fill,
                      int component) {
        Datatype t = datatype_of_array(out, "field '" + f.name() + "'");
        std::vector<unsigned char> fill_bytes(datatype_size(t), 0);
        InArray fa = as_array(fill, "the fill value");
        if (datatype_of_array(fa, "the fill value") != t || fa.size() != 1)
          throw DatatypeError("the fill value must be one element of the field's type " + datatype_name(t));
        std::memcpy(fill_bytes.data(), fa.data(), fill_bytes.size());
        f.read_raw(t, out.data(), lo, count, halo, fill_bytes.data(), component);
      });

  nb::class_<Step>(m, "Step")
      .def_prop_ro("index", &Step::index)
      .def_prop_ro("time", &Step::time)
      .def_prop_ro("dt", &Step::dt)
      .def("group", &Step::group)
      .def("is_layout_attribute", &Step::is_layout_attribute)
      .def("particles", &Step::particles)
      .def("particle_species", &Step::particle_species)
      .def("create_field", [](Step& st, const std::string& name, const Dims& shape, int components,
                              const std::string& dtype, const std::vector<double>& origin,
                              const std::vector<double>& spacing, const std::vector<std::string>& labels,
                              double unit_si) {
        FieldSpec spec;
        spec.global_shape = shape;
        spec.components = components;
        spec.dtype = datatype_from_name(dtype);
        spec.origin = origin;
        spec.spacing = spacing;
        spec.axis_labels = labels;
        spec.unit_si = unit_si;
        return st.field(name, spec);
      })
      .def("open_field", [](const Step& st, const std::string& name) { return st.field(name); })
      .def("fields", &Step::fields)
      .def("attribute_names", &Step::attribute_names)
      .def("close", &Step::close);

  nb::class_<Series>(m, "Series")
      .def_static("create", [](const std::string& name, const std::string& layout, std::optional<long long> comm_f,
                               const std::string& engine) {
        SeriesOptions o;
        o.file = options(comm_f, engine);
        o.layout = layout_from_name(layout);
        return Series::create(name, o);
      })
      .def_static("append", [](const std::string& name, std::optional<long long> comm_f, const std::string& engine) {
        return Series::append(name, options(comm_f, engine));
      })
      .def_static("open", [](const std::string& name, std::optional<long long> comm_f, const std::string& engine) {
        return Series::open(name, options(comm_f, engine));
      })
      .def_prop_ro("layout", [](const Series& s) { return layout_name(s.layout()); })
      .def("file", &Series::file, nb::rv_policy::reference_internal)
      .def("write_step", &Series::write_step, nb::arg("n"), nb::arg("time"), nb::arg("dt") = 0.0)
      .def("steps", &Series::steps)
      .def("step", &Series::step)
      .def("close", &Series::close);
}
