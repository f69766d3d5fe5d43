// The C API (include/h5loom/h5loom.h): every entry point runs its body through
// guarded(), which turns any exception into a status code and a per-thread
// message (H5hut's enter/leave macro pair, as a function).
#include "h5loom/h5loom.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/mpi_util.hpp"
#include "h5loom/h5loom.hpp"
#include "h5loom/series.hpp"

// One communicator per file for the C API's own agreement step (a duplicate of
// the file's, so that the step can never match a collective call of the
// engine). The file handle and every handle made from it share it; it goes with
// the last one.
struct AgreeComm {
  MPI_Comm comm = MPI_COMM_NULL;
  explicit AgreeComm(MPI_Comm of) { MPI_Comm_dup(of, &comm); }
  AgreeComm(const AgreeComm&) = delete;
  AgreeComm& operator=(const AgreeComm&) = delete;
  ~AgreeComm() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};
using SharedComm = std::shared_ptr<AgreeComm>;

struct loom_file_s {
  h5loom::File file;
  SharedComm agree;
};

struct loom_object_s {
  std::optional<h5loom::Group> group;
  std::optional<h5loom::Dataset> dataset;
  std::vector<std::string> members;     // taken by loom_group_member_count
  std::vector<std::string> attributes;  // taken by loom_attr_count
  SharedComm agree;
};

struct loom_series_s {
  h5loom::Series series;
  std::vector<uint64_t> steps;  // taken by loom_series_step_count
  SharedComm agree;
};
struct loom_step_s {
  h5loom::Step step;
  SharedComm agree;
};
struct loom_particles_s {
  h5loom::ParticleSpecies particles;
  SharedComm agree;
};
struct loom_field_s {
  h5loom::Field field;
  SharedComm agree;
};

