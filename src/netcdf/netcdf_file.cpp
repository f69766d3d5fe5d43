// The netCDF layer (include/h5loom/netcdf.hpp): netCDF's define/data modes over
// h5loom's object model. What each piece looks like in HDF5 is in
// conventions.cpp; this file decides when it is written. Definitions are kept
// here until end_define, which creates the datasets and writes every
// dimension-scale attribute whole - the same bytes on every rank, so no rank
// ever rewrites another's metadata.
#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <iostream>
#include <map>
#include <optional>

#include "h5loom/netcdf.hpp"
#include "core/mpi_util.hpp"
#include "netcdf/conventions.hpp"

namespace h5loom::netcdf {

namespace conv = conventions;

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

namespace {

void check_name(const std::string& name, const std::string& what, const std::string& where) {
  std::string why;
  if (name.empty()) why = "it is empty";
  else if (name.find('/') != std::string::npos) why = "it holds a '/'";
  else if (std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
    why = "it holds a control character";
  else if (name.back() == ' ') why = "it ends with a space";
  if (!why.empty()) throw UsageError("invalid " + what + " name '" + name + "' in " + where + ": " + why);
}

void check_attribute_name(const std::string& name, const std::string& where) {
  check_name(name, "attribute", where);
  if (conv::is_bookkeeping_attribute(name))
    throw UsageError("attribute name '" + name + "' on " + where + " is reserved by netCDF-4's conventions");
}

void check_options(const VariableOptions& options, std::size_t ndims, const std::string& where) {
  if (!options.chunks.empty() && options.chunks.size() != ndims)
    throw UsageError(where + ": chunks " + dims_to_string(options.chunks) + " for " + std::to_string(ndims) +
                     " dimensions");
  for (uint64_t c : options.chunks)
    if (c == 0) throw UsageError(where + ": chunks " + dims_to_string(options.chunks) + " hold a 0");
  if (options.deflate_level < 0 || options.deflate_level > 9)
    throw UsageError(where + ": deflate level " + std::to_string(options.deflate_level) + " (0 to 9)");
}

// netCDF's default chunks for a record variable: one record, the rest whole,
// the slowest other dimensions halved until a chunk is at most 4 MiB.
Dims record_chunks(const Dims& shape, std::size_t element_size) {
  Dims chunks(shape.size());
  chunks[0] = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) chunks[i] = std::max<uint64_t>(shape[i], 1);
  constexpr uint64_t kMaxChunkBytes = 4u << 20;
  for (std::size_t i = 1; i < chunks.size(); ++i)
    while (product(chunks) * element_size > kMaxChunkBytes && chunks[i] > 1) chunks[i] = (chunks[i] + 1) / 2;
  return chunks;
}

// netCDF converts between its numeric types on reads and writes
// (nc_get_vara_double of a float variable); a value the target type cannot
// hold is NC_ERANGE - here a DatatypeError naming it, before anything moves.
void convert_numbers(Datatype from, const void* in, Datatype to, void* out, std::size_t n, const std::string& where) {
  dispatch_scalar(from.scalar(), [&](auto from_tag) {
    using From = decltype(from_tag);
    dispatch_scalar(to.scalar(), [&](auto to_tag) {
      using To = decltype(to_tag);
      const auto* src = static_cast<const From*>(in);
      auto* dst = static_cast<To*>(out);
      for (std::size_t i = 0; i < n; ++i) {
        const double x = double(src[i]);
        if constexpr (std::is_integral_v<To>) {
          if (!(x >= double(std::numeric_limits<To>::lowest()) && x <= double(std::numeric_limits<To>::max())))
            throw DatatypeError(where + ": value " + std::to_string(x) + " (element " + std::to_string(i) +
                                ") does not fit " + to.name() + " (netCDF's NC_ERANGE)");
          dst[i] = static_cast<To>(src[i]);
        } else {
          if (std::isfinite(x) && std::abs(x) > double(std::numeric_limits<To>::max()))
            throw DatatypeError(where + ": value " + std::to_string(x) + " (element " + std::to_string(i) +
                                ") does not fit " + to.name() + " (netCDF's NC_ERANGE)");
          dst[i] = static_cast<To>(x);
        }
      }
    });
  });
}

bool needs_conversion(const Datatype& memory, const Datatype& stored, const std::string& where) {
  if (memory.in_memory() == stored) return false;
  if (!conv::is_netcdf_numeric(memory) || !conv::is_netcdf_numeric(stored))
    throw DatatypeError(where + ": cannot convert between " + memory.name() + " and " + stored.name());
  return true;
}

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

std::vector<unsigned char> fill_of(const detail::VarState& v) {
  for (const auto& [name, value] : v.pending)
    if (name == conv::kFillValue)
      return {static_cast<const unsigned char*>(value.data()),
              static_cast<const unsigned char*>(value.data()) + value.byte_size()};
  return conv::default_fill(v.dtype);
}

}  // namespace

void detail::NcState::create_variable(VarState& v) {
  DatasetSpec spec;
  spec.dtype = v.dtype;
  spec.shape = shape_of(v);
  spec.max_shape = spec.shape;
  if (is_record(v)) spec.max_shape[0] = kUnlimited;
  spec.fill = fill_of(v);
  if (v.options.shuffle) spec.filters.push_back(Filter{Filter::kShuffle, {}, false, "shuffle"});
  if (v.options.deflate_level > 0)
    spec.filters.push_back(Filter{Filter::kDeflate, {uint32_t(v.options.deflate_level)}, false, "deflate"});
  if (!v.options.chunks.empty()) {
    spec.layout = Layout::Chunked;
    spec.chunks = v.options.chunks;
  } else if (is_record(v)) {
    spec.layout = Layout::Chunked;
    spec.chunks = record_chunks(spec.shape, v.dtype.size());
  } else if (!spec.filters.empty()) {
    spec.layout = Layout::Chunked;  // the engine picks the chunks
  }
  spec.layout_auto = false;
  v.dataset = f().create_dataset(v.name, spec);
}

void detail::NcState::end_define() {
  auto& file = f();
  std::vector<int> new_scales;
  // 1. Dimensions without a coordinate variable: a never-written scale each.
  for (auto& d : dims) {
    if (d.in_file || d.coordinate) continue;
    DatasetSpec spec;
    spec.dtype = Datatype::Float32.with_byte_order(ByteOrder::Big);  // what netCDF-C makes
    spec.shape = {d.length};
    spec.max_shape = {d.unlimited ? kUnlimited : d.length};
    spec.layout = d.unlimited ? Layout::Chunked : Layout::Contiguous;
    if (d.unlimited) spec.chunks = {1};
    spec.layout_auto = false;
    Dataset scale = file.create_dataset(d.name, spec);
    scale.set_attribute(conv::kClass, conv::c_string(conv::kDimensionScale));
    scale.set_attribute(conv::kName, conv::c_string(conv::not_a_variable_name(d.length)));
    scale.set_attribute(conv::kDimid, AttributeValue(int32_t(d.id)));
    d.in_file = true;
    new_scales.push_back(d.id);
  }
  // 2. Variables, in definition order; a coordinate variable is its dimension's scale.
  std::vector<int> attached;
  for (auto& v : vars) {
    if (v.dataset) continue;
    create_variable(v);
    // The dimension ids of its axes, as netCDF-C writes them (always agreeing with _Netcdf4Dimid).
    if (!v.dimids.empty()) v.dataset->set_attribute(conv::kCoordinates, AttributeValue(v.dimids));
    if (v.coordinate) {
      DimState& d = dims.at(v.dimids[0]);
      v.dataset->set_attribute(conv::kClass, conv::c_string(conv::kDimensionScale));
      v.dataset->set_attribute(conv::kName, conv::c_string(v.name));
      v.dataset->set_attribute(conv::kDimid, AttributeValue(int32_t(d.id)));
      d.in_file = true;
    } else if (!v.dimids.empty()) {
      std::vector<ObjectRef> scales;
      for (int id : v.dimids) scales.push_back(file.reference(dims.at(id).scale_path()));
      v.dataset->set_attribute(conv::kDimensionList, conv::dimension_list(scales));
      attached.insert(attached.end(), v.dimids.begin(), v.dimids.end());
    }
    for (const auto& [name, value] : v.pending) v.dataset->set_attribute(name, value);
    v.pending.clear();
  }
  // 3. Each scale that gained a variable: its REFERENCE_LIST, whole.
  std::sort(attached.begin(), attached.end());
  attached.erase(std::unique(attached.begin(), attached.end()), attached.end());
  write_reference_lists(attached);
  define_mode = false;
}

void detail::NcState::write_reference_lists(const std::vector<int>& dimids) {
  auto& file = f();
  for (int id : dimids) {
    std::vector<conv::ScaleUse> uses;
    for (const auto& v : vars) {
      if (v.coordinate || !v.dataset) continue;
      for (std::size_t axis = 0; axis < v.dimids.size(); ++axis)
        if (v.dimids[axis] == id) uses.push_back({file.reference("/" + v.name), int(axis)});
    }
    if (uses.empty()) continue;
    file.dataset(dims.at(id).scale_path()).set_attribute(conv::kReferenceList, conv::reference_list(uses));
  }
}

// ---------------------------------------------------------------- opening

namespace {

// netCDF-C names a dimension's scale so when a variable that is not its
// coordinate variable has the dimension's name.
constexpr const char* kNonCoordPrefix = "_nc4_non_coord_";

std::optional<int> int_attribute(const Dataset& ds, const char* name) {
  if (!ds.has_attribute(name)) return std::nullopt;
  const AttributeValue v = ds.attribute(name);
  if (!v.is_numeric() || v.size() != 1)
    throw CorruptionError("attribute '" + std::string(name) + "' of '" + ds.path() + "' should be one integer, not " +
                          v.to_string());
  return v.as<int>();
}

bool is_scale(const Dataset& ds) {
  if (!ds.has_attribute(conv::kClass)) return false;
  return conv::text_of(ds.attribute(conv::kClass)) == std::string(conv::kDimensionScale);
}

}  // namespace

File File::open(const std::string& path, Mode mode, const FileOptions& options) {
  auto state = std::make_shared<detail::NcState>();
  state->file = h5loom::File::open(path, mode, options);
  h5loom::File& file = *state->file;
  const std::vector<std::string> members = file.supports("order") ? file.list_in_creation_order() : file.list();

  struct Found {
    std::string link;
    Dataset ds;
  };
  std::vector<Found> datasets;
  for (const auto& name : members)
    if (file.kind(name) == ObjectKind::Dataset) datasets.push_back({name, file.dataset(name)});

  // Dimensions: the scales, by _Netcdf4Dimid, else in the order met.
  std::map<std::string, int> dim_of_path;  // scale path -> id
  std::vector<std::pair<std::optional<int>, detail::DimState>> scales;
  for (const auto& [link, ds] : datasets) {
    if (!is_scale(ds) || ds.ndim() != 1) continue;
    detail::DimState d;
    d.name = link.rfind(kNonCoordPrefix, 0) == 0 ? link.substr(std::strlen(kNonCoordPrefix)) : link;
    d.length = ds.shape()[0];
    d.unlimited = ds.max_shape()[0] == kUnlimited;
    d.in_file = true;
    if (d.name != link) d.link = link;
    scales.emplace_back(int_attribute(ds, conv::kDimid), std::move(d));
  }
  int next_id = 0;
  for (const auto& s : scales)
    if (s.first) next_id = std::max(next_id, *s.first + 1);
  std::map<int, detail::DimState> by_id;
  for (auto& [id, d] : scales) {
    d.id = id ? *id : next_id++;
    if (d.id < 0 || by_id.count(d.id))
      throw CorruptionError("netCDF file '" + path + "': dimension '" + d.name + "' has the id " +
                            std::to_string(d.id) + (d.id < 0 ? "" : ", which another dimension has"));
    by_id.emplace(d.id, d);
  }
  for (auto& [id, d] : by_id) {
    if (id != int(state->dims.size()))
      throw CorruptionError("netCDF file '" + path + "': dimension ids are not 0.." +
                            std::to_string(by_id.size() - 1) + " (dimension '" + d.name + "' has " +
                            std::to_string(id) + ")");
    dim_of_path[d.scale_path()] = id;
    state->dims.push_back(d);
  }

  // Variables: every dataset but the hidden scales, in the order met.
  for (const auto& [link, ds] : datasets) {
    const bool scale = is_scale(ds) && ds.ndim() == 1;
    if (scale && ds.has_attribute(conv::kName) && conv::names_a_hidden_dimension(ds.attribute(conv::kName))) continue;
    detail::VarState v;
    v.name = link;
    v.dtype = ds.dtype().in_memory();
    v.dataset = ds;
    const std::string where = "variable '" + link + "' of netCDF file '" + path + "'";
    if (scale) {
      v.coordinate = true;
      v.dimids = {dim_of_path.at("/" + link)};
      state->dims.at(v.dimids[0]).coordinate = state->vars.size();
    } else if (ds.has_attribute(conv::kDimensionList)) {
      for (ObjectRef ref : conv::read_dimension_list(ds.attribute(conv::kDimensionList), where)) {
        const std::string target = file.dereference(ref);
        auto it = dim_of_path.find(target);
        if (it == dim_of_path.end())
          throw CorruptionError(where + ": its DIMENSION_LIST names '" + target + "', which is not a dimension scale");
        v.dimids.push_back(it->second);
      }
    } else if (ds.has_attribute(conv::kCoordinates)) {
      for (int id : ds.attribute(conv::kCoordinates).as_vector<int>()) {
        if (id < 0 || id >= int(state->dims.size()))
          throw CorruptionError(where + ": _Netcdf4Coordinates names dimension id " + std::to_string(id) +
                                ", and the file has " + std::to_string(state->dims.size()));
        v.dimids.push_back(id);
      }
    } else if (ds.ndim() != 0) {
      throw ConfigError(where + " has no dimension scales (DIMENSION_LIST) and no _Netcdf4Coordinates: not a "
                        "netCDF-4 variable (a file written with NC_NODIMSCALE_ATTACH, or plain HDF5)");
    }
    if (v.dimids.size() != ds.ndim())
      throw CorruptionError(where + " has " + std::to_string(ds.ndim()) + " dimensions and its dimension list names " +
                            std::to_string(v.dimids.size()));
    state->vars.push_back(std::move(v));
  }
  // The record dimension's length: its longest variable (netCDF-C's rule).
  for (auto& v : state->vars)
    if (state->is_record(v)) {
      auto& d = state->dims.at(v.dimids[0]);
      d.length = std::max(d.length, v.dataset->shape()[0]);
    }
  return File(std::move(state));
}

File File::create(const std::string& path, const FileOptions& options) {
  auto state = std::make_shared<detail::NcState>();
  state->file = h5loom::File::create(path, options);
  h5loom::File& file = *state->file;
  for (const char* group : {"references", "order"})
    if (!file.supports(group)) {
      const std::string engine = file.engine_name();
      file.close();
      throw UsageError("netCDF file '" + path + "': engine " + engine + " cannot hold netCDF-4's dimension scales (it lacks the conformance group '" +
                       group + "'); use an engine that writes HDF5 files (hdf5, log)");
    }
  file.set_attribute(conv::kProperties, conv::c_string(conv::properties_text()));
  state->define_mode = true;
  return File(std::move(state));
}

// ---------------------------------------------------------------- define mode

Dimension File::define_dimension(const std::string& name, uint64_t length) {
  auto& s = *state_;
  s.require_define("define dimension '" + name + "'");
  check_name(name, "dimension", s.where());
  if (s.find_dim(name)) throw ExistsError("dimension '" + name + "' already exists in " + s.where());
  if (s.find_var(name))
    throw UsageError("dimension '" + name + "' in " + s.where() +
                     ": a variable has that name; define the dimension first, then its coordinate variable");
  const bool unlimited = length == kUnlimitedLength;
  if (unlimited && s.unlimited())
    throw UsageError("dimension '" + name + "' in " + s.where() + ": '" + s.unlimited()->name +
                     "' is already the unlimited dimension (one per file here)");
  detail::DimState d;
  d.name = name;
  d.length = unlimited ? 0 : length;
  d.unlimited = unlimited;
  d.id = int(s.dims.size());
  s.dims.push_back(d);
  return dimension(name);
}

Variable File::define_variable(const std::string& name, const Datatype& dtype, const std::vector<std::string>& dims,
                               const VariableOptions& options) {
  auto& s = *state_;
  s.require_define("define variable '" + name + "'");
  check_name(name, "variable", s.where());
  const std::string where = "variable '" + name + "' of " + s.where();
  if (s.find_var(name)) throw ExistsError(where + " already exists");
  if (!conv::is_netcdf_numeric(dtype))
    throw DatatypeError(where + ": netCDF has no type " + dtype.name() +
                        " (int8, uint8, int16, uint16, int32, uint32, int64, uint64, float32, float64)");
  if (dims.empty())
    throw UsageError(where + ": scalar variables (no dimensions) are not supported yet - h5loom's datasets have at "
                     "least one dimension; give it a dimension of length 1");
  if (dims.size() > kMaxRank)
    throw UsageError(where + ": " + std::to_string(dims.size()) + " dimensions, more than " + std::to_string(kMaxRank));
  detail::VarState v;
  v.name = name;
  v.dtype = dtype.in_memory();
  v.options = options;
  for (std::size_t axis = 0; axis < dims.size(); ++axis) {
    const detail::DimState* d = s.find_dim(dims[axis]);
    if (!d) throw NotFoundError(where + ": no dimension '" + dims[axis] + "'");
    if (d->unlimited && axis != 0)
      throw UsageError(where + ": the unlimited dimension '" + d->name + "' can only be the first (it is axis " +
                       std::to_string(axis) + ")");
    v.dimids.push_back(d->id);
  }
  if (detail::DimState* d = s.find_dim(name)) {
    if (dims.size() != 1 || dims[0] != name)
      throw UsageError(where + ": dimension '" + name +
                       "' has this name, so the variable must be its coordinate variable, 1-D over it");
    if (d->in_file)
      throw UsageError(where + ": dimension '" + name +
                       "' was written in an earlier define mode; define its coordinate variable with it");
    v.coordinate = true;
    d->coordinate = s.vars.size();
  }
  check_options(options, dims.size(), where);
  s.vars.push_back(std::move(v));
  return Variable(state_, s.vars.size() - 1);
}

void File::end_define() {
  state_->require_define("end define mode");
  state_->end_define();
}

void File::redefine() {
  auto& s = *state_;
  s.require_writable("enter define mode");
  if (s.define_mode) throw UsageError(s.where() + " is already in define mode");
  s.f().flush(FlushLevel::Visible);  // writes before the new definitions
  s.define_mode = true;
}

bool File::in_define_mode() const { return state_->define_mode; }

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
  if (n == d->length) return;
  d->length = n;
  for (auto& v : s.vars)
    if (s.is_record(v)) v.dataset->extend(s.shape_of(v));
  if (!d->coordinate) s.f().dataset(d->scale_path()).extend({n});
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
  if (s.is_record(v) && frame >= records()) set_records(frame + 1);
  std::vector<unsigned char> converted;
  const void* data = in_stored_type(s, v, dtype, local, n, converted, s.f().comm());
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
  check_options(options, v.dimids.size(), s.where(v));
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

void Variable::read_raw(const Dims& start, const Dims& count, Datatype dtype, void* out, std::size_t n) const {
  auto& s = *file_;
  const auto& v = s.vars.at(index_);
  s.require_data("read " + s.where(v));
  Dataset ds = *v.dataset;  // a handle: reading does not change the variable
  const std::string where = "read of " + s.where(v);
  if (needs_conversion(dtype, v.dtype, where)) {
    std::vector<unsigned char> stored(n * v.dtype.size());
    ds.read_raw(selection(start, count), v.dtype, stored.data(), n);
    // A value out of range on one rank is an error on every rank: the read was collective.
    mpi::agree(s.f().comm(), [&] { convert_numbers(v.dtype, stored.data(), dtype, out, n, where); });
    return;
  }
  ds.read_raw(selection(start, count), dtype, out, n);
}

Dataset Variable::dataset() const {
  const auto& v = file_->vars.at(index_);
  if (!v.dataset) throw UsageError(file_->where(v) + " is not in the file yet (call end_define())");
  return *v.dataset;
}

}  // namespace h5loom::netcdf
