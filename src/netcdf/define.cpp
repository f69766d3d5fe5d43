// netCDF's define mode (include/h5loom/netcdf.hpp): definitions are kept in
// the file's state until end_define, which creates the datasets and writes
// every dimension-scale attribute whole - the same bytes on every rank.
#include <algorithm>

#include "netcdf/conventions.hpp"
#include "netcdf/state.hpp"

namespace h5loom::netcdf {

namespace conv = conventions;

using detail::check_name;
using detail::fill_of;

void detail::check_name(const std::string& name, const std::string& what, const std::string& where) {
  std::string why;
  if (name.empty()) why = "it is empty";
  else if (name.find('/') != std::string::npos) why = "it holds a '/'";
  else if (std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
    why = "it holds a control character";
  else if (name.back() == ' ') why = "it ends with a space";
  if (!why.empty()) throw UsageError("invalid " + what + " name '" + name + "' in " + where + ": " + why);
}

void detail::check_attribute_name(const std::string& name, const std::string& where) {
  check_name(name, "attribute", where);
  if (conv::is_bookkeeping_attribute(name))
    throw UsageError("attribute name '" + name + "' on " + where + " is reserved by netCDF-4's conventions");
}

std::vector<unsigned char> detail::fill_of(const VarState& v) {
  for (const auto& [name, value] : v.pending)
    if (name == conv::kFillValue)
      return {static_cast<const unsigned char*>(value.data()),
              static_cast<const unsigned char*>(value.data()) + value.byte_size()};
  return conv::default_fill(v.dtype);
}

void detail::check_options(const VariableOptions& options, std::size_t ndims, const std::string& where) {
  if (!options.chunks.empty() && options.chunks.size() != ndims)
    throw UsageError(where + ": chunks " + dims_to_string(options.chunks) + " for " + std::to_string(ndims) +
                     " dimensions");
  for (uint64_t c : options.chunks)
    if (c == 0) throw UsageError(where + ": chunks " + dims_to_string(options.chunks) + " hold a 0");
  if (options.deflate_level < 0 || options.deflate_level > 9)
    throw UsageError(where + ": deflate level " + std::to_string(options.deflate_level) + " (0 to 9)");
}

namespace {

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
  }
  // 2. Every new variable's dataset, in definition order (netCDF's varids come
  // from the creation order); a coordinate variable is its dimension's scale.
  // All exist before any DIMENSION_LIST refers to them: a variable may be
  // defined before its dimension's coordinate variable.
  std::vector<VarState*> created;
  for (auto& v : vars) {
    if (v.dataset) continue;
    create_variable(v);
    created.push_back(&v);
    if (v.coordinate) {
      DimState& d = dims.at(v.dimids[0]);
      v.dataset->set_attribute(conv::kClass, conv::c_string(conv::kDimensionScale));
      v.dataset->set_attribute(conv::kName, conv::c_string(v.name));
      v.dataset->set_attribute(conv::kDimid, AttributeValue(int32_t(d.id)));
      d.in_file = true;
    }
  }
  // 3. Their dimensions and attributes.
  std::vector<int> attached;
  for (VarState* v : created) {
    // The dimension ids of its axes, as netCDF-C writes them (always agreeing with _Netcdf4Dimid).
    if (!v->dimids.empty()) v->dataset->set_attribute(conv::kCoordinates, AttributeValue(v->dimids));
    if (!v->coordinate && !v->dimids.empty()) {
      std::vector<ObjectRef> scales;
      for (int id : v->dimids) scales.push_back(file.reference(dims.at(id).scale_path()));
      v->dataset->set_attribute(conv::kDimensionList, conv::dimension_list(scales));
      attached.insert(attached.end(), v->dimids.begin(), v->dimids.end());
    }
    for (const auto& [name, value] : v->pending) v->dataset->set_attribute(name, value);
    v->pending.clear();
  }
  // 4. Each scale that gained a variable: its REFERENCE_LIST, whole.
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
  detail::check_options(options, dims.size(), where);
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

}  // namespace h5loom::netcdf
