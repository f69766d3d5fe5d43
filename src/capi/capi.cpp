// The C API (include/h5loom/h5loom.h): every entry point runs its body through
// guarded(), which turns any exception into a status code and a per-thread
// message (H5hut's enter/leave macro pair, as a function).
#include "h5loom/h5loom.h"

#include <cstring>
#include <optional>
#include <string>

#include "h5loom/h5loom.hpp"
#include "h5loom/series.hpp"

struct loom_file_s {
  h5loom::File file;
};

struct loom_object_s {
  std::optional<h5loom::Group> group;
  std::optional<h5loom::Dataset> dataset;
  std::vector<std::string> members;     // taken by loom_group_member_count
  std::vector<std::string> attributes;  // taken by loom_attr_count
};

struct loom_series_s {
  h5loom::Series series;
  std::vector<uint64_t> steps;  // taken by loom_series_step_count
};
struct loom_step_s {
  h5loom::Step step;
};
struct loom_particles_s {
  h5loom::ParticleSpecies particles;
};
struct loom_field_s {
  h5loom::Field field;
};

namespace {

thread_local std::string last_message;
thread_local loom_status last_code = LOOM_OK;

loom_status fail(loom_status code, const std::string& message) {
  last_code = code;
  last_message = message;
  return code;
}

template <class F>
loom_status guarded(F&& body) noexcept {
  try {
    body();
    last_code = LOOM_OK;
    last_message.clear();
    return LOOM_OK;
  } catch (const h5loom::Error& e) {
    return fail(static_cast<loom_status>(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(LOOM_ERR_GENERIC, "out of memory");
  } catch (const std::exception& e) {
    return fail(LOOM_ERR_GENERIC, e.what());
  } catch (...) {
    return fail(LOOM_ERR_GENERIC, "unknown error");
  }
}

template <class T>
T* need(T* p, const char* what) {
  if (!p) throw h5loom::UsageError(std::string("null ") + what + " handle");
  return p;
}

void need_out(const void* p, const char* what) {
  if (!p) throw h5loom::UsageError(std::string("null output pointer for ") + what);
}

const char* text(const char* s, const char* what) {
  if (!s) throw h5loom::UsageError(std::string("null ") + what);
  return s;
}

h5loom::Datatype to_datatype(loom_datatype t) {
  if (static_cast<int>(t) < 0 || static_cast<int>(t) > LOOM_FLOAT64)
    throw h5loom::DatatypeError("invalid loom_datatype value " + std::to_string(static_cast<int>(t)));
  return static_cast<h5loom::Datatype>(t);
}

// Calls f(T{}) with the C++ type of a loom_datatype.
template <class F>
void with_type(loom_datatype t, F&& f) {
  switch (to_datatype(t)) {
    case h5loom::Datatype::Int8: return f(int8_t{});
    case h5loom::Datatype::Int16: return f(int16_t{});
    case h5loom::Datatype::Int32: return f(int32_t{});
    case h5loom::Datatype::Int64: return f(int64_t{});
    case h5loom::Datatype::UInt8: return f(uint8_t{});
    case h5loom::Datatype::UInt16: return f(uint16_t{});
    case h5loom::Datatype::UInt32: return f(uint32_t{});
    case h5loom::Datatype::UInt64: return f(uint64_t{});
    case h5loom::Datatype::Float32: return f(float{});
    case h5loom::Datatype::Float64: return f(double{});
  }
}

h5loom::Dims dims(int ndim, const uint64_t* p, const char* what) {
  if (ndim < 0 || ndim > LOOM_MAX_RANK)
    throw h5loom::SelectionError("invalid number of dimensions " + std::to_string(ndim) + " for " + what);
  if (!p) return {};
  return h5loom::Dims(p, p + ndim);
}

h5loom::Selection to_selection(const loom_selection* s) {
  if (!s) throw h5loom::UsageError("null selection");
  switch (s->kind) {
    case LOOM_SELECT_ALL: return h5loom::Selection::all();
    case LOOM_SELECT_NONE: return h5loom::Selection::none();
    case LOOM_SELECT_HYPERSLAB:
      if (!s->start || !s->count) throw h5loom::SelectionError("hyperslab selection without start or count");
      return h5loom::Selection::hyperslab(dims(s->ndim, s->start, "start"), dims(s->ndim, s->count, "count"),
                                          dims(s->ndim, s->stride, "stride"), dims(s->ndim, s->block, "block"));
  }
  throw h5loom::SelectionError("invalid selection kind " + std::to_string(static_cast<int>(s->kind)));
}

void copy_out(const std::string& s, char* buf, size_t bufsize, size_t* needed) {
  if (needed) *needed = s.size();
  if (buf && bufsize) {
    size_t n = std::min(bufsize - 1, s.size());
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
}

// Entry `index` of a name list taken by loom_group_member_count / loom_attr_count.
const std::string& name_at(const std::vector<std::string>& names, size_t index, const char* what,
                           const std::string& path) {
  if (index >= names.size())
    throw h5loom::SelectionError(std::string(what) + " index " + std::to_string(index) + " out of range for '" + path +
                                 "' with " + std::to_string(names.size()) + " " + what + "s (call loom_" +
                                 (std::string(what) == "member" ? "group_member" : "attr") + "_count first)");
  return names[index];
}

h5loom::Group& as_group(loom_object* o) {
  need(o, "group");
  if (!o->group) throw h5loom::UsageError("handle of '" + o->dataset->path() + "' is a dataset, not a group");
  return *o->group;
}

h5loom::Dataset& as_dataset(loom_object* o) {
  need(o, "dataset");
  if (!o->dataset) throw h5loom::UsageError("handle of '" + o->group->path() + "' is a group, not a dataset");
  return *o->dataset;
}

h5loom::Object& as_object(loom_object* o) {
  need(o, "object");
  if (o->group) return *o->group;
  return *o->dataset;
}

loom_object* new_object(h5loom::Group g) {
  auto* o = new loom_object_s;
  o->group = std::move(g);
  return o;
}

loom_object* new_object(h5loom::Dataset d) {
  auto* o = new loom_object_s;
  o->dataset = std::move(d);
  return o;
}

h5loom::FileOptions options(MPI_Comm comm, const char* engine) {
  h5loom::FileOptions o;
  o.comm = comm;
  o.engine = engine ? engine : "";
  return o;
}

}  // namespace

extern "C" {

loom_selection loom_select_all(void) { return {LOOM_SELECT_ALL, 0, nullptr, nullptr, nullptr, nullptr}; }
loom_selection loom_select_none(void) { return {LOOM_SELECT_NONE, 0, nullptr, nullptr, nullptr, nullptr}; }
loom_selection loom_select_box(int ndim, const uint64_t* start, const uint64_t* count) {
  return {LOOM_SELECT_HYPERSLAB, ndim, start, count, nullptr, nullptr};
}
loom_selection loom_select_hyperslab(int ndim, const uint64_t* start, const uint64_t* count, const uint64_t* stride,
                                     const uint64_t* block) {
  return {LOOM_SELECT_HYPERSLAB, ndim, start, count, stride, block};
}

const char* loom_last_error_message(void) { return last_message.c_str(); }
loom_status loom_last_error_code(void) { return last_code; }

const char* loom_status_name(loom_status status) {
  static const char* names[] = {"LOOM_OK",          "LOOM_ERR_GENERIC",   "LOOM_ERR_NOT_FOUND",
                                "LOOM_ERR_EXISTS",  "LOOM_ERR_SELECTION", "LOOM_ERR_DATATYPE",
                                "LOOM_ERR_READ_ONLY", "LOOM_ERR_CONFIG",  "LOOM_ERR_USAGE",
                                "LOOM_ERR_IO",      "LOOM_ERR_COLLECTIVE_MISMATCH", "LOOM_ERR_CORRUPTION"};
  if (status < 0 || status > LOOM_ERR_CORRUPTION) return "LOOM_ERR_UNKNOWN";
  return names[status];
}

size_t loom_datatype_size(loom_datatype t) {
  if (static_cast<int>(t) < 0 || static_cast<int>(t) > LOOM_FLOAT64) return 0;
  return h5loom::datatype_size(static_cast<h5loom::Datatype>(t));
}

// ---- files ----

static loom_status open_file(const char* name, loom_mode mode, MPI_Comm comm, const char* engine, loom_file** out) {
  return guarded([&] {
    need_out(out, "the file handle");
    *out = nullptr;
    if (static_cast<int>(mode) < 0 || static_cast<int>(mode) > LOOM_MODE_CREATE_EXCLUSIVE)
      throw h5loom::UsageError("invalid loom_mode value " + std::to_string(static_cast<int>(mode)));
    auto f = h5loom::File::open(text(name, "file name"), static_cast<h5loom::Mode>(mode), options(comm, engine));
    *out = new loom_file_s{std::move(f)};
  });
}

loom_status loom_file_create(const char* name, MPI_Comm comm, const char* engine, loom_file** out) {
  return open_file(name, LOOM_MODE_CREATE, comm, engine, out);
}
loom_status loom_file_create_exclusive(const char* name, MPI_Comm comm, const char* engine, loom_file** out) {
  return open_file(name, LOOM_MODE_CREATE_EXCLUSIVE, comm, engine, out);
}
loom_status loom_file_open(const char* name, loom_mode mode, MPI_Comm comm, const char* engine, loom_file** out) {
  return open_file(name, mode, comm, engine, out);
}
loom_status loom_file_open_f(const char* name, loom_mode mode, MPI_Fint comm, const char* engine, loom_file** out) {
  h5loom::ensure_mpi();  // MPI_Comm_f2c needs MPI
  return open_file(name, mode, MPI_Comm_f2c(comm), engine, out);
}

loom_status loom_file_flush(loom_file* f) {
  return guarded([&] { need(f, "file")->file.flush(); });
}

loom_status loom_file_close(loom_file* f) {
  return guarded([&] {
    need(f, "file");
    std::unique_ptr<loom_file_s> owned(f);  // freed whatever close does
    owned->file.close();
  });
}

loom_status loom_file_rank(loom_file* f, int* rank, int* size) {
  return guarded([&] {
    need(f, "file");
    if (rank) *rank = f->file.rank();
    if (size) *size = f->file.size();
  });
}

loom_status loom_file_engine(loom_file* f, char* buf, size_t bufsize, size_t* needed) {
  return guarded([&] { copy_out(need(f, "file")->file.engine_name(), buf, bufsize, needed); });
}

loom_status loom_file_root(loom_file* f, loom_group** out) {
  return guarded([&] {
    need_out(out, "the group handle");
    *out = new_object(h5loom::Group(need(f, "file")->file));
  });
}

// ---- groups ----

loom_status loom_group_create_group(loom_group* parent, const char* path, loom_group** out) {
  return guarded([&] {
    need_out(out, "the group handle");
    *out = new_object(as_group(parent).create_group(text(path, "path")));
  });
}

loom_status loom_group_open_group(loom_group* parent, const char* path, loom_group** out) {
  return guarded([&] {
    need_out(out, "the group handle");
    *out = new_object(as_group(parent).group(text(path, "path")));
  });
}

loom_status loom_group_kind(loom_group* parent, const char* path, loom_kind* out) {
  return guarded([&] {
    need_out(out, "the kind");
    *out = static_cast<loom_kind>(as_group(parent).kind(text(path, "path")));
  });
}

loom_status loom_group_member_count(loom_group* g, size_t* count) {
  return guarded([&] {
    need_out(count, "the count");
    g->members = as_group(g).list();
    *count = g->members.size();
  });
}

loom_status loom_group_member_name(loom_group* g, size_t index, char* buf, size_t bufsize, size_t* needed) {
  return guarded([&] { copy_out(name_at(g->members, index, "member", as_group(g).path()), buf, bufsize, needed); });
}

loom_status loom_group_create_dataset(loom_group* parent, const char* path, loom_datatype dtype, int ndim,
                                      const uint64_t* shape, const uint64_t* max_shape, const uint64_t* chunks,
                                      loom_dataset** out) {
  return guarded([&] {
    need_out(out, "the dataset handle");
    if (!shape) throw h5loom::UsageError("null shape for dataset '" + std::string(text(path, "path")) + "'");
    h5loom::DatasetSpec spec;
    spec.dtype = to_datatype(dtype);
    spec.shape = dims(ndim, shape, "shape");
    spec.max_shape = dims(ndim, max_shape, "max_shape");
    spec.chunks = dims(ndim, chunks, "chunks");
    if (chunks) {
      spec.layout = h5loom::Layout::Chunked;
      spec.layout_auto = false;
    }
    *out = new_object(as_group(parent).create_dataset(text(path, "path"), spec));
  });
}

loom_status loom_group_open_dataset(loom_group* parent, const char* path, loom_dataset** out) {
  return guarded([&] {
    need_out(out, "the dataset handle");
    *out = new_object(as_group(parent).dataset(text(path, "path")));
  });
}

// ---- datasets ----

loom_status loom_dataset_dtype(loom_dataset* d, loom_datatype* out) {
  return guarded([&] {
    need_out(out, "the datatype");
    *out = static_cast<loom_datatype>(as_dataset(d).dtype());
  });
}

loom_status loom_dataset_ndim(loom_dataset* d, int* out) {
  return guarded([&] {
    need_out(out, "the rank");
    *out = static_cast<int>(as_dataset(d).ndim());
  });
}

loom_status loom_dataset_shape(loom_dataset* d, uint64_t* shape, uint64_t* max_shape, uint64_t* chunks,
                               loom_layout* layout) {
  return guarded([&] {
    auto& ds = as_dataset(d);
    auto s = ds.shape(), m = ds.max_shape(), c = ds.chunks();
    for (size_t i = 0; i < s.size(); ++i) {
      if (shape) shape[i] = s[i];
      if (max_shape) max_shape[i] = m[i];
      if (chunks) chunks[i] = c.empty() ? 0 : c[i];
    }
    if (layout) *layout = ds.layout() == h5loom::Layout::Chunked ? LOOM_LAYOUT_CHUNKED : LOOM_LAYOUT_CONTIGUOUS;
  });
}

loom_status loom_dataset_extend(loom_dataset* d, const uint64_t* new_shape) {
  return guarded([&] {
    auto& ds = as_dataset(d);
    if (!new_shape) throw h5loom::UsageError("null new shape for dataset '" + ds.path() + "'");
    ds.extend(dims(static_cast<int>(ds.ndim()), new_shape, "new shape"));
  });
}

loom_status loom_dataset_write(loom_dataset* d, const loom_selection* sel, loom_datatype mem_type, size_t n,
                               const void* data, loom_write_mode mode) {
  return guarded([&] {
    as_dataset(d).write_raw(to_selection(sel), to_datatype(mem_type), data, n, mode == LOOM_WRITE_COPY);
  });
}

loom_status loom_dataset_read(loom_dataset* d, const loom_selection* sel, loom_datatype mem_type, size_t n,
                              void* out) {
  return guarded([&] { as_dataset(d).read_raw(to_selection(sel), to_datatype(mem_type), out, n); });
}

// ---- objects and attributes ----

loom_status loom_object_path(loom_object* o, char* buf, size_t bufsize, size_t* needed) {
  return guarded([&] { copy_out(as_object(o).path(), buf, bufsize, needed); });
}

loom_status loom_object_close(loom_object* o) {
  delete o;
  last_code = LOOM_OK;
  last_message.clear();
  return LOOM_OK;
}

loom_status loom_attr_write_scalar(loom_object* o, const char* name, loom_datatype type, const void* value) {
  return guarded([&] {
    if (!value) throw h5loom::UsageError("null value for attribute '" + std::string(text(name, "name")) + "'");
    h5loom::AttributeValue v;
    with_type(type, [&](auto tag) {
      decltype(tag) x;
      std::memcpy(&x, value, sizeof x);
      v = h5loom::AttributeValue(x);
    });
    as_object(o).set_attribute(text(name, "attribute name"), v);
  });
}

loom_status loom_attr_write_array(loom_object* o, const char* name, loom_datatype type, size_t count,
                                  const void* values) {
  return guarded([&] {
    if (!values && count) throw h5loom::UsageError("null values for attribute '" + std::string(text(name, "name")) + "'");
    h5loom::AttributeValue v;
    with_type(type, [&](auto tag) {
      std::vector<decltype(tag)> xs(count);
      if (count) std::memcpy(xs.data(), values, count * sizeof(decltype(tag)));
      v = h5loom::AttributeValue(xs);
    });
    as_object(o).set_attribute(text(name, "attribute name"), v);
  });
}

loom_status loom_attr_write_string(loom_object* o, const char* name, const char* value) {
  return guarded([&] {
    as_object(o).set_attribute(text(name, "attribute name"), std::string(text(value, "attribute string")));
  });
}

loom_status loom_attr_write_strings(loom_object* o, const char* name, size_t count, const char* const* values) {
  return guarded([&] {
    std::vector<std::string> strings;
    for (size_t i = 0; i < count; ++i) strings.emplace_back(text(values ? values[i] : nullptr, "string in the list"));
    as_object(o).set_attribute(text(name, "attribute name"), h5loom::AttributeValue(std::move(strings)));
  });
}

loom_status loom_attr_read_string_element(loom_object* o, const char* name, size_t index, char* buf, size_t bufsize,
                                          size_t* needed) {
  return guarded([&] {
    auto& obj = as_object(o);
    auto v = obj.attribute(text(name, "attribute name"));
    copy_out(name_at(v.as_strings(), index, "string", obj.path() + "@" + name), buf, bufsize, needed);
  });
}

loom_status loom_attr_exists(loom_object* o, const char* name, int* exists) {
  return guarded([&] {
    need_out(exists, "the flag");
    *exists = as_object(o).has_attribute(text(name, "attribute name")) ? 1 : 0;
  });
}

loom_status loom_attr_info(loom_object* o, const char* name, loom_attr_kind* kind, loom_datatype* type,
                           size_t* count) {
  return guarded([&] {
    auto v = as_object(o).attribute(text(name, "attribute name"));
    if (kind) *kind = static_cast<loom_attr_kind>(v.kind());
    if (type) *type = v.is_numeric() ? static_cast<loom_datatype>(v.dtype()) : LOOM_UINT8;
    if (count) *count = v.size();
  });
}

loom_status loom_attr_read(loom_object* o, const char* name, loom_datatype mem_type, size_t count, void* out) {
  return guarded([&] {
    auto& obj = as_object(o);
    auto v = obj.attribute(text(name, "attribute name"));
    if (!v.is_numeric())
      throw h5loom::DatatypeError("attribute '" + std::string(name) + "' on '" + obj.path() + "' holds " +
                                  v.to_string() + "; read it with loom_attr_read_string(_element)");
    if (count != v.size())
      throw h5loom::SelectionError("attribute '" + std::string(name) + "' on '" + obj.path() + "' holds " +
                                   std::to_string(v.size()) + " values, not " + std::to_string(count));
    if (count && !out) throw h5loom::UsageError("null output buffer for attribute '" + std::string(name) + "'");
    with_type(mem_type, [&](auto tag) {
      auto xs = v.as_vector<decltype(tag)>();
      if (count) std::memcpy(out, xs.data(), count * sizeof(decltype(tag)));
    });
  });
}

loom_status loom_attr_read_string(loom_object* o, const char* name, char* buf, size_t bufsize, size_t* needed) {
  return guarded([&] { copy_out(as_object(o).attribute(text(name, "attribute name")).as_string(), buf, bufsize, needed); });
}

loom_status loom_attr_count(loom_object* o, size_t* count) {
  return guarded([&] {
    need_out(count, "the count");
    o->attributes = as_object(o).attribute_names();
    *count = o->attributes.size();
  });
}

loom_status loom_attr_name(loom_object* o, size_t index, char* buf, size_t bufsize, size_t* needed) {
  return guarded([&] { copy_out(name_at(o->attributes, index, "attribute", as_object(o).path()), buf, bufsize, needed); });
}

// ---- series ----

static h5loom::SeriesLayout to_layout(loom_series_layout l) {
  if (l != LOOM_SERIES_OPENPMD && l != LOOM_SERIES_H5PART)
    throw h5loom::ConfigError("invalid loom_series_layout value " + std::to_string(static_cast<int>(l)));
  return l == LOOM_SERIES_H5PART ? h5loom::SeriesLayout::H5Part : h5loom::SeriesLayout::OpenPMD;
}

loom_status loom_series_create(const char* name, MPI_Comm comm, const char* engine, loom_series_layout layout,
                               loom_series** out) {
  return guarded([&] {
    need_out(out, "the series handle");
    h5loom::SeriesOptions o;
    o.file = options(comm, engine);
    o.layout = to_layout(layout);
    *out = new loom_series_s{h5loom::Series::create(text(name, "file name"), o), {}};
  });
}

loom_status loom_series_append(const char* name, MPI_Comm comm, const char* engine, loom_series** out) {
  return guarded([&] {
    need_out(out, "the series handle");
    *out = new loom_series_s{h5loom::Series::append(text(name, "file name"), options(comm, engine)), {}};
  });
}

loom_status loom_series_open(const char* name, MPI_Comm comm, const char* engine, loom_series** out) {
  return guarded([&] {
    need_out(out, "the series handle");
    *out = new loom_series_s{h5loom::Series::open(text(name, "file name"), options(comm, engine)), {}};
  });
}

loom_status loom_series_close(loom_series* s) {
  return guarded([&] {
    std::unique_ptr<loom_series_s> owned(need(s, "series"));
    owned->series.close();
  });
}

loom_status loom_series_layout_of(loom_series* s, loom_series_layout* out) {
  return guarded([&] {
    need_out(out, "the layout");
    *out = need(s, "series")->series.layout() == h5loom::SeriesLayout::H5Part ? LOOM_SERIES_H5PART
                                                                              : LOOM_SERIES_OPENPMD;
  });
}

loom_status loom_series_root(loom_series* s, loom_group** out) {
  return guarded([&] {
    need_out(out, "the group handle");
    *out = new_object(h5loom::Group(need(s, "series")->series.file()));
  });
}

loom_status loom_series_step_count(loom_series* s, size_t* count) {
  return guarded([&] {
    need_out(count, "the count");
    need(s, "series")->steps = s->series.steps();
    *count = s->steps.size();
  });
}

loom_status loom_series_step_number(loom_series* s, size_t index, uint64_t* step) {
  return guarded([&] {
    need_out(step, "the step number");
    if (index >= need(s, "series")->steps.size())
      throw h5loom::SelectionError("step index " + std::to_string(index) + " out of range for series '" +
                                   s->series.file().filename() + "' with " + std::to_string(s->steps.size()) +
                                   " steps (call loom_series_step_count first)");
    *step = s->steps[index];
  });
}

loom_status loom_series_write_step(loom_series* s, uint64_t n, double time, double dt, loom_step** out) {
  return guarded([&] {
    need_out(out, "the step handle");
    *out = new loom_step_s{need(s, "series")->series.write_step(n, time, dt)};
  });
}

loom_status loom_series_step(loom_series* s, uint64_t n, loom_step** out) {
  return guarded([&] {
    need_out(out, "the step handle");
    *out = new loom_step_s{need(s, "series")->series.step(n)};
  });
}

loom_status loom_step_time(loom_step* st, double* time, double* dt) {
  return guarded([&] {
    need(st, "step");
    if (time) *time = st->step.time();
    if (dt) *dt = st->step.dt();
  });
}

loom_status loom_step_group(loom_step* st, loom_group** out) {
  return guarded([&] {
    need_out(out, "the group handle");
    *out = new_object(need(st, "step")->step.group());
  });
}

loom_status loom_step_end(loom_step* st) {
  return guarded([&] { need(st, "step")->step.close(); });
}

loom_status loom_step_free(loom_step* st) {
  delete st;
  return guarded([] {});
}

loom_status loom_step_particles(loom_step* st, const char* species, loom_particles** out) {
  return guarded([&] {
    need_out(out, "the particles handle");
    *out = new loom_particles_s{need(st, "step")->step.particles(text(species, "species name"))};
  });
}

loom_status loom_particles_set_local_count(loom_particles* p, uint64_t n, uint64_t* offset, uint64_t* global) {
  return guarded([&] {
    auto& sp = need(p, "particles")->particles;
    sp.set_local_count(n);
    if (offset) *offset = sp.offset();
    if (global) *global = sp.global_count();
  });
}

loom_status loom_particles_write(loom_particles* p, const char* array, loom_datatype dtype, const void* data) {
  return guarded([&] {
    need(p, "particles")->particles.write_raw(text(array, "array name"), to_datatype(dtype), data, nullptr);
  });
}

loom_status loom_particles_global_count(loom_particles* p, uint64_t* out) {
  return guarded([&] {
    need_out(out, "the count");
    *out = need(p, "particles")->particles.global_count();
  });
}

loom_status loom_particles_read_range(loom_particles* p, const char* array, loom_datatype dtype, uint64_t begin,
                                      uint64_t end, void* out) {
  return guarded([&] {
    need(p, "particles")->particles.read_range_raw(text(array, "array name"), begin, end, to_datatype(dtype), out);
  });
}

loom_status loom_particles_read_indices(loom_particles* p, const char* array, loom_datatype dtype, size_t count,
                                        const uint64_t* indices, void* out) {
  return guarded([&] {
    if (count && !indices) throw h5loom::UsageError("null index list");
    std::vector<uint64_t> idx(indices, indices + count);
    need(p, "particles")->particles.read_indices_raw(text(array, "array name"), idx, to_datatype(dtype), out);
  });
}

loom_status loom_particles_my_share(loom_particles* p, uint64_t* begin, uint64_t* end) {
  return guarded([&] {
    auto [b, e] = need(p, "particles")->particles.my_share();
    if (begin) *begin = b;
    if (end) *end = e;
  });
}

loom_status loom_particles_free(loom_particles* p) {
  delete p;
  return guarded([] {});
}

loom_status loom_step_create_field(loom_step* st, const char* name, int ndim, const uint64_t* global_shape,
                                   int components, loom_datatype dtype, const double* origin, const double* spacing,
                                   loom_field** out) {
  return guarded([&] {
    need_out(out, "the field handle");
    if (!global_shape) throw h5loom::UsageError("null global shape for field '" + std::string(text(name, "name")) + "'");
    h5loom::FieldSpec spec;
    spec.global_shape = dims(ndim, global_shape, "global shape");
    spec.components = components;
    spec.dtype = to_datatype(dtype);
    if (origin) spec.origin.assign(origin, origin + ndim);
    if (spacing) spec.spacing.assign(spacing, spacing + ndim);
    *out = new loom_field_s{need(st, "step")->step.field(text(name, "field name"), spec)};
  });
}

loom_status loom_step_open_field(loom_step* st, const char* name, loom_field** out) {
  return guarded([&] {
    need_out(out, "the field handle");
    const h5loom::Step& step = need(st, "step")->step;
    *out = new loom_field_s{step.field(text(name, "field name"))};
  });
}

loom_status loom_field_info(loom_field* f, int* ndim, uint64_t* shape, int* components, loom_datatype* dtype) {
  return guarded([&] {
    auto& fld = need(f, "field")->field;
    if (ndim) *ndim = static_cast<int>(fld.global_shape().size());
    if (shape) std::copy(fld.global_shape().begin(), fld.global_shape().end(), shape);
    if (components) *components = fld.components();
    if (dtype) *dtype = static_cast<loom_datatype>(fld.dtype());
  });
}

loom_status loom_field_write(loom_field* f, int component, loom_datatype dtype, const void* local,
                             const uint64_t* local_shape, const uint64_t* offset, uint64_t ghost) {
  return guarded([&] {
    auto& fld = need(f, "field")->field;
    int nd = static_cast<int>(fld.global_shape().size());
    if (!local_shape || !offset) throw h5loom::UsageError("null local shape or offset for field '" + fld.name() + "'");
    fld.write_raw(to_datatype(dtype), local, dims(nd, local_shape, "local shape"), dims(nd, offset, "offset"), ghost,
                  component);
  });
}

loom_status loom_field_read(loom_field* f, int component, loom_datatype dtype, const uint64_t* lo,
                            const uint64_t* count, uint64_t halo, const void* fill, void* out) {
  return guarded([&] {
    auto& fld = need(f, "field")->field;
    int nd = static_cast<int>(fld.global_shape().size());
    if (!lo || !count) throw h5loom::UsageError("null box for field '" + fld.name() + "'");
    std::vector<unsigned char> zero(8, 0);
    fld.read_raw(to_datatype(dtype), out, dims(nd, lo, "box start"), dims(nd, count, "box size"), halo,
                 fill ? fill : zero.data(), component);
  });
}

loom_status loom_field_free(loom_field* f) {
  delete f;
  return guarded([] {});
}

}  // extern "C"
