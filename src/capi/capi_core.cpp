// The core C API (include/h5loom/h5loom.h): files, groups, datasets, objects and
// attributes, each entry point a thin call of the C++ API run through guarded()
// or, when it agrees across ranks, collective() (capi_internal.hpp).
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capi/capi_internal.hpp"

using namespace h5loom::capi;

namespace {

// Calls f(T{}) with the C++ type of a loom_datatype.
template <class F>
void with_type(loom_datatype t, F&& f) {
  h5loom::dispatch_scalar(to_datatype(t, "type").scalar(), [&](auto v) {
    f(v);
    return 0;
  });
}

}  // namespace

namespace h5loom::capi {

// A loom_selection as the C++ selection it describes.
h5loom::Selection to_selection(const loom_selection* s) {
  if (!s) throw h5loom::UsageError(in_call("null selection 'sel'"));
  switch (s->kind) {
    case LOOM_SELECT_ALL: return h5loom::Selection::all();
    case LOOM_SELECT_NONE: return h5loom::Selection::none();
    case LOOM_SELECT_HYPERSLAB:
      check_ndim(s->ndim, "sel.ndim");
      if (!s->start || !s->count)
        throw h5loom::SelectionError(in_call("hyperslab selection without start or count (null 'sel.start' or "
                                             "'sel.count')"));
      return h5loom::Selection::hyperslab(dims(s->ndim, s->start, "sel.start"), dims(s->ndim, s->count, "sel.count"),
                                          dims(s->ndim, s->stride, "sel.stride"), dims(s->ndim, s->block, "sel.block"));
  }
  throw h5loom::SelectionError(in_call("invalid selection kind " + std::to_string(static_cast<int>(s->kind)) +
                                       " in 'sel'"));
}

h5loom::Group& as_group(loom_object* o, const char* arg) {
  need(o, arg, "group");
  if (!o->group) throw h5loom::UsageError("handle of '" + o->dataset->path() + "' is a dataset, not a group");
  return *o->group;
}

h5loom::Dataset& as_dataset(loom_object* o) {
  need(o, "d", "dataset");
  if (!o->dataset) throw h5loom::UsageError("handle of '" + o->group->path() + "' is a group, not a dataset");
  return *o->dataset;
}

h5loom::Object& as_object(loom_object* o) {
  need(o, "o", "object");
  if (o->group) return *o->group;
  return *o->dataset;
}

}  // namespace h5loom::capi

