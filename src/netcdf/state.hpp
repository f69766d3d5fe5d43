// What a netCDF file handle holds (include/h5loom/netcdf.hpp's File and
// Variable share it): the definitions - dimensions by id, variables in
// definition order - and the h5loom file they live in. The parts of the layer
// (define.cpp, open.cpp, netcdf_file.cpp) work on it.
#pragma once

#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "h5loom/netcdf.hpp"

namespace h5loom::netcdf {

namespace detail {

struct DimState {
  std::string name;
  uint64_t length = 0;  // the unlimited one: records
  bool unlimited = false;
  int id = 0;
  bool in_file = false;                 // its scale dataset exists
  std::optional<std::size_t> coordinate;  // its coordinate variable
  std::string link;  // its scale's name, if not the dimension's (netCDF-C's "_nc4_non_coord_" ones)
  std::string scale_path() const { return "/" + (link.empty() ? name : link); }
};

struct VarState {
  std::string name;
  Datatype dtype;
  std::vector<int> dimids;
  VariableOptions options;
  // Attributes set before the dataset exists, in order (define mode).
  std::vector<std::pair<std::string, AttributeValue>> pending;
  std::optional<Dataset> dataset;  // once in the file
  bool coordinate = false;
};

struct NcState {
  std::optional<h5loom::File> file;
  bool define_mode = false;
  std::vector<DimState> dims;  // by id
  std::vector<VarState> vars;  // by definition order
  uint64_t darray_limit = 256u << 20;  // File::set_darray_buffer_limit
  uint64_t darray_buffered = 0;        // darray bytes (over all ranks) since the last flush point

  ~NcState() {
    // nc_close leaves define mode; a handle dropped without close does the same
    // (not while an exception unwinds: the ranks may not all be here).
    if (!file || !file->is_open() || !define_mode || std::uncaught_exceptions()) return;
    try {
      end_define();
      file->close();
    } catch (const std::exception& e) {
      std::cerr << "h5loom: netCDF file '" << file->filename() << "' dropped in define mode: " << e.what() << "\n";
    }
  }

  h5loom::File& f() {
    if (!file || !file->is_open()) throw UsageError("the netCDF file is closed");
    return *file;
  }
  std::string where() const { return file ? "netCDF file '" + file->filename() + "'" : "netCDF file"; }
  std::string where(const VarState& v) const { return "variable '" + v.name + "' of " + where(); }

  void require_define(const std::string& what) {
    f();
    if (!define_mode) throw UsageError("cannot " + what + " in " + where() + ": not in define mode (call redefine())");
  }
  void require_data(const std::string& what) {
    f();
    if (define_mode) throw UsageError("cannot " + what + " in " + where() + ": in define mode (call end_define())");
  }
  void require_writable(const std::string& what) {
    if (f().mode() == Mode::Read) throw ReadOnlyError("cannot " + what + ": " + where() + " is open read-only");
  }

  DimState* find_dim(const std::string& name) {
    for (auto& d : dims)
      if (d.name == name) return &d;
    return nullptr;
  }
  VarState* find_var(const std::string& name) {
    for (auto& v : vars)
      if (v.name == name) return &v;
    return nullptr;
  }
  const DimState* unlimited() const {
    for (const auto& d : dims)
      if (d.unlimited) return &d;
    return nullptr;
  }
  bool is_record(const VarState& v) const { return !v.dimids.empty() && dims.at(v.dimids[0]).unlimited; }

  Dims shape_of(const VarState& v) const {
    Dims shape;
    for (int id : v.dimids) shape.push_back(dims.at(id).length);
    return shape;
  }

  void end_define();
  void create_variable(VarState& v);
  void write_reference_lists(const std::vector<int>& dimids);
};

}  // namespace detail

namespace detail {

// Refuse a name netCDF cannot have (UsageError naming it and `where`).
void check_name(const std::string& name, const std::string& what, const std::string& where);
// ... and attribute names netCDF-4 keeps for itself.
void check_attribute_name(const std::string& name, const std::string& where);
// Refuse storage options that do not fit a variable of `ndims` dimensions.
void check_options(const VariableOptions& options, std::size_t ndims, const std::string& where);
// One element of the variable's type: its pending _FillValue, else netCDF's default.
std::vector<unsigned char> fill_of(const VarState& v);

}  // namespace detail

}  // namespace h5loom::netcdf
