// The netCDF layer's classes for Python (h5loom.netcdf wraps them). Files and
// variables offer the attribute methods of h5loom's objects (set_attribute_*,
// attribute, attribute_names...), so the package's attribute dict serves them;
// attribute names come in netCDF's order (creation), bookkeeping left out.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <h5loom/netcdf.hpp>

#include "shared.hpp"

namespace nb = nanobind;
using namespace h5loom;
using h5loom::python::attribute_to_python;
using h5loom::python::datatype_of_array;
namespace nc = h5loom::netcdf;

namespace {

using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using OutArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

FileOptions file_options(std::optional<long long> comm_f, const std::string& engine) {
  ensure_mpi();
  FileOptions o;
  o.comm = comm_f ? MPI_Comm_f2c(static_cast<MPI_Fint>(*comm_f)) : MPI_COMM_WORLD;
  o.engine = engine;
  return o;
}

std::tuple<std::string, uint64_t, bool, int> dimension_tuple(const nc::Dimension& d) {
  return {d.name, d.length, d.unlimited, d.id};
}

// The attribute methods h5loom's AttributeManager calls, for a netCDF file or variable.
template <class Class, class Target>
void bind_attributes(Class& cls, Target target) {
  cls.def("set_attribute_string", [target](typename Class::Type& o, const std::string& name, const std::string& v) {
       target(o).set_attribute(name, AttributeValue(v));
     })
      .def("set_attribute_strings", [target](typename Class::Type& o, const std::string& name,
                                             const std::vector<std::string>& v) {
        target(o).set_attribute(name, AttributeValue(v));
      })
      .def("set_attribute_numeric", [target](typename Class::Type& o, const std::string& name, const InArray& a, bool) {
        const Datatype t = datatype_of_array(a, "attribute '" + name + "'");
        target(o).set_attribute(name, AttributeValue::from_raw(AttributeValue::Kind::Array, t, a.size(), a.data()));
      })
      .def("set_attribute_raw", [](typename Class::Type&, const std::string& name, const std::string& dtype,
                                   const nb::bytes&, bool) {
        throw DatatypeError("attribute '" + name + "': netCDF attributes hold numbers and text, not " + dtype);
      })
      .def("set_attribute_packed", [](typename Class::Type&, const std::string& name, const std::string& dtype,
                                      const nb::bytes&, std::size_t, bool) {
        throw DatatypeError("attribute '" + name + "': netCDF attributes hold numbers and text, not " + dtype);
      })
      .def("set_attribute_empty", [](typename Class::Type&, const std::string& name, const std::string&) {
        throw DatatypeError("attribute '" + name + "': netCDF attributes hold a value (no Empty)");
      })
      .def("attribute", [target](typename Class::Type& o, const std::string& name) {
        return attribute_to_python(target(o).attribute(name));
      })
      .def("has_attribute", [target](typename Class::Type& o, const std::string& name) {
        return target(o).has_attribute(name);
      })
      .def("attribute_names", [target](typename Class::Type& o) { return target(o).attribute_names(); })
      .def("attribute_names_in_creation_order", [target](typename Class::Type& o) { return target(o).attribute_names(); })
      .def("remove_attribute", [](typename Class::Type&, const std::string& name) {
        throw UsageError("attribute '" + name + "': the netCDF layer does not delete attributes");
      })
      .def("rename_attribute", [](typename Class::Type&, const std::string& name, const std::string&) {
        throw UsageError("attribute '" + name + "': the netCDF layer does not rename attributes");
      });
}

}  // namespace