namespace {

thread_local std::string last_message;
thread_local loom_status last_code = LOOM_OK;
thread_local const char* current_function = "h5loom";  // the entry point running, for argument errors

loom_status fail(loom_status code, const std::string& message) {
  last_code = code;
  last_message = message;
  return code;
}

template <class F>
loom_status guarded(const char* function, F&& body) noexcept {
  current_function = function;
  try {
    body();
    last_code = LOOM_OK;
    last_message.clear();
    return LOOM_OK;
  } catch (const h5loom::Error& e) {
    return fail(static_cast<loom_status>(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(LOOM_ERR_GENERIC, std::string(function) + ": out of memory");
  } catch (const std::exception& e) {
    return fail(LOOM_ERR_GENERIC, e.what());
  } catch (...) {
    return fail(LOOM_ERR_GENERIC, "unknown error");
  }
}

// ---- argument checks: each error names the function and the argument ----

std::string in_call(const std::string& what) { return std::string(current_function) + ": " + what; }

template <class T>
T* need(T* p, const char* arg, const char* what) {
  if (!p) throw h5loom::UsageError(in_call(std::string("null ") + what + " handle '" + arg + "'"));
  return p;
}

void need_out(const void* p, const char* arg) {
  if (!p) throw h5loom::UsageError(in_call(std::string("null output pointer '") + arg + "'"));
}

const char* text(const char* s, const char* arg) {
  if (!s) throw h5loom::UsageError(in_call(std::string("null string '") + arg + "'"));
  return s;
}

// A buffer of n elements: NULL only when there is nothing to transfer.
void need_buffer(const void* p, uint64_t n, const char* arg) {
  if (!p && n)
    throw h5loom::UsageError(in_call(std::string("null buffer '") + arg + "' for " + std::to_string(n) + " elements"));
}

// n elements of `size` bytes must fit in memory: a negative count passed to a
// size_t parameter arrives as a huge one.
void fits_in_memory(uint64_t n, std::size_t size, const char* arg) {
  if (size && n > SIZE_MAX / size)
    throw h5loom::SelectionError(in_call("'" + std::string(arg) + "' = " + std::to_string(n) + " elements of " +
                                         std::to_string(size) + " bytes overflows the address space "
                                         "(a negative count?)"));
}

h5loom::Datatype to_datatype(loom_datatype t, const char* arg = "dtype") {
  if (static_cast<int>(t) < 0 || static_cast<int>(t) > LOOM_FLOAT64)
    throw h5loom::DatatypeError(in_call("invalid loom_datatype value " + std::to_string(static_cast<int>(t)) +
                                        " for '" + arg + "'"));
  return static_cast<h5loom::Scalar>(t);
}

// Calls f(T{}) with the C++ type of a loom_datatype.
template <class F>
void with_type(loom_datatype t, F&& f) {
  h5loom::dispatch_scalar(to_datatype(t, "type").scalar(), [&](auto v) {
    f(v);
    return 0;
  });
}

void check_ndim(int ndim, const char* arg) {
  if (ndim < 0 || ndim > LOOM_MAX_RANK)
    throw h5loom::SelectionError(in_call("invalid number of dimensions " + std::to_string(ndim) + " for '" + arg +
                                         "' (0 to " + std::to_string(LOOM_MAX_RANK) + ")"));
}

h5loom::Dims dims(int ndim, const uint64_t* p, const char* arg) {
  check_ndim(ndim, arg);
  if (!p) return {};
  return h5loom::Dims(p, p + ndim);
}

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

// A string out: NULL buf asks for the length only (bufsize must then be 0).
void check_string_out(const char* buf, size_t bufsize) {
  if (!buf && bufsize)
    throw h5loom::UsageError(in_call("null buffer 'buf' with bufsize " + std::to_string(bufsize)));
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

h5loom::Group& as_group(loom_object* o, const char* arg = "parent") {
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

loom_object* new_object(h5loom::Group g, SharedComm agree) {
  auto* o = new loom_object_s;
  o->group = std::move(g);
  o->agree = std::move(agree);
  return o;
}

loom_object* new_object(h5loom::Dataset d, SharedComm agree) {
  auto* o = new loom_object_s;
  o->dataset = std::move(d);
  o->agree = std::move(agree);
  return o;
}

h5loom::FileOptions options(MPI_Comm comm, const char* engine) {
  h5loom::FileOptions o;
  o.comm = comm;
  o.engine = engine ? engine : "";
  return o;
}

// ---- agreement: an error on some ranks of a collective call is returned on all ----

// The collective entry points that agree. The index is what the ranks compare
// to find out that they are in different calls.
const char* const kCollective[] = {
    "loom_file_create", "loom_file_create_exclusive", "loom_file_open", "loom_file_open_f", "loom_file_flush",
    "loom_file_close", "loom_group_create_group", "loom_group_create_dataset", "loom_dataset_extend",
    "loom_dataset_read", "loom_attr_write_scalar", "loom_attr_write_array", "loom_attr_write_string",
    "loom_attr_write_strings", "loom_series_create", "loom_series_append", "loom_series_open", "loom_series_close",
    "loom_series_write_step", "loom_step_end", "loom_particles_set_local_count", "loom_particles_read_range",
    "loom_particles_read_indices", "loom_step_create_field", "loom_field_read"};
constexpr int kCollectiveCount = sizeof kCollective / sizeof kCollective[0];

int collective_id(const char* function) {
  for (int i = 0; i < kCollectiveCount; ++i)
    if (std::strcmp(kCollective[i], function) == 0) return i;
  return kCollectiveCount;  // not reached: every caller is in the list
}

const char* collective_name(int id) { return id >= 0 && id < kCollectiveCount ? kCollective[id] : "?"; }

// An error this rank cannot agree on with the others: a NULL handle (no
// communicator to agree on), or ranks found in different collective calls. In
// a job of more than one rank the others may be waiting for this one in a
// collective call forever, so the job ends here, with the message, unless
// H5LOOM_ABORT_ON_ERROR=0 (then the caller gets the status and must make sure
// no rank waits).
loom_status unagreed(loom_status status) {
  if (status == LOOM_OK || !h5loom::mpi::abort_on_error()) return status;
  int initialized = 0, finalized = 0, size = 1, rank = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return status;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) return status;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr,
               "h5loom: rank %d: %s: %s\nh5loom: rank %d ends the job (MPI_Abort): the other ranks may be waiting "
               "for it in a collective call (H5LOOM_ABORT_ON_ERROR=0 returns the error instead)\n",
               rank, loom_status_name(status), last_message.c_str(), rank);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, status);
  return status;
}

// Collective over comm: every rank says whether its checks passed, and which
// function it is in. All ranks leave with the same outcome: LOOM_OK, or the
// error of the lowest failing rank (each failing rank keeps its own).
loom_status agree(const char* function, MPI_Comm comm, loom_status mine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size == 1) return mine;
  const int id = collective_id(function);
  int v[3] = {mine != LOOM_OK ? size - rank : 0, id, -id}, all[3] = {0, 0, 0};
  MPI_Allreduce(v, all, 3, MPI_INT, MPI_MAX, comm);
  if (all[1] != -all[2])
    return unagreed(fail(LOOM_ERR_COLLECTIVE_MISMATCH,
                         std::string(function) + ": the ranks of the communicator are in different collective calls (" +
                             collective_name(-all[2]) + " and " + collective_name(all[1]) +
                             "): every rank must make the same collective calls in the same order"));
  if (all[0] == 0) return LOOM_OK;
  const int root = size - all[0];
  int head[2] = {mine, static_cast<int>(last_message.size())};
  MPI_Bcast(head, 2, MPI_INT, root, comm);
  std::string message = rank == root ? last_message : std::string(static_cast<std::size_t>(head[1]), '\0');
  MPI_Bcast(message.data(), head[1], MPI_CHAR, root, comm);
  if (mine != LOOM_OK) return mine;
  return fail(head[0], message + " (on rank " + std::to_string(root) + "; every rank returns this error)");
}

// A collective entry point: `check` looks at the arguments only (and throws),
// then the ranks agree, then `body` does the work on all of them or on none.
// comm: the handle's agreement communicator, MPI_COMM_NULL if the handle is NULL.
template <class Check, class Body>
loom_status collective(const char* function, MPI_Comm comm, Check&& check, Body&& body) noexcept {
  loom_status status = guarded(function, check);
  if (comm == MPI_COMM_NULL) return unagreed(status);
  status = agree(function, comm, status);
  if (status != LOOM_OK) return status;
  return guarded(function, body);
}

template <class Handle>
MPI_Comm comm_of(const Handle* h) {
  return h && h->agree ? h->agree->comm : MPI_COMM_NULL;
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
  return h5loom::scalar_size(static_cast<h5loom::Scalar>(t));
}

// ---- files ----

// The open calls agree over the communicator they are given (no handle yet).
static loom_status open_file(const char* function, const char* name, loom_mode mode, MPI_Comm comm,
                             const char* engine, loom_file** out) {
  h5loom::ensure_mpi();
  if (out) *out = nullptr;
  const bool invalid_comm = comm == MPI_Comm();  // what MPI_Comm_f2c gives for an unknown Fortran handle
  const MPI_Comm over = invalid_comm ? MPI_COMM_NULL : comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm;
  return collective(
      function, over,
      [&] {
        if (invalid_comm) throw h5loom::UsageError(in_call("invalid communicator 'comm'"));
        need_out(out, "out");
        text(name, "name");
        if (static_cast<int>(mode) < 0 || static_cast<int>(mode) > LOOM_MODE_CREATE_EXCLUSIVE)
          throw h5loom::UsageError(in_call("invalid loom_mode value " + std::to_string(static_cast<int>(mode)) +
                                           " for 'mode'"));
      },
      [&] {
        auto f = h5loom::File::open(name, static_cast<h5loom::Mode>(mode), options(comm, engine));
        auto agree_comm = std::make_shared<AgreeComm>(f.comm());
        *out = new loom_file_s{std::move(f), std::move(agree_comm)};
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

loom_status loom_file_close(loom_file* f) {
  return collective(__func__, comm_of(f), [&] { need(f, "f", "file"); },
                    [&] {
                      std::unique_ptr<loom_file_s> owned(f);  // freed whatever close does
                      owned->file.close();
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
        check_ndim(ndim, "ndim");
        if (!shape) throw h5loom::UsageError(in_call("null array 'shape' for dataset '" + std::string(path) + "'"));
        spec.shape = dims(ndim, shape, "shape");
        spec.max_shape = dims(ndim, max_shape, "max_shape");
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

loom_status loom_dataset_extend(loom_dataset* d, const uint64_t* new_shape) {
  return collective(
      __func__, comm_of(d),
      [&] {
        auto& ds = as_dataset(d);
        if (!new_shape) throw h5loom::UsageError(in_call("null array 'new_shape' for dataset '" + ds.path() + "'"));
      },
      [&] { d->dataset->extend(dims(static_cast<int>(d->dataset->ndim()), new_shape, "new_shape")); });
}

loom_status loom_dataset_write(loom_dataset* d, const loom_selection* sel, loom_datatype mem_type, size_t n,
                               const void* data, loom_write_mode mode) {
  return guarded(__func__, [&] {
    auto& ds = as_dataset(d);
    auto selection = to_selection(sel);
    auto type = to_datatype(mem_type, "mem_type");
    fits_in_memory(n, h5loom::datatype_size(type), "n");
    need_buffer(data, n, "data");
    if (mode != LOOM_WRITE_DEFERRED && mode != LOOM_WRITE_COPY)
      throw h5loom::UsageError(in_call("invalid loom_write_mode value " + std::to_string(static_cast<int>(mode)) +
                                       " for 'mode'"));
    ds.write_raw(selection, type, data, n, mode == LOOM_WRITE_COPY);
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
  last_code = LOOM_OK;
  last_message.clear();
  return LOOM_OK;
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
    if (type) *type = v.is_numeric() ? static_cast<loom_datatype>(v.dtype().scalar()) : LOOM_UINT8;
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
    if (count != v.size())
      throw h5loom::SelectionError("attribute '" + std::string(name) + "' on '" + obj.path() + "' holds " +
                                   std::to_string(v.size()) + " values, not " + std::to_string(count));
    need_buffer(out, count, "out");
    with_type(mem_type, [&](auto tag) {
      auto xs = v.as_vector<decltype(tag)>();
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

// ---- series ----

static h5loom::SeriesLayout to_layout(loom_series_layout l) {
  if (l != LOOM_SERIES_OPENPMD && l != LOOM_SERIES_H5PART)
    throw h5loom::ConfigError(in_call("invalid loom_series_layout value " + std::to_string(static_cast<int>(l)) +
                                      " for 'layout'"));
  return l == LOOM_SERIES_H5PART ? h5loom::SeriesLayout::H5Part : h5loom::SeriesLayout::OpenPMD;
}

// create, append and open: agreed over the communicator they are given.
static loom_status open_series(const char* function, const char* name, MPI_Comm comm, loom_series** out,
                               const std::function<void()>& more_checks,
                               const std::function<h5loom::Series()>& open) {
  h5loom::ensure_mpi();
  if (out) *out = nullptr;
  return collective(
      function, comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm,
      [&] {
        need_out(out, "out");
        text(name, "name");
        more_checks();
      },
      [&] {
        h5loom::Series s = open();
        auto agree_comm = std::make_shared<AgreeComm>(s.file().comm());
        *out = new loom_series_s{std::move(s), {}, std::move(agree_comm)};
      });
}

loom_status loom_series_create(const char* name, MPI_Comm comm, const char* engine, loom_series_layout layout,
                               loom_series** out) {
  return open_series(__func__, name, comm, out, [&] { to_layout(layout); }, [&] {
    h5loom::SeriesOptions o;
    o.file = options(comm, engine);
    o.layout = to_layout(layout);
    return h5loom::Series::create(name, o);
  });
}

loom_status loom_series_append(const char* name, MPI_Comm comm, const char* engine, loom_series** out) {
  return open_series(__func__, name, comm, out, [] {},
                     [&] { return h5loom::Series::append(name, options(comm, engine)); });
}

loom_status loom_series_open(const char* name, MPI_Comm comm, const char* engine, loom_series** out) {
  return open_series(__func__, name, comm, out, [] {},
                     [&] { return h5loom::Series::open(name, options(comm, engine)); });
}

loom_status loom_series_close(loom_series* s) {
  return collective(__func__, comm_of(s), [&] { need(s, "s", "series"); },
                    [&] {
                      std::unique_ptr<loom_series_s> owned(s);
                      owned->series.close();
                    });
}

loom_status loom_series_layout_of(loom_series* s, loom_series_layout* out) {
  return guarded(__func__, [&] {
    need(s, "s", "series");
    need_out(out, "out");
    *out = s->series.layout() == h5loom::SeriesLayout::H5Part ? LOOM_SERIES_H5PART : LOOM_SERIES_OPENPMD;
  });
}

loom_status loom_series_root(loom_series* s, loom_group** out) {
  return guarded(__func__, [&] {
    need(s, "s", "series");
    need_out(out, "out");
    *out = new_object(h5loom::Group(s->series.file()), s->agree);
  });
}

loom_status loom_series_step_count(loom_series* s, size_t* count) {
  return guarded(__func__, [&] {
    need(s, "s", "series");  // before anything reads through it
    need_out(count, "count");
    s->steps = s->series.steps();
    *count = s->steps.size();
  });
}

loom_status loom_series_step_number(loom_series* s, size_t index, uint64_t* step) {
  return guarded(__func__, [&] {
    need(s, "s", "series");
    need_out(step, "step");
    if (index >= s->steps.size())
      throw h5loom::SelectionError("step index " + std::to_string(index) + " out of range for series '" +
                                   s->series.file().filename() + "' with " + std::to_string(s->steps.size()) +
                                   " steps (call loom_series_step_count first)");
    *step = s->steps[index];
  });
}

loom_status loom_series_write_step(loom_series* s, uint64_t n, double time, double dt, loom_step** out) {
  return collective(
      __func__, comm_of(s),
      [&] {
        need(s, "s", "series");
        need_out(out, "out");
      },
      [&] { *out = new loom_step_s{s->series.write_step(n, time, dt), s->agree}; });
}

loom_status loom_series_step(loom_series* s, uint64_t n, loom_step** out) {
  return guarded(__func__, [&] {
    need(s, "s", "series");
    need_out(out, "out");
    *out = new loom_step_s{s->series.step(n), s->agree};
  });
}

loom_status loom_step_time(loom_step* st, double* time, double* dt) {
  return guarded(__func__, [&] {
    need(st, "st", "step");
    if (time) *time = st->step.time();
    if (dt) *dt = st->step.dt();
  });
}

loom_status loom_step_group(loom_step* st, loom_group** out) {
  return guarded(__func__, [&] {
    need(st, "st", "step");
    need_out(out, "out");
    *out = new_object(st->step.group(), st->agree);
  });
}

loom_status loom_step_end(loom_step* st) {
  return collective(__func__, comm_of(st), [&] { need(st, "st", "step"); }, [&] { st->step.close(); });
}

loom_status loom_step_free(loom_step* st) {
  delete st;  // NULL: nothing to free, as free(NULL)
  return guarded(__func__, [] {});
}

loom_status loom_step_particles(loom_step* st, const char* species, loom_particles** out) {
  return guarded(__func__, [&] {
    need(st, "st", "step");
    text(species, "species");
    need_out(out, "out");
    *out = new loom_particles_s{st->step.particles(species), st->agree};
  });
}

loom_status loom_particles_set_local_count(loom_particles* p, uint64_t n, uint64_t* offset, uint64_t* global) {
  return collective(
      __func__, comm_of(p), [&] { need(p, "p", "particles"); },
      [&] {
        // The global count is a sum over the ranks: it must not wrap (a
        // negative count passed as uint64_t is a huge one). The sum is exact
        // in two 32-bit halves, and the same on every rank, so every rank
        // raises the same error.
        unsigned long long halves[2] = {n >> 32, n & 0xffffffffu}, sums[2] = {0, 0};
        MPI_Allreduce(halves, sums, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, p->agree->comm);
        if (sums[0] + (sums[1] >> 32) > 0xffffffffu)
          throw h5loom::SelectionError(in_call("the local counts 'n' of the ranks add up to more than 2^64 - 1 "
                                               "particles (this rank: " + std::to_string(n) + "; a negative count?)"));
        auto& sp = p->particles;
        sp.set_local_count(n);
        if (offset) *offset = sp.offset();
        if (global) *global = sp.global_count();
      });
}

loom_status loom_particles_write(loom_particles* p, const char* array, loom_datatype dtype, const void* data) {
  return guarded(__func__, [&] {
    need(p, "p", "particles");
    text(array, "array");
    auto type = to_datatype(dtype);
    need_buffer(data, p->particles.local_count(), "data");
    p->particles.write_raw(array, type, data, nullptr);
  });
}

loom_status loom_particles_global_count(loom_particles* p, uint64_t* out) {
  return guarded(__func__, [&] {
    need(p, "p", "particles");
    need_out(out, "out");
    *out = p->particles.global_count();
  });
}

loom_status loom_particles_read_range(loom_particles* p, const char* array, loom_datatype dtype, uint64_t begin,
                                      uint64_t end, void* out) {
  h5loom::Datatype type{};
  return collective(
      __func__, comm_of(p),
      [&] {
        need(p, "p", "particles");
        text(array, "array");
        type = to_datatype(dtype);
        if (end < begin)
          throw h5loom::SelectionError(in_call("'end' " + std::to_string(end) + " is before 'begin' " +
                                               std::to_string(begin)));
        fits_in_memory(end - begin, h5loom::datatype_size(type), "end - begin");
        need_buffer(out, end - begin, "out");
      },
      [&] { p->particles.read_range_raw(array, begin, end, type, out); });
}

loom_status loom_particles_read_indices(loom_particles* p, const char* array, loom_datatype dtype, size_t count,
                                        const uint64_t* indices, void* out) {
  h5loom::Datatype type{};
  return collective(
      __func__, comm_of(p),
      [&] {
        need(p, "p", "particles");
        text(array, "array");
        type = to_datatype(dtype);
        fits_in_memory(count, std::max(sizeof(uint64_t), h5loom::datatype_size(type)), "count");
        need_buffer(indices, count, "indices");
        need_buffer(out, count, "out");
      },
      [&] {
        std::vector<uint64_t> idx(indices, indices + count);
        p->particles.read_indices_raw(array, idx, type, out);
      });
}

loom_status loom_particles_my_share(loom_particles* p, uint64_t* begin, uint64_t* end) {
  return guarded(__func__, [&] {
    auto [b, e] = need(p, "p", "particles")->particles.my_share();
    if (begin) *begin = b;
    if (end) *end = e;
  });
}

loom_status loom_particles_free(loom_particles* p) {
  delete p;  // NULL: nothing to free, as free(NULL)
  return guarded(__func__, [] {});
}

loom_status loom_step_create_field(loom_step* st, const char* name, int ndim, const uint64_t* global_shape,
                                   int components, loom_datatype dtype, const double* origin, const double* spacing,
                                   loom_field** out) {
  h5loom::FieldSpec spec;
  return collective(
      __func__, comm_of(st),
      [&] {
        need(st, "st", "step");
        text(name, "name");
        need_out(out, "out");
        check_ndim(ndim, "ndim");
        if (!global_shape)
          throw h5loom::UsageError(in_call("null array 'global_shape' for field '" + std::string(name) + "'"));
        spec.global_shape = dims(ndim, global_shape, "global_shape");
        if (components != 1 && components != 3)
          throw h5loom::SelectionError(in_call("'components' is " + std::to_string(components) +
                                               " for field '" + name + "': 1 (scalar) or 3 (vector)"));
        spec.components = components;
        spec.dtype = to_datatype(dtype);
        if (origin) spec.origin.assign(origin, origin + ndim);
        if (spacing) spec.spacing.assign(spacing, spacing + ndim);
      },
      [&] { *out = new loom_field_s{st->step.field(name, spec), st->agree}; });
}

loom_status loom_step_open_field(loom_step* st, const char* name, loom_field** out) {
  return guarded(__func__, [&] {
    need(st, "st", "step");
    text(name, "name");
    need_out(out, "out");
    const h5loom::Step& step = st->step;
    *out = new loom_field_s{step.field(name), st->agree};
  });
}

loom_status loom_field_info(loom_field* f, int* ndim, uint64_t* shape, int* components, loom_datatype* dtype) {
  return guarded(__func__, [&] {
    auto& fld = need(f, "f", "field")->field;
    if (ndim) *ndim = static_cast<int>(fld.global_shape().size());
    if (shape) std::copy(fld.global_shape().begin(), fld.global_shape().end(), shape);
    if (components) *components = fld.components();
    if (dtype) *dtype = static_cast<loom_datatype>(fld.dtype().scalar());
  });
}

// A box's end (start + size, or + twice a ghost or halo width) must not wrap:
// the checks below it would pass and the copy would leave the buffers.
static void check_box_end(uint64_t start, uint64_t size, uint64_t width, const char* what) {
  if (width > (UINT64_MAX - size) / 2 || start > UINT64_MAX - size - 2 * width)
    throw h5loom::SelectionError(in_call(std::string(what) + " overflows: start " + std::to_string(start) +
                                         ", size " + std::to_string(size) + ", width " + std::to_string(width)));
}

loom_status loom_field_write(loom_field* f, int component, loom_datatype dtype, const void* local,
                             const uint64_t* local_shape, const uint64_t* offset, uint64_t ghost) {
  return guarded(__func__, [&] {
    auto& fld = need(f, "f", "field")->field;
    int nd = static_cast<int>(fld.global_shape().size());
    if (!local_shape) throw h5loom::UsageError(in_call("null array 'local_shape' for field '" + fld.name() + "'"));
    if (!offset) throw h5loom::UsageError(in_call("null array 'offset' for field '" + fld.name() + "'"));
    if (component < 0)
      throw h5loom::SelectionError(in_call("'component' is " + std::to_string(component) + " for field '" +
                                           fld.name() + "'"));
    auto type = to_datatype(dtype);
    uint64_t elements = 1;
    for (int k = 0; k < nd; ++k) {
      check_box_end(offset[k], 0, ghost, "'offset' plus the ghost width");
      fits_in_memory(elements, local_shape[k] ? local_shape[k] : 1, "local_shape");
      elements *= local_shape[k];
    }
    fits_in_memory(elements, h5loom::datatype_size(type), "local_shape");
    need_buffer(local, elements, "local");
    fld.write_raw(type, local, dims(nd, local_shape, "local_shape"), dims(nd, offset, "offset"), ghost, component);
  });
}

loom_status loom_field_read(loom_field* f, int component, loom_datatype dtype, const uint64_t* lo,
                            const uint64_t* count, uint64_t halo, const void* fill, void* out) {
  h5loom::Datatype type{};
  return collective(
      __func__, comm_of(f),
      [&] {
        auto& fld = need(f, "f", "field")->field;
        int nd = static_cast<int>(fld.global_shape().size());
        if (!lo) throw h5loom::UsageError(in_call("null array 'lo' for field '" + fld.name() + "'"));
        if (!count) throw h5loom::UsageError(in_call("null array 'count' for field '" + fld.name() + "'"));
        if (component < 0)
          throw h5loom::SelectionError(in_call("'component' is " + std::to_string(component) + " for field '" +
                                               fld.name() + "'"));
        type = to_datatype(dtype);
        uint64_t padded = 1, box = 1;
        for (int k = 0; k < nd; ++k) {
          check_box_end(lo[k], count[k], halo, "the box 'lo' + 'count' plus the halo");
          box *= count[k] ? 1 : 0;
          const uint64_t side = count[k] + 2 * halo;
          fits_in_memory(padded, side ? side : 1, "count + 2 * halo");
          padded *= side;
        }
        if (box) {
          fits_in_memory(padded, h5loom::datatype_size(type), "count + 2 * halo");
          need_buffer(out, padded, "out");
        }
      },
      [&] {
        std::vector<unsigned char> zero(8, 0);
        f->field.read_raw(type, out, dims(static_cast<int>(f->field.global_shape().size()), lo, "lo"),
                          dims(static_cast<int>(f->field.global_shape().size()), count, "count"), halo,
                          fill ? fill : zero.data(), component);
      });
}

loom_status loom_field_free(loom_field* f) {
  delete f;  // NULL: nothing to free, as free(NULL)
  return guarded(__func__, [] {});
}

}  // extern "C"