extern "C" {

// ---- files ----

// The open calls agree over the communicator they are given (no handle yet).
static loom_status open_file(const char* function, const char* name, loom_mode mode, MPI_Comm comm,
                             const char* engine, loom_file** out) {
  return open_over(
      function, comm, out,
      [&] {
        text(name, "name");
        if (static_cast<int>(mode) < 0 || static_cast<int>(mode) > LOOM_MODE_CREATE_EXCLUSIVE)
          throw h5loom::UsageError(in_call("invalid loom_mode value " + std::to_string(static_cast<int>(mode)) +
                                           " for 'mode'"));
      },
      [&] {
        auto f = h5loom::File::open(name, static_cast<h5loom::Mode>(mode), options(comm, engine));
        auto agree_comm = std::make_shared<AgreeComm>(f.comm());
        return new loom_file_s{std::move(f), std::move(agree_comm)};
      });
}

loom_status loom_file_create(const char* name, MPI_Comm comm, const char* engine, loom_file** out) {
  return open_file(__func__, name, LOOM_MODE_CREATE, comm, engine, out);
}
loom_status loom_file_create_exclusive(const char* name, MPI_Comm comm, const char* engine, loom_file** out) {
  return open_file(__func__, name, LOOM_MODE_CREATE_EXCLUSIVE, comm, engine, out);
}
loom_status loom_file_open(const char* name, loom_mode mode, MPI_Comm comm, const char* engine, loom_file** out) {
  return open_file(__func__, name, mode, comm, engine, out);
}
loom_status loom_file_open_f(const char* name, loom_mode mode, MPI_Fint comm, const char* engine, loom_file** out) {
  h5loom::ensure_mpi();  // MPI_Comm_f2c needs MPI
  return open_file(__func__, name, mode, MPI_Comm_f2c(comm), engine, out);
}

loom_status loom_file_flush(loom_file* f) {
  return collective(__func__, comm_of(f), [&] { need(f, "f", "file"); }, [&] { f->file.flush(); });
}

loom_status loom_file_flush_visible(loom_file* f) {
  return collective(__func__, comm_of(f), [&] { need(f, "f", "file"); },
                    [&] { f->file.flush(h5loom::FlushLevel::Visible); });
}

loom_status loom_file_flush_async(loom_file* f, int durable, loom_request** out) {
  if (out) *out = nullptr;
  return collective(__func__, comm_of(f), [&] { need(f, "f", "file"), need(out, "out", "request pointer"); },
                    [&] {
                      auto r = std::make_unique<loom_request_s>();
                      r->request = f->file.flush_async(durable ? h5loom::FlushLevel::Durable
                                                               : h5loom::FlushLevel::Visible);
                      r->agree = f->agree;
                      *out = r.release();
                    });
}

loom_status loom_test(loom_request* r, int* done) {
  return guarded(__func__, [&] {
    need(r, "r", "request"), need(done, "done", "result pointer");
    *done = r->request.test() ? 1 : 0;
  });
}

loom_status loom_wait(loom_request* r) {
  if (!r) return succeed();
  std::unique_ptr<loom_request_s> owned(r);  // freed whatever the wait does
  // Collective like the flush it waits for; its error is already the same on every rank.
  return guarded(__func__, [&] { owned->request.wait(); });
}

void loom_request_free(loom_request* r) { delete r; }

loom_status loom_file_close(loom_file* f) {
  return collective(__func__, comm_of(f), [&] { need(f, "f", "file"); },
                    [&] {
                      std::unique_ptr<loom_file_s> owned(f);  // freed whatever close does
                      owned->file.close();
                    });
}

loom_status loom_file_close_async(loom_file* f, loom_request** out) {
  if (out) *out = nullptr;
  return collective(__func__, comm_of(f), [&] { need(f, "f", "file"), need(out, "out", "request pointer"); },
                    [&] {
                      std::unique_ptr<loom_file_s> owned(f);  // freed whatever happens: the request holds the file
                      auto r = std::make_unique<loom_request_s>();
                      r->agree = owned->agree;
                      r->request = owned->file.close_async();
                      *out = r.release();
                    });
}

loom_status loom_file_rank(loom_file* f, int* rank, int* size) {
  return guarded(__func__, [&] {
    need(f, "f", "file");
    if (rank) *rank = f->file.rank();
    if (size) *size = f->file.size();
  });
}

loom_status loom_file_engine(loom_file* f, char* buf, size_t bufsize, size_t* needed) {
  return guarded(__func__, [&] {
    need(f, "f", "file");
    check_string_out(buf, bufsize);
    copy_out(f->file.engine_name(), buf, bufsize, needed);
  });
}

loom_status loom_file_root(loom_file* f, loom_group** out) {
  return guarded(__func__, [&] {
    need(f, "f", "file");
    need_out(out, "out");
    *out = new_object(h5loom::Group(f->file), f->agree);
  });
}

// ---- groups ----

loom_status loom_group_create_group(loom_group* parent, const char* path, loom_group** out) {
  return collective(
      __func__, comm_of(parent),
      [&] {
        as_group(parent);
        text(path, "path");
        need_out(out, "out");
      },
      [&] { *out = new_object(parent->group->create_group(path), parent->agree); });
}

loom_status loom_group_open_group(loom_group* parent, const char* path, loom_group** out) {
  return guarded(__func__, [&] {
    auto& g = as_group(parent);
    text(path, "path");
    need_out(out, "out");
    *out = new_object(g.group(path), parent->agree);
  });
}

loom_status loom_group_kind(loom_group* parent, const char* path, loom_kind* out) {
  return guarded(__func__, [&] {
    auto& g = as_group(parent);
    text(path, "path");
    need_out(out, "out");
    *out = static_cast<loom_kind>(g.kind(path));
  });
}

loom_status loom_group_member_count(loom_group* g, size_t* count) {
  return guarded(__func__, [&] {
    auto& group = as_group(g, "g");
    need_out(count, "count");
    g->members = group.list();
    *count = g->members.size();
  });
}

loom_status loom_group_member_name(loom_group* g, size_t index, char* buf, size_t bufsize, size_t* needed) {
  return guarded(__func__, [&] {
    auto& group = as_group(g, "g");
    check_string_out(buf, bufsize);
    copy_out(name_at(g->members, index, "member", group.path()), buf, bufsize, needed);
  });
}

loom_status loom_group_create_dataset(loom_group* parent, const char* path, loom_datatype dtype, int ndim,
                                      const uint64_t* shape, const uint64_t* max_shape, const uint64_t* chunks,
                                      loom_dataset** out) {
  h5loom::DatasetSpec spec;
  return collective(
      __func__, comm_of(parent),
      [&] {
        as_group(parent);
        text(path, "path");
        need_out(out, "out");
        spec.dtype = to_datatype(dtype);
        dataset_shape(ndim, shape, max_shape, path, spec);
        spec.chunks = dims(ndim, chunks, "chunks");
        if (chunks) {
          spec.layout = h5loom::Layout::Chunked;
          spec.layout_auto = false;
        }
      },
      [&] { *out = new_object(parent->group->create_dataset(path, spec), parent->agree); });
}

loom_status loom_group_open_dataset(loom_group* parent, const char* path, loom_dataset** out) {
  return guarded(__func__, [&] {
    auto& g = as_group(parent);
    text(path, "path");
    need_out(out, "out");
    *out = new_object(g.dataset(path), parent->agree);
  });
}

// ---- datasets ----

loom_status loom_dataset_dtype(loom_dataset* d, loom_datatype* out) {
  return guarded(__func__, [&] {
    auto& ds = as_dataset(d);
    need_out(out, "out");
    *out = static_cast<loom_datatype>(ds.dtype().scalar());
  });
}

loom_status loom_dataset_ndim(loom_dataset* d, int* out) {
  return guarded(__func__, [&] {
    auto& ds = as_dataset(d);
    need_out(out, "out");
    *out = static_cast<int>(ds.ndim());
  });
}

loom_status loom_dataset_shape(loom_dataset* d, uint64_t* shape, uint64_t* max_shape, uint64_t* chunks,
                               loom_layout* layout) {
  return guarded(__func__, [&] {
    auto& ds = as_dataset(d);
    need_out(shape, "shape");
    auto s = ds.shape(), m = ds.max_shape(), c = ds.chunks();
    for (size_t i = 0; i < s.size(); ++i) {
      shape[i] = s[i];
      if (max_shape) max_shape[i] = m[i];
      if (chunks) chunks[i] = c.empty() ? 0 : c[i];
    }
    if (layout) *layout = ds.layout() == h5loom::Layout::Chunked ? LOOM_LAYOUT_CHUNKED : LOOM_LAYOUT_CONTIGUOUS;
  });
}

namespace {
// loom_dataset_extend and _resize: the shape checked, then `change` (extend or resize).
loom_status change_shape(const char* function, loom_dataset* d, const uint64_t* new_shape,
                         void (h5loom::Dataset::*change)(const h5loom::Dims&)) {
  return collective(
      function, comm_of(d),
      [&] {
        auto& ds = as_dataset(d);
        if (!new_shape) throw h5loom::UsageError(in_call("null array 'new_shape' for dataset '" + ds.path() + "'"));
      },
      [&] { ((*d->dataset).*change)(dims(static_cast<int>(d->dataset->ndim()), new_shape, "new_shape")); });
}
}  // namespace

loom_status loom_dataset_extend(loom_dataset* d, const uint64_t* new_shape) {
  return change_shape(__func__, d, new_shape, &h5loom::Dataset::extend);
}

loom_status loom_dataset_resize(loom_dataset* d, const uint64_t* new_shape) {
  return change_shape(__func__, d, new_shape, &h5loom::Dataset::resize);
}

loom_status loom_dataset_write(loom_dataset* d, const loom_selection* sel, loom_datatype mem_type, size_t n,
                               const void* data, loom_write_mode mode) {
  return guarded(__func__, [&] {
    auto& ds = as_dataset(d);
    auto selection = to_selection(sel);
    auto type = to_datatype(mem_type, "mem_type");
    const bool copy = write_copies(n, h5loom::datatype_size(type), data, mode);
    ds.write_raw(selection, type, data, n, copy);
  });
}

loom_status loom_dataset_read(loom_dataset* d, const loom_selection* sel, loom_datatype mem_type, size_t n,
                              void* out) {
  std::optional<h5loom::Selection> selection;
  h5loom::Datatype type{};
  return collective(
      __func__, comm_of(d),
      [&] {
        as_dataset(d);
        selection = to_selection(sel);
        type = to_datatype(mem_type, "mem_type");
        fits_in_memory(n, h5loom::datatype_size(type), "n");
        need_buffer(out, n, "out");
      },
      [&] { d->dataset->read_raw(*selection, type, out, n); });
}

loom_status loom_dataset_read_independent(loom_dataset* d, const loom_selection* sel, loom_datatype mem_type,
                                          size_t n, void* out) {
  return guarded(__func__, [&] {
    auto& ds = as_dataset(d);
    auto selection = to_selection(sel);
    auto type = to_datatype(mem_type, "mem_type");
    fits_in_memory(n, h5loom::datatype_size(type), "n");
    need_buffer(out, n, "out");
    ds.read_raw_independent(selection, type, out, n);
  });
}

// ---- objects and attributes ----

loom_status loom_object_path(loom_object* o, char* buf, size_t bufsize, size_t* needed) {
  return guarded(__func__, [&] {
    auto& obj = as_object(o);
    check_string_out(buf, bufsize);
    copy_out(obj.path(), buf, bufsize, needed);
  });
}

loom_status loom_object_close(loom_object* o) {
  delete o;  // NULL: nothing to free, as free(NULL)
  return succeed();
}

loom_status loom_attr_write_scalar(loom_object* o, const char* name, loom_datatype type, const void* value) {
  h5loom::AttributeValue v;
  return collective(
      __func__, comm_of(o),
      [&] {
        as_object(o);
        text(name, "name");
        need_buffer(value, 1, "value");
        with_type(type, [&](auto tag) {
          decltype(tag) x;
          std::memcpy(&x, value, sizeof x);
          v = h5loom::AttributeValue(x);
        });
      },
      [&] { as_object(o).set_attribute(name, v); });
}

loom_status loom_attr_write_array(loom_object* o, const char* name, loom_datatype type, size_t count,
                                  const void* values) {
  h5loom::AttributeValue v;
  return collective(
      __func__, comm_of(o),
      [&] {
        as_object(o);
        text(name, "name");
        fits_in_memory(count, h5loom::datatype_size(to_datatype(type, "type")), "count");
        need_buffer(values, count, "values");
        with_type(type, [&](auto tag) {
          std::vector<decltype(tag)> xs(count);
          if (count) std::memcpy(xs.data(), values, count * sizeof(decltype(tag)));
          v = h5loom::AttributeValue(xs);
        });
      },
      [&] { as_object(o).set_attribute(name, v); });
}

loom_status loom_attr_write_string(loom_object* o, const char* name, const char* value) {
  return collective(
      __func__, comm_of(o),
      [&] {
        as_object(o);
        text(name, "name");
        text(value, "value");
      },
      [&] { as_object(o).set_attribute(name, std::string(value)); });
}

loom_status loom_attr_write_strings(loom_object* o, const char* name, size_t count, const char* const* values) {
  std::vector<std::string> strings;
  return collective(
      __func__, comm_of(o),
      [&] {
        as_object(o);
        text(name, "name");
        fits_in_memory(count, sizeof(char*), "count");
        need_buffer(values, count, "values");
        for (size_t i = 0; i < count; ++i) {
          if (!values[i])
            throw h5loom::UsageError(in_call("null string 'values[" + std::to_string(i) + "]'"));
          strings.emplace_back(values[i]);
        }
      },
      [&] { as_object(o).set_attribute(name, h5loom::AttributeValue(std::move(strings))); });
}

loom_status loom_attr_read_string_element(loom_object* o, const char* name, size_t index, char* buf, size_t bufsize,
                                          size_t* needed) {
  return guarded(__func__, [&] {
    auto& obj = as_object(o);
    text(name, "name");
    check_string_out(buf, bufsize);
    auto v = obj.attribute(name);
    copy_out(name_at(v.as_strings(), index, "string", obj.path() + "@" + name), buf, bufsize, needed);
  });
}

loom_status loom_attr_exists(loom_object* o, const char* name, int* exists) {
  return guarded(__func__, [&] {
    auto& obj = as_object(o);
    text(name, "name");
    need_out(exists, "exists");
    *exists = obj.has_attribute(name) ? 1 : 0;
  });
}

loom_status loom_attr_info(loom_object* o, const char* name, loom_attr_kind* kind, loom_datatype* type,
                           size_t* count) {
  return guarded(__func__, [&] {
    auto& obj = as_object(o);
    auto v = obj.attribute(text(name, "name"));
    if (kind) *kind = static_cast<loom_attr_kind>(v.kind());
    const bool number = (v.is_numeric() || v.is_empty()) && (v.dtype().is_scalar() || v.dtype().is_enum());
    if (type) *type = number ? static_cast<loom_datatype>(v.dtype().scalar()) : LOOM_UINT8;
    if (count) *count = v.size();
  });
}

loom_status loom_attr_read(loom_object* o, const char* name, loom_datatype mem_type, size_t count, void* out) {
  return guarded(__func__, [&] {
    auto& obj = as_object(o);
    text(name, "name");
    to_datatype(mem_type, "mem_type");
    auto v = obj.attribute(name);
    if (!v.is_numeric())
      throw h5loom::DatatypeError("attribute '" + std::string(name) + "' on '" + obj.path() + "' holds " +
                                  v.to_string() + "; read it with loom_attr_read_string(_element)");
    if (!v.dtype().is_scalar() && !v.dtype().is_enum())
      throw h5loom::DatatypeError("attribute '" + std::string(name) + "' on '" + obj.path() + "' holds " +
                                  v.dtype().name() + " values, not numbers; read it with " +
                                  (v.dtype().is_reference() ? "loom_attr_read_refs" : "loom_attr_read_typed"));
    if (count != v.size())
      throw h5loom::SelectionError("attribute '" + std::string(name) + "' on '" + obj.path() + "' holds " +
                                   std::to_string(v.size()) + " values, not " + std::to_string(count));
    need_buffer(out, count, "out");
    with_type(mem_type, [&](auto tag) {
      std::vector<decltype(tag)> xs;
      try {
        xs = v.as_vector<decltype(tag)>();
      } catch (const h5loom::DatatypeError& e) {  // a value the memory type cannot hold
        throw h5loom::DatatypeError("attribute '" + std::string(name) + "' on '" + obj.path() + "': " + e.what());
      }
      if (count) std::memcpy(out, xs.data(), count * sizeof(decltype(tag)));
    });
  });
}

loom_status loom_attr_read_string(loom_object* o, const char* name, char* buf, size_t bufsize, size_t* needed) {
  return guarded(__func__, [&] {
    auto& obj = as_object(o);
    text(name, "name");
    check_string_out(buf, bufsize);
    copy_out(obj.attribute(name).as_string(), buf, bufsize, needed);
  });
}

loom_status loom_attr_count(loom_object* o, size_t* count) {
  return guarded(__func__, [&] {
    auto& obj = as_object(o);
    need_out(count, "count");
    o->attributes = obj.attribute_names();
    *count = o->attributes.size();
  });
}

loom_status loom_attr_name(loom_object* o, size_t index, char* buf, size_t bufsize, size_t* needed) {
  return guarded(__func__, [&] {
    auto& obj = as_object(o);
    check_string_out(buf, bufsize);
    copy_out(name_at(o->attributes, index, "attribute", obj.path()), buf, bufsize, needed);
  });
}

loom_status loom_attr_delete(loom_object* o, const char* name) {
  return guarded(__func__, [&] { as_object(o).remove_attribute(text(name, "name")); });
}

loom_status loom_attr_rename(loom_object* o, const char* from, const char* to) {
  return guarded(__func__, [&] { as_object(o).rename_attribute(text(from, "from"), text(to, "to")); });
}

loom_status loom_attr_count_created(loom_object* o, size_t* count) {
  return guarded(__func__, [&] {
    auto& obj = as_object(o);
    need_out(count, "count");
    o->attributes = obj.attribute_names_in_creation_order();
    *count = o->attributes.size();
  });
}

}  // extern "C"
