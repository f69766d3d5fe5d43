// Series, steps, particles and block fields: the bookkeeping H5Part users
// expect (global sizes, offsets, ghost zones, halos) over the object model.
// Everything goes through File/Group/Dataset, so it works on every engine.
#include "h5loom/series.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "veneer/layouts.hpp"

namespace h5loom {

namespace detail {
struct SeriesState {
  File file;
  std::unique_ptr<LayoutRules> rules;
  std::optional<uint64_t> open_step;
  std::map<uint64_t, std::string> h5part_species;  // the one species name used per h5part step
  explicit SeriesState(File f) : file(std::move(f)) {}
  std::string where() const { return "series '" + file.filename() + "'"; }
};
}  // namespace detail

using detail::SeriesState;

std::string layout_name(SeriesLayout layout) { return layout == SeriesLayout::H5Part ? "h5part" : "openpmd"; }

SeriesLayout layout_from_name(const std::string& name) {
  if (name == "openpmd" || name == "openPMD") return SeriesLayout::OpenPMD;
  if (name == "h5part" || name == "H5Part") return SeriesLayout::H5Part;
  throw ConfigError("unknown series layout '" + name + "' (use 'openpmd' or 'h5part')");
}

// ---- Series -------------------------------------------------------------------

Series Series::create(const std::string& filename, const SeriesOptions& options) {
  auto st = std::make_shared<SeriesState>(File::create(filename, options.file));
  st->rules = detail::make_layout(options.layout);
  st->rules->init_file(st->file);
  return Series(st);
}

Series Series::append(const std::string& filename, const FileOptions& options) {
  auto st = std::make_shared<SeriesState>(File::open(filename, Mode::ReadWrite, options));
  st->rules = detail::make_layout(detail::detect_layout(st->file));
  return Series(st);
}

Series Series::open(const std::string& filename, const FileOptions& options) {
  auto st = std::make_shared<SeriesState>(File::open(filename, Mode::Read, options));
  st->rules = detail::make_layout(detail::detect_layout(st->file));
  return Series(st);
}

SeriesLayout Series::layout() const { return state_->rules->kind(); }
File& Series::file() { return state_->file; }

void Series::set_attribute(const std::string& name, const AttributeValue& value) {
  state_->file.set_attribute(name, value);
}
AttributeValue Series::attribute(const std::string& name) const { return state_->file.attribute(name); }

Step Series::write_step(uint64_t n, double time, double dt) {
  auto& st = *state_;
  if (st.file.mode() == Mode::Read)
    throw ReadOnlyError("cannot write step " + std::to_string(n) + ": " + st.where() + " is open read-only");
  if (st.open_step) Step(state_, *st.open_step).close();
  st.rules->check_new_step(steps(), n, st.file.filename());
  Group g = st.file.create_group(st.rules->step_path(n));
  st.rules->init_step(g, time, dt);
  st.open_step = n;
  return Step(state_, n);
}

std::vector<uint64_t> Series::steps() const { return state_->rules->list_steps(state_->file); }

Step Series::step(uint64_t n) const {
  auto& st = *state_;
  if (st.file.kind(st.rules->step_path(n)) != ObjectKind::Group) {
    auto all = steps();
    std::string range = all.empty() ? "none" : std::to_string(all.front()) + ".." + std::to_string(all.back()) +
                                                   " (" + std::to_string(all.size()) + " steps)";
    throw NotFoundError("step " + std::to_string(n) + " not found in " + st.where() + "; it has " + range);
  }
  return Step(state_, n);
}

void Series::close() {
  if (state_->open_step && state_->file.is_open()) Step(state_, *state_->open_step).close();
  state_->file.close();
}

// ---- Step ---------------------------------------------------------------------

Group Step::group() const { return series_->file.group(series_->rules->step_path(index_)); }
double Step::time() const { return series_->rules->step_time(group()); }
double Step::dt() const { return series_->rules->step_dt(group()); }

bool Step::is_layout_attribute(const std::string& name) const {
  return series_->rules->is_layout_step_attribute(name);
}

void Step::set_attribute(const std::string& name, const AttributeValue& value) {
  if (is_layout_attribute(name))
    throw UsageError("step attribute '" + name + "' belongs to the " + layout_name(series_->rules->kind()) +
                     " layout; set time and dt through write_step");
  group().set_attribute(name, value);
}
AttributeValue Step::attribute(const std::string& name) const { return group().attribute(name); }
std::vector<std::string> Step::attribute_names() const {
  std::vector<std::string> out;
  for (auto& n : group().attribute_names())
    if (!is_layout_attribute(n)) out.push_back(n);
  return out;
}

void Step::close() {
  if (series_->open_step != index_) return;
  series_->open_step.reset();
  series_->file.flush();  // end of step: the deferred writes of this step execute
}

ParticleSpecies Step::particles(const std::string& species) {
  if (species.empty() || species.find('/') != std::string::npos)
    throw UsageError("invalid particle species name '" + species + "' in " + series_->where());
  if (series_->rules->kind() == SeriesLayout::H5Part && series_->open_step == index_) {
    auto [it, fresh] = series_->h5part_species.emplace(index_, species);
    if (!fresh && it->second != species)
      throw UsageError("the h5part layout holds one particle species per step: step " + std::to_string(index_) +
                       " already has '" + it->second + "', so '" + species + "' cannot be added (use openpmd)");
  }
  return ParticleSpecies(series_, index_, species);
}

std::vector<std::string> Step::particle_species() const {
  return series_->rules->list_species(series_->file, index_);
}

std::vector<std::string> Step::fields() const { return series_->rules->list_fields(series_->file, index_); }

Field Step::field(const std::string& name, const FieldSpec& spec_in) {
  auto& st = *series_;
  std::string where = "field '" + name + "' of step " + std::to_string(index_) + " in " + st.where();
  if (name.empty() || name.find('/') != std::string::npos) throw UsageError("invalid field name '" + name + "'");
  if (st.open_step != index_) throw UsageError("cannot create " + where + ": the step is not open for writing");
  FieldSpec spec = spec_in;
  const std::size_t nd = spec.global_shape.size();
  if (nd < 1 || nd > 3)
    throw SelectionError("cannot create " + where + ": fields have 1, 2 or 3 dimensions, not " + std::to_string(nd));
  if (spec.components != 1 && spec.components != 3)
    throw SelectionError("cannot create " + where + ": components must be 1 or 3, not " +
                         std::to_string(spec.components));
  auto check_len = [&](std::size_t n, const char* what) {
    if (n != 0 && n != nd)
      throw SelectionError("cannot create " + where + ": " + what + " has " + std::to_string(n) +
                           " values for a " + std::to_string(nd) + "-D field");
  };
  check_len(spec.origin.size(), "origin");
  check_len(spec.spacing.size(), "spacing");
  check_len(spec.axis_labels.size(), "axis_labels");
  if (spec.axis_labels.empty()) {
    static const char* zyx[] = {"z", "y", "x"};
    spec.axis_labels.assign(zyx + (3 - nd), zyx + 3);
  }
  std::string path = st.rules->field_path(index_, name);
  for (int c = 0; c < spec.components; ++c) {
    DatasetSpec ds;
    ds.dtype = spec.dtype;
    ds.shape = spec.global_shape;
    // Engines that name dimensions (zarr) name them by the axes: xarray then reads the field as it is.
    if (st.file.supports("dimension_names")) ds.dim_names = spec.axis_labels;
    st.file.create_dataset(st.rules->component_path(path, c, spec.components), ds);
  }
  st.rules->describe_field(st.file, path, spec);
  Field f(series_, index_, name);
  f.shape_ = spec.global_shape;
  f.components_ = spec.components;
  f.dtype_ = spec.dtype;
  return f;
}

Field Step::field(const std::string& name) const {
  auto& st = *series_;
  std::string path = st.rules->field_path(index_, name);
  int components = st.rules->count_components(st.file, path);
  if (components == 0)
    throw NotFoundError("field '" + name + "' not found in step " + std::to_string(index_) + " of " + st.where());
  Field f(series_, index_, name);
  f.components_ = components;
  Dataset first = st.file.dataset(st.rules->component_path(path, 0, components));
  f.shape_ = first.shape();
  f.dtype_ = first.dtype();
  return f;
}

// ---- ParticleSpecies --------------------------------------------------------------

void ParticleSpecies::set_local_count(uint64_t n) {
  MPI_Comm comm = series_->file.comm();
  // Summed in 32-bit halves so that a total past 2^64 - 1 is seen on every
  // rank instead of wrapping into a small, wrong offset.
  unsigned long long mine[2] = {n >> 32, n & 0xffffffffull}, before[2] = {0, 0}, total[2] = {0, 0};
  MPI_Exscan(mine, before, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  MPI_Allreduce(mine, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  if (series_->file.rank() == 0) before[0] = before[1] = 0;  // MPI_Exscan leaves rank 0's result undefined
  auto join = [](const unsigned long long (&v)[2], uint64_t& out) {
    return v[0] < (1ull << 32) && !__builtin_add_overflow(uint64_t(v[0]) << 32, uint64_t(v[1]), &out);
  };
  uint64_t offset = 0, global = 0;
  if (!join(total, global) || !join(before, offset))
    throw SelectionError("particle species '" + name_ + "' in " + series_->where() +
                         ": the ranks' particle counts add up to more than 2^64 - 1");
  local_count_ = n;
  offset_ = offset;
  global_count_ = global;
  counted_ = true;
}

uint64_t ParticleSpecies::global_count() const {
  if (counted_) return global_count_;
  auto names = arrays();
  if (names.empty()) return 0;
  return dataset(names.front()).shape().at(0);
}

void ParticleSpecies::check_local_size(const std::string& array, std::size_t n) const {
  if (!counted_)
    throw UsageError("particle array '" + array + "' of species '" + name_ +
                     "': call set_local_count before writing");
  if (n != local_count_)
    throw SelectionError("particle array '" + array + "' of species '" + name_ + "' has " + std::to_string(n) +
                         " elements but this rank's count is " + std::to_string(local_count_));
}

void ParticleSpecies::write_raw(const std::string& array, Datatype dtype, const void* data,
                                std::shared_ptr<const void> keep_alive) {
  auto& st = *series_;
  check_local_size(array, local_count_);
  if (st.open_step != step_)
    throw UsageError("cannot write particle array '" + array + "': step " + std::to_string(step_) +
                     " of " + st.where() + " is not open for writing");
  std::string species_path = st.rules->species_path(step_, name_);
  std::string path = st.rules->array_path(species_path, array);
  DatasetSpec spec;
  spec.dtype = dtype;
  spec.shape = {global_count_};
  // Every array of a species has its particles along its one dimension: named after the species.
  if (st.file.supports("dimension_names")) spec.dim_names = {name_};
  Dataset ds = st.file.create_dataset(path, spec);
  st.rules->describe_array(st.file, species_path, array, ds, global_count_);
  ds.write_raw(Selection::box({offset_}, {local_count_}), dtype, data, local_count_, std::move(keep_alive));
}

std::vector<std::string> ParticleSpecies::arrays() const {
  auto& st = *series_;
  std::string p = st.rules->species_path(step_, name_);
  if (st.file.kind(p) != ObjectKind::Group) return {};
  return st.rules->list_arrays(st.file, p);
}

Dataset ParticleSpecies::dataset(const std::string& array) const {
  auto& st = *series_;
  std::string path = st.rules->array_path(st.rules->species_path(step_, name_), array);
  if (st.file.kind(path) != ObjectKind::Dataset)
    throw NotFoundError("particle array '" + array + "' of species '" + name_ + "' not found in step " +
                        std::to_string(step_) + " of " + st.where());
  return st.file.dataset(path);
}

Datatype ParticleSpecies::dtype(const std::string& array) const { return dataset(array).dtype(); }

std::pair<uint64_t, uint64_t> ParticleSpecies::my_share() const {
  uint64_t n = global_count();
  uint64_t p = static_cast<uint64_t>(series_->file.size()), r = static_cast<uint64_t>(series_->file.rank());
  uint64_t base = n / p, extra = n % p;
  uint64_t begin = r * base + std::min(r, extra);
  return {begin, begin + base + (r < extra ? 1 : 0)};
}

void ParticleSpecies::read_range_raw(const std::string& array, uint64_t begin, uint64_t end, Datatype dtype,
                                     void* out) const {
  Dataset ds = dataset(array);
  uint64_t n = ds.shape().at(0);
  if (begin > end || end > n)
    throw SelectionError("range [" + std::to_string(begin) + ", " + std::to_string(end) + ") of particle array '" +
                         array + "' of species '" + name_ + "' is outside [0, " + std::to_string(n) + ")");
  Selection sel = end > begin ? Selection::box({begin}, {end - begin}) : Selection::none();
  ds.read_raw(sel, dtype, out, end - begin);
}

void ParticleSpecies::read_indices_raw(const std::string& array, const std::vector<uint64_t>& indices,
                                       Datatype dtype, void* out) const {
  Dataset ds = dataset(array);
  const uint64_t n = ds.shape().at(0);
  const std::size_t esize = datatype_size(dtype);
  uint64_t lo = n, hi = 0;
  for (auto i : indices) {
    if (i >= n)
      throw SelectionError("index " + std::to_string(i) + " of particle array '" + array + "' of species '" +
                           name_ + "' is outside [0, " + std::to_string(n) + ")");
    lo = std::min(lo, i);
    hi = std::max(hi, i + 1);
  }
  // Read the covering range in bounded blocks; every rank takes part in the same
  // number of collective reads (the largest any rank needs).
  const uint64_t block = uint64_t{1} << 22;
  unsigned long long mine = indices.empty() ? 0 : (hi - lo + block - 1) / block, rounds = 0;
  MPI_Allreduce(&mine, &rounds, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, series_->file.comm());
  std::vector<std::size_t> order(indices.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return indices[a] < indices[b]; });
  std::vector<unsigned char> buf;
  std::size_t next = 0;
  for (unsigned long long r = 0; r < rounds; ++r) {
    uint64_t b = lo + r * block, e = std::min(hi, b + block);
    if (r >= mine || b >= e) {
      ds.read_raw(Selection::none(), dtype, nullptr, 0);
      continue;
    }
    buf.resize((e - b) * esize);
    ds.read_raw(Selection::box({b}, {e - b}), dtype, buf.data(), e - b);
    for (; next < order.size() && indices[order[next]] < e; ++next)
      std::memcpy(static_cast<unsigned char*>(out) + order[next] * esize, &buf[(indices[order[next]] - b) * esize],
                  esize);
  }
}

// ---- Field ----------------------------------------------------------------------

Dataset Field::component_dataset(int component) const {
  auto& st = *series_;
  if (component < 0 || component >= components_)
    throw SelectionError("component " + std::to_string(component) + " of field '" + name_ + "' (it has " +
                         std::to_string(components_) + ")");
  return st.file.dataset(st.rules->component_path(st.rules->field_path(step_, name_), component, components_));
}

std::vector<double> Field::origin() const {
  auto& st = *series_;
  return st.rules->geometry(st.file, st.rules->field_path(step_, name_), shape_.size()).origin;
}

std::vector<double> Field::spacing() const {
  auto& st = *series_;
  return st.rules->geometry(st.file, st.rules->field_path(step_, name_), shape_.size()).spacing;
}

namespace {
// Copies a box of `count` elements between two dense row-major arrays:
// from `src` (shape src_shape) at src_at, to `dst` (shape dst_shape) at dst_at.
void copy_box(const unsigned char* src, const Dims& src_shape, const Dims& src_at, unsigned char* dst,
              const Dims& dst_shape, const Dims& dst_at, const Dims& count, std::size_t esize) {
  const std::size_t nd = count.size();
  if (product(count) == 0) return;
  Dims idx(nd, 0);  // index within the box, the last dimension copied as one row
  const std::size_t row = count[nd - 1] * esize;
  for (;;) {
    uint64_t s = 0, d = 0;
    for (std::size_t k = 0; k < nd; ++k) {
      s = s * src_shape[k] + src_at[k] + (k + 1 < nd ? idx[k] : 0);
      d = d * dst_shape[k] + dst_at[k] + (k + 1 < nd ? idx[k] : 0);
    }
    std::memcpy(dst + d * esize, src + s * esize, row);
    std::size_t k = nd - 1;
    while (k-- > 0) {
      if (++idx[k] < count[k]) break;
      idx[k] = 0;
    }
    if (k == static_cast<std::size_t>(-1)) return;
  }
}
}  // namespace

void Field::write_raw(Datatype dtype, const void* local, const Dims& local_shape, const Dims& offset, uint64_t ghost,
                      int component) {
  auto& st = *series_;
  std::string where = "field '" + name_ + "' of step " + std::to_string(step_) + " in " + st.where();
  const std::size_t nd = shape_.size();
  if (local_shape.size() != nd || offset.size() != nd)
    throw SelectionError("write to " + where + ": local shape " + dims_to_string(local_shape) + " and offset " +
                         dims_to_string(offset) + " must have " + std::to_string(nd) + " dimensions");
  Dims box(nd);
  for (std::size_t k = 0; k < nd; ++k) {
    if (ghost > local_shape[k] / 2)
      throw SelectionError("write to " + where + ": local shape " + dims_to_string(local_shape) +
                           " is smaller than twice the ghost width " + std::to_string(ghost));
    box[k] = local_shape[k] - 2 * ghost;
    if (offset[k] > shape_[k] || box[k] > shape_[k] - offset[k])  // without wrapping
      throw SelectionError("write to " + where + ": box at " + dims_to_string(offset) + " of size " +
                           dims_to_string(box) + " leaves the global grid " + dims_to_string(shape_) +
                           " in dimension " + std::to_string(k));
  }
  Dataset ds = component_dataset(component);
  if (dtype.in_memory() != ds.dtype().in_memory())
    throw DatatypeError("cannot write " + datatype_name(dtype) + " data to " + where + " of type " +
                        datatype_name(ds.dtype()));
  const std::size_t esize = datatype_size(dtype);
  // Drop the ghost cells: copy the interior into a buffer the deferred write owns.
  auto interior = std::make_shared<std::vector<unsigned char>>(product(box) * esize);
  copy_box(static_cast<const unsigned char*>(local), local_shape, Dims(nd, ghost), interior->data(), box, Dims(nd, 0),
           box, esize);
  ds.write_raw(Selection::box(offset, box), dtype, interior->data(), product(box), interior);
}

void Field::read_raw(Datatype dtype, void* out, const Dims& lo, const Dims& count, uint64_t halo, const void* fill,
                     int component) const {
  auto& st = *series_;
  std::string where = "field '" + name_ + "' of step " + std::to_string(step_) + " in " + st.where();
  const std::size_t nd = shape_.size();
  Dataset ds = component_dataset(component);
  if (lo.size() != nd || count.size() != nd)
    throw SelectionError("read of " + where + ": box start " + dims_to_string(lo) + " and size " +
                         dims_to_string(count) + " must have " + std::to_string(nd) + " dimensions");
  if (product(count) == 0) {  // this rank reads nothing but joins the collective read
    ds.read_raw(Selection::none(), dtype, nullptr, 0);
    return;
  }
  // The box grown by the halo, clipped to the domain: one read, then placed into a padded result.
  Dims padded(nd), clip_lo(nd), clip_count(nd), at(nd);
  for (std::size_t k = 0; k < nd; ++k) {
    if (lo[k] > shape_[k] || count[k] > shape_[k] - lo[k])  // without wrapping
      throw SelectionError("read of " + where + ": box at " + dims_to_string(lo) + " of size " +
                           dims_to_string(count) + " leaves the global grid " + dims_to_string(shape_));
    if (halo > (~uint64_t(0) - count[k]) / 4)  // the padded result's size must not wrap
      throw SelectionError("read of " + where + ": halo " + std::to_string(halo) + " is too wide");
    padded[k] = count[k] + 2 * halo;
    clip_lo[k] = lo[k] >= halo ? lo[k] - halo : 0;
    uint64_t clip_hi = std::min(shape_[k], lo[k] + count[k] + std::min(halo, shape_[k]));
    clip_count[k] = clip_hi - clip_lo[k];
    at[k] = clip_lo[k] + halo - lo[k];
  }
  const std::size_t esize = datatype_size(dtype);
  auto* dst = static_cast<unsigned char*>(out);
  for (uint64_t i = 0; i < product(padded); ++i) std::memcpy(dst + i * esize, fill, esize);
  std::vector<unsigned char> buf(product(clip_count) * esize);
  ds.read_raw(Selection::box(clip_lo, clip_count), dtype, buf.data(), product(clip_count));
  copy_box(buf.data(), clip_count, Dims(nd, 0), dst, padded, at, clip_count, esize);
}

}  // namespace h5loom