void bind_netcdf(nb::module_& m) {
  auto var = nb::class_<nc::Variable>(m, "NcVariable");
  var.def_prop_ro("name", &nc::Variable::name)
      .def_prop_ro("path", [](const nc::Variable& v) { return "/" + v.name(); })
      .def_prop_ro("dtype", [](const nc::Variable& v) { return datatype_name(v.dtype()); })
      .def_prop_ro("dimensions", &nc::Variable::dimensions)
      .def_prop_ro("shape", &nc::Variable::shape)
      .def_prop_ro("is_record", &nc::Variable::is_record)
      .def_prop_ro("is_coordinate", &nc::Variable::is_coordinate)
      .def_prop_ro("fill_value", [](const nc::Variable& v) {
        const auto bytes = v.fill_value();
        return nb::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      })
      .def("set_fill_value", [](nc::Variable& v, const InArray& a) {
        const Datatype t = datatype_of_array(a, "the fill value of variable '" + v.name() + "'");
        v.set_attribute("_FillValue", AttributeValue::from_raw(AttributeValue::Kind::Array, t, a.size(), a.data()));
      })
      .def("write", [](nc::Variable& v, const Dims& start, const Dims& count, const InArray& a) {
        v.write_raw(start, count, datatype_of_array(a, "a write to variable '" + v.name() + "'"), a.data(), a.size());
      })
      .def("read", [](nc::Variable& v, const Dims& start, const Dims& count, OutArray out) {
        v.read_raw(start, count, datatype_of_array(out, "a read of variable '" + v.name() + "'"), out.data(),
                   out.size());
      })
      .def("dataset", &nc::Variable::dataset);
  bind_attributes(var, [](nc::Variable& v) -> nc::Variable& { return v; });

  auto file = nb::class_<nc::File>(m, "NcFile");
  file.def_static("create", [](const std::string& path, std::optional<long long> comm_f, const std::string& engine) {
        return nc::File::create(path, file_options(comm_f, engine));
      })
      .def_static("open", [](const std::string& path, bool writable, std::optional<long long> comm_f,
                             const std::string& engine) {
        return nc::File::open(path, writable ? Mode::ReadWrite : Mode::Read, file_options(comm_f, engine));
      })
      .def_prop_ro("path", [](const nc::File&) { return std::string("/"); })
      .def("define_dimension", [](nc::File& f, const std::string& name, uint64_t length) {
        return dimension_tuple(f.define_dimension(name, length));
      })
      .def("define_variable", [](nc::File& f, const std::string& name, const std::string& dtype,
                                 const std::vector<std::string>& dims, const Dims& chunks, int deflate, bool shuffle) {
        nc::VariableOptions o;
        o.chunks = chunks;
        o.deflate_level = deflate;
        o.shuffle = shuffle;
        return f.define_variable(name, datatype_from_name(dtype), dims, o);
      })
      .def("end_define", &nc::File::end_define)
      .def("redefine", &nc::File::redefine)
      .def_prop_ro("in_define_mode", &nc::File::in_define_mode)
      .def("dimensions", [](const nc::File& f) {
        std::vector<std::tuple<std::string, uint64_t, bool, int>> out;
        for (const auto& d : f.dimensions()) out.push_back(dimension_tuple(d));
        return out;
      })
      .def("variables", &nc::File::variables)
      .def_prop_ro("records", &nc::File::records)
      .def("set_records", &nc::File::set_records)
      .def("write_darray", [](nc::File& f, nc::Variable& v, pio::Rearrangement& r, uint64_t frame, const InArray& a) {
        f.write_darray(v, r, frame, datatype_of_array(a, "write_darray of variable '" + v.name() + "'"), a.data(),
                       a.size());
      })
      .def("read_darray", [](nc::File& f, nc::Variable& v, pio::Rearrangement& r, uint64_t frame, OutArray out) {
        f.read_darray(v, r, frame, datatype_of_array(out, "read_darray of variable '" + v.name() + "'"), out.data(),
                      out.size());
      })
      .def_prop_rw("darray_buffer_limit", &nc::File::darray_buffer_limit, &nc::File::set_darray_buffer_limit)
      .def("sync", &nc::File::sync)
      .def("close", &nc::File::close)
      .def("close_on_error", [](nc::File& f, const std::string& error) { f.storage().close_on_error(error); })
      .def_prop_ro("is_open", &nc::File::is_open)
      .def_prop_ro("filename", [](nc::File& f) { return f.storage().filename(); })
      .def_prop_ro("engine", [](nc::File& f) { return f.storage().engine_name(); });
  bind_attributes(file, [](nc::File& f) -> nc::File& { return f; });
}
