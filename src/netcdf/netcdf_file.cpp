// The netCDF layer (include/h5loom/netcdf.hpp): netCDF's define/data modes over
// h5loom's object model. What each piece looks like in HDF5 is in
// conventions.cpp; when it is written, in define.cpp: definitions are kept
// until end_define, which creates the datasets and writes every
// dimension-scale attribute whole - the same bytes on every rank, so no rank
// ever rewrites another's metadata. open.cpp reads a file's definitions back.
#include <algorithm>

#include "core/mpi_util.hpp"
#include "netcdf/conventions.hpp"
#include "netcdf/conversion.hpp"
#include "netcdf/state.hpp"

namespace h5loom::netcdf {

namespace conv = conventions;

using detail::check_attribute_name;
using detail::fill_of;

namespace {

// Attribute names in creation order where the object records it (netCDF-C
// and h5loom files do; objects other writers added may not), else by name;
// netCDF-4's bookkeeping left out.
std::vector<std::string> user_attribute_names(const h5loom::File& file, const Object& object) {
  std::vector<std::string> names;
  try {
    names = file.supports("order") ? object.attribute_names_in_creation_order() : object.attribute_names();
  } catch (const UsageError&) {  // not recorded for this object: the same on every rank
    names = object.attribute_names();
  }
  names.erase(std::remove_if(names.begin(), names.end(), conv::is_bookkeeping_attribute), names.end());
  return names;
}

// An attribute as the layer gives it back: text as a string, a list of
// fixed-length strings as a list (engines keep how HDF5 stored them).
AttributeValue user_value(const AttributeValue& v) {
  if (auto text = conv::text_of(v)) return AttributeValue(*text);
  if (v.kind() == AttributeValue::Kind::Array && v.dtype().is_string()) return AttributeValue(v.as_strings());
  return v;
}

}  // namespace

// ---------------------------------------------------------------- attributes

void File::set_attribute(const std::string& name, const AttributeValue& value) {
  auto& s = *state_;
  s.require_writable("set attribute '" + name + "'");
  check_attribute_name(name, s.where());
  if (name == conv::kFillValue) throw UsageError("_FillValue is a variable's attribute, not a global one (" + s.where() + ")");
  s.f().set_attribute(name, conv::stored_attribute(value, "global attribute '" + name + "' of " + s.where()));
}
AttributeValue File::attribute(const std::string& name) const { return user_value(state_->f().attribute(name)); }
bool File::has_attribute(const std::string& name) const { return state_->f().has_attribute(name); }
std::vector<std::string> File::attribute_names() const {
  auto& f = state_->f();
  return user_attribute_names(f, f);
}

// ---------------------------------------------------------------- lookups

std::vector<Dimension> File::dimensions() const {
  std::vector<Dimension> out;
  for (const auto& d : state_->dims) out.push_back(dimension(d.name));
  return out;
}

Dimension File::dimension(const std::string& name) const {
  const detail::DimState* d = state_->find_dim(name);
  if (!d) throw NotFoundError("no dimension '" + name + "' in " + state_->where());
  return Dimension{d->name, d->length, d->unlimited, d->id};
}

std::vector<Variable> File::variables() const {
  std::vector<Variable> out;
  for (std::size_t i = 0; i < state_->vars.size(); ++i) out.push_back(Variable(state_, i));
  return out;
}

Variable File::variable(const std::string& name) const {
  for (std::size_t i = 0; i < state_->vars.size(); ++i)
    if (state_->vars[i].name == name) return Variable(state_, i);
  throw NotFoundError("no variable '" + name + "' in " + state_->where());
}

bool File::has_variable(const std::string& name) const { return state_->find_var(name) != nullptr; }

// ---------------------------------------------------------------- data mode

uint64_t File::records() const {
  const detail::DimState* d = state_->unlimited();
  return d ? d->length : 0;
}

void File::set_records(uint64_t n) {
  auto& s = *state_;
  s.require_data("set the number of records");
  s.require_writable("set the number of records");
  detail::DimState* d = const_cast<detail::DimState*>(s.unlimited());
  if (!d) throw UsageError(s.where() + " has no unlimited dimension");
  if (n < d->length)
    throw UsageError(s.where() + ": " + std::to_string(n) + " records, fewer than the " + std::to_string(d->length) +
                     " of dimension '" + d->name + "' (records never shrink)");
  d->length = n;
  // Every record variable that is shorter (in netCDF-C's files they may differ), and the scale.
  for (auto& v : s.vars)
    if (s.is_record(v) && v.dataset->shape()[0] < n) v.dataset->extend(s.shape_of(v));
  if (!d->coordinate) {
    Dataset scale = s.f().dataset(d->scale_path());
    if (scale.shape()[0] < n) scale.extend({n});
  }
}

// ---------------------------------------------------------------- darrays

namespace {

// The variable's data in the type it is stored in: `local` itself, or converted
// into `converted` (every rank agrees on an NC_ERANGE: the call is collective).
const void* in_stored_type(const detail::NcState& s, const detail::VarState& v, Datatype dtype, const void* local,
                           std::size_t n, std::vector<unsigned char>& converted, MPI_Comm comm) {
  const std::string where = "write_darray of " + s.where(v);
  if (!needs_conversion(dtype, v.dtype, where)) return local;
  converted.resize(n * v.dtype.size());
  mpi::agree(comm, [&] { convert_numbers(dtype, local, v.dtype, converted.data(), n, where); });
  return converted.data();
}

}  // namespace

void File::write_darray(Variable& var, pio::Rearrangement& r, uint64_t frame, Datatype dtype, const void* local,
                        std::size_t n) {
  auto& s = *state_;
  auto& v = s.vars.at(var.index_);
  s.require_data("write_darray of " + s.where(v));
  s.require_writable("write_darray of " + s.where(v));
  if (!s.is_record(v) && frame != 0)
    throw UsageError("write_darray of " + s.where(v) + ": frame " + std::to_string(frame) +
                     ", and the variable has no record dimension (frame 0)");
  // Converted first: a value out of range changes nothing, the records included.
  std::vector<unsigned char> converted;
  const void* data = in_stored_type(s, v, dtype, local, n, converted, s.f().comm());
  if (s.is_record(v) && frame >= records()) set_records(frame + 1);
  Dataset ds = *v.dataset;
  r.write_raw(ds, v.dtype, data, n, s.is_record(v) ? frame : 0);
  // What every rank knows alike - a record's size - decides the flush, so
  // the ranks flush together without asking each other.
  Dims record = s.shape_of(v);
  if (s.is_record(v)) record.erase(record.begin());
  s.darray_buffered += product(record) * v.dtype.size();
  if (s.darray_buffered >= s.darray_limit) {
    s.f().flush(FlushLevel::Visible);
    s.darray_buffered = 0;
  }
}

void File::read_darray(Variable& var, pio::Rearrangement& r, uint64_t frame, Datatype dtype, void* local,
                       std::size_t n) {
  auto& s = *state_;
  auto& v = s.vars.at(var.index_);
  s.require_data("read_darray of " + s.where(v));
  const std::string where = "read_darray of " + s.where(v);
  Dataset ds = *v.dataset;
  if (!needs_conversion(dtype, v.dtype, where)) return r.read_raw(ds, dtype, local, n, s.is_record(v) ? frame : 0);
  std::vector<unsigned char> stored(n * v.dtype.size());
  r.read_raw(ds, v.dtype, stored.data(), n, s.is_record(v) ? frame : 0);
  mpi::agree(s.f().comm(), [&] { convert_numbers(v.dtype, stored.data(), dtype, local, n, where); });
}

void File::set_darray_buffer_limit(uint64_t bytes) { state_->darray_limit = bytes; }
uint64_t File::darray_buffer_limit() const { return state_->darray_limit; }

void File::sync() {
  state_->f().flush(FlushLevel::Durable);
  state_->darray_buffered = 0;
}

void File::close() {
  auto& s = *state_;
  if (!s.file || !s.file->is_open()) return;
  if (s.define_mode) s.end_define();
  s.file->close();
}

bool File::is_open() const { return state_->file && state_->file->is_open(); }

h5loom::File& File::storage() { return state_->f(); }

// ---------------------------------------------------------------- variables

std::vector<unsigned char> default_fill_value(const Datatype& dtype) { return conv::default_fill(dtype); }

const std::string& Variable::name() const { return file_->vars.at(index_).name; }
Datatype Variable::dtype() const { return file_->vars.at(index_).dtype; }
bool Variable::is_record() const { return file_->is_record(file_->vars.at(index_)); }
bool Variable::is_coordinate() const { return file_->vars.at(index_).coordinate; }

std::vector<std::string> Variable::dimensions() const {
  std::vector<std::string> out;
  for (int id : file_->vars.at(index_).dimids) out.push_back(file_->dims.at(id).name);
  return out;
}

Dims Variable::shape() const { return file_->shape_of(file_->vars.at(index_)); }

void Variable::set_attribute(const std::string& name, const AttributeValue& value) {
  auto& s = *file_;
  auto& v = s.vars.at(index_);
  const std::string where = s.where(v);
  s.require_writable("set attribute '" + name + "' of " + where);
  check_attribute_name(name, where);
  AttributeValue stored = conv::stored_attribute(value, "attribute '" + name + "' of " + where);
  if (name == conv::kFillValue) {
    if (!stored.is_numeric() || stored.dtype() != v.dtype || stored.size() != 1)
      throw DatatypeError("_FillValue of " + where + " must be one " + v.dtype.name() + ", not " + value.to_string());
    if (v.dataset)
      throw UsageError("_FillValue of " + where +
                       " is fixed once the variable is in the file (netCDF's NC_ELATEFILL): set it before end_define");
  }
  if (v.dataset) {
    v.dataset->set_attribute(name, stored);
    return;
  }
  auto it = std::find_if(v.pending.begin(), v.pending.end(), [&](const auto& p) { return p.first == name; });
  if (it != v.pending.end()) v.pending.erase(it);  // a replaced attribute is the newest, as in HDF5
  v.pending.emplace_back(name, std::move(stored));
}

AttributeValue Variable::attribute(const std::string& name) const {
  const auto& v = file_->vars.at(index_);
  if (v.dataset) return user_value(v.dataset->attribute(name));
  for (const auto& [n, value] : v.pending)
    if (n == name) return user_value(value);
  throw NotFoundError("no attribute '" + name + "' on " + file_->where(v));
}

bool Variable::has_attribute(const std::string& name) const {
  const auto& v = file_->vars.at(index_);
  if (v.dataset) return v.dataset->has_attribute(name);
  return std::any_of(v.pending.begin(), v.pending.end(), [&](const auto& p) { return p.first == name; });
}

std::vector<std::string> Variable::attribute_names() const {
  const auto& v = file_->vars.at(index_);
  std::vector<std::string> names;
  if (v.dataset) {
    names = user_attribute_names(file_->f(), *v.dataset);
  } else {
    for (const auto& p : v.pending) names.push_back(p.first);
  }
  return names;
}

std::vector<unsigned char> Variable::fill_value() const {
  const auto& v = file_->vars.at(index_);
  if (v.dataset) {
    if (v.dataset->has_attribute(conv::kFillValue)) {
      const AttributeValue a = v.dataset->attribute(conv::kFillValue);
      return {static_cast<const unsigned char*>(a.data()), static_cast<const unsigned char*>(a.data()) + a.byte_size()};
    }
    return conv::is_netcdf_numeric(v.dtype) ? conv::default_fill(v.dtype) : v.dataset->fill_value();
  }
  return fill_of(v);
}

void Variable::set_storage(const VariableOptions& options) {
  auto& s = *file_;
  auto& v = s.vars.at(index_);
  s.require_define("set the storage of " + s.where(v));
  if (v.dataset)
    throw UsageError("the storage of " + s.where(v) + " is fixed once the variable is in the file: set it before end_define");
  detail::check_options(options, v.dimids.size(), s.where(v));
  v.options = options;
}

VariableOptions Variable::storage() const { return file_->vars.at(index_).options; }

Selection Variable::selection(const Dims& start, const Dims& count) const {
  if (start.empty() && count.empty()) return Selection::all();
  const auto& v = file_->vars.at(index_);
  if (start.size() != v.dimids.size() || count.size() != v.dimids.size())
    throw SelectionError(file_->where(v) + " has " + std::to_string(v.dimids.size()) + " dimensions: start " +
                         dims_to_string(start) + " and count " + dims_to_string(count) + " do not match");
  if (product(count) == 0) return Selection::none();
  return Selection::box(start, count);
}

void Variable::write_raw(const Dims& start, const Dims& count, Datatype dtype, const void* data, std::size_t n) {
  auto& s = *file_;
  auto& v = s.vars.at(index_);
  s.require_data("write " + s.where(v));
  const Selection sel = selection(start, count);
  const Dims shape = s.shape_of(v);
  if (s.is_record(v) && sel.kind() == Selection::Kind::Hyperslab && start[0] + count[0] > shape[0])
    throw SelectionError("write of records [" + std::to_string(start[0]) + ", " + std::to_string(start[0] + count[0]) +
                         ") of " + s.where(v) + ": dimension '" + s.dims.at(v.dimids[0]).name + "' has " +
                         std::to_string(shape[0]) + " records; call set_records(" +
                         std::to_string(start[0] + count[0]) + ") first (collective)");
  if (needs_conversion(dtype, v.dtype, "write of " + s.where(v))) {
    auto converted = std::make_shared<std::vector<unsigned char>>(n * v.dtype.size());
    convert_numbers(dtype, data, v.dtype, converted->data(), n, "write of " + s.where(v));
    v.dataset->write_raw(sel, v.dtype, converted->data(), n, std::shared_ptr<const void>(converted, converted->data()));
    return;
  }
  v.dataset->write_raw(sel, dtype, data, n, /*copy=*/true);
}

std::size_t Variable::read_size(const Dims& start, const Dims& count) const {
  // Each rank's box, checked on every rank before any reads: a bad one raises everywhere.
  std::size_t n = 0;
  mpi::agree(file_->f().comm(), [&] { n = selection(start, count).num_elements(shape()); });
  return n;
}

void Variable::read_raw(const Dims& start, const Dims& count, Datatype dtype, void* out, std::size_t n) const {
  auto& s = *file_;
  const auto& v = s.vars.at(index_);
  s.require_data("read " + s.where(v));
  Dataset ds = *v.dataset;  // a handle: reading does not change the variable
  const std::string where = "read of " + s.where(v);
  Selection sel = Selection::none();
  bool convert = false;
  mpi::agree(s.f().comm(), [&] {
    sel = selection(start, count);
    convert = needs_conversion(dtype, v.dtype, where);
  });
  if (convert) {
    std::vector<unsigned char> stored(n * v.dtype.size());
    ds.read_raw(sel, v.dtype, stored.data(), n);
    // A value out of range on one rank is an error on every rank: the read was collective.
    mpi::agree(s.f().comm(), [&] { convert_numbers(v.dtype, stored.data(), dtype, out, n, where); });
    return;
  }
  ds.read_raw(sel, dtype, out, n);
}

Dataset Variable::dataset() const {
  const auto& v = file_->vars.at(index_);
  if (!v.dataset) throw UsageError(file_->where(v) + " is not in the file yet (call end_define())");
  return *v.dataset;
}

}  // namespace h5loom::netcdf
