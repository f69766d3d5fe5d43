// The C API's shared parts (capi_internal.hpp): the per-thread last error, the
// agreement of collective entry points across ranks, the argument checks, and
// the small functions of h5loom.h (errors, selections, datatype sizes).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "capi/capi_internal.hpp"
#include "core/mpi_util.hpp"

// guarded() returns an h5loom::Error's code as its status: both enums are made
// from the same table; this catches a hand edit of one of them.
#define H5LOOM_ERROR_KIND(Kind, C_NAME, code, Class, PyBase, meaning)                                      \
  static_assert(LOOM_ERR_##C_NAME == static_cast<int>(h5loom::ErrorCode::Kind) && LOOM_ERR_##C_NAME == code, \
                "LOOM_ERR_" #C_NAME " differs from h5loom::ErrorCode::" #Kind);
#include "h5loom/error_codes.def"
#undef H5LOOM_ERROR_KIND
static_assert(LOOM_OK == static_cast<int>(h5loom::ErrorCode::Ok), "LOOM_OK differs from h5loom::ErrorCode::Ok");

namespace h5loom::capi {

AgreeComm::~AgreeComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

// ---- the last error of this thread ----

namespace {
thread_local std::string last_message_;
thread_local loom_status last_code_ = LOOM_OK;
thread_local const char* current_function_ = "h5loom";  // the entry point running, for argument errors
}  // namespace

void enter(const char* function) noexcept { current_function_ = function; }

loom_status succeed() noexcept {
  last_code_ = LOOM_OK;
  last_message_.clear();
  return LOOM_OK;
}

loom_status fail(loom_status code, const std::string& message) {
  last_code_ = code;
  last_message_ = message;
  return code;
}

const std::string& last_message() noexcept { return last_message_; }

// ---- argument checks ----

std::string in_call(const std::string& what) { return std::string(current_function_) + ": " + what; }

void need_out(const void* p, const char* arg) {
  if (!p) throw h5loom::UsageError(in_call(std::string("null output pointer '") + arg + "'"));
}

const char* text(const char* s, const char* arg) {
  if (!s) throw h5loom::UsageError(in_call(std::string("null string '") + arg + "'"));
  return s;
}

void need_buffer(const void* p, uint64_t n, const char* arg) {
  if (!p && n)
    throw h5loom::UsageError(in_call(std::string("null buffer '") + arg + "' for " + std::to_string(n) + " elements"));
}

void fits_in_memory(uint64_t n, std::size_t size, const char* arg) {
  if (size && n > SIZE_MAX / size)
    throw h5loom::SelectionError(in_call("'" + std::string(arg) + "' = " + std::to_string(n) + " elements of " +
                                         std::to_string(size) + " bytes overflows the address space "
                                         "(a negative count?)"));
}

h5loom::Datatype to_datatype(loom_datatype t, const char* arg) {
  if (static_cast<int>(t) < 0 || static_cast<int>(t) > LOOM_FLOAT16)
    throw h5loom::DatatypeError(in_call("invalid loom_datatype value " + std::to_string(static_cast<int>(t)) +
                                        " for '" + arg + "'"));
  return static_cast<h5loom::Scalar>(t);
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

bool write_copies(size_t n, std::size_t element_size, const void* data, loom_write_mode mode) {
  fits_in_memory(n, element_size, "n");
  need_buffer(data, n, "data");
  if (mode != LOOM_WRITE_DEFERRED && mode != LOOM_WRITE_COPY)
    throw h5loom::UsageError(in_call("invalid loom_write_mode value " + std::to_string(static_cast<int>(mode)) +
                                     " for 'mode'"));
  return mode == LOOM_WRITE_COPY;
}

void dataset_shape(int ndim, const uint64_t* shape, const uint64_t* max_shape, const char* path,
                   h5loom::DatasetSpec& spec) {
  check_ndim(ndim, "ndim");
  if (!shape) throw h5loom::UsageError(in_call("null array 'shape' for dataset '" + std::string(path) + "'"));
  spec.shape = dims(ndim, shape, "shape");
  spec.max_shape = dims(ndim, max_shape, "max_shape");
}

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

const std::string& name_at(const std::vector<std::string>& names, size_t index, const char* what,
                           const std::string& path) {
  if (index >= names.size())
    throw h5loom::SelectionError(std::string(what) + " index " + std::to_string(index) + " out of range for '" + path +
                                 "' with " + std::to_string(names.size()) + " " + what + "s (call loom_" +
                                 (std::string(what) == "member" ? "group_member" : "attr") + "_count first)");
  return names[index];
}

h5loom::FileOptions options(MPI_Comm comm, const char* engine) {
  h5loom::FileOptions o;
  o.comm = comm;
  o.engine = engine ? engine : "";
  return o;
}

MPI_Comm opening_comm(MPI_Comm comm) {
  if (comm == MPI_Comm()) return MPI_COMM_NULL;
  return comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm;
}

void check_comm(MPI_Comm comm) {
  if (comm == MPI_Comm()) throw h5loom::UsageError(in_call("invalid communicator 'comm'"));
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

// ---- agreement ----

namespace {

// The collective entry points that agree. The index is what the ranks compare
// to find out that they are in different calls.
const char* const kCollective[] = {
    "loom_file_create", "loom_file_create_exclusive", "loom_file_open", "loom_file_open_f", "loom_file_flush",
    "loom_file_close", "loom_group_create_group", "loom_group_create_dataset", "loom_dataset_extend",
    "loom_dataset_read", "loom_attr_write_scalar", "loom_attr_write_array", "loom_attr_write_string",
    "loom_attr_write_strings", "loom_series_create", "loom_series_append", "loom_series_open", "loom_series_close",
    "loom_series_write_step", "loom_step_end", "loom_particles_set_local_count", "loom_particles_read_range",
    "loom_particles_read_indices", "loom_step_create_field", "loom_field_read", "loom_file_flush_visible",
    "loom_group_create_dataset_typed", "loom_dataset_read_typed", "loom_group_remove", "loom_group_move",
    "loom_group_create_soft_link", "loom_group_reference", "loom_group_dereference", "loom_dataset_read_strings",
    "loom_attr_write_ref", "loom_attr_write_refs", "loom_attr_write_typed", "loom_dataset_resize",
    "loom_group_create_hard_link", "loom_file_copy_object", "loom_group_create_external_link",
    "loom_file_flush_async", "loom_decomposition_from_map", "loom_decomposition_from_file",
    "loom_rearrangement_create", "loom_darray_write", "loom_darray_read", "loom_nc_create", "loom_nc_open",
    "loom_nc_create_f", "loom_nc_open_f", "loom_nc_def_dim", "loom_nc_def_var", "loom_nc_def_var_chunking",
    "loom_nc_def_var_deflate", "loom_nc_def_var_fill", "loom_nc_enddef", "loom_nc_redef", "loom_nc_put_att",
    "loom_nc_put_att_text", "loom_nc_set_records", "loom_nc_get_vara", "loom_nc_write_darray",
    "loom_nc_read_darray", "loom_nc_sync", "loom_nc_close", "loom_nc_get_att", "loom_nc_get_att_text",
    "loom_file_close_async"};
constexpr int kCollectiveCount = sizeof kCollective / sizeof kCollective[0];

int collective_id(const char* function) {
  for (int i = 0; i < kCollectiveCount; ++i)
    if (std::strcmp(kCollective[i], function) == 0) return i;
  return kCollectiveCount;  // not reached: every caller is in the list
}

const char* collective_name(int id) { return id >= 0 && id < kCollectiveCount ? kCollective[id] : "?"; }

}  // namespace

// In a job of more than one rank the others may be waiting for this one in a
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
               rank, loom_status_name(status), last_message_.c_str(), rank);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, status);
  return status;
}

// Every rank says whether its checks passed, and which function it is in. All
// ranks leave with the same outcome: LOOM_OK, or the error of the lowest failing
// rank (each failing rank keeps its own).
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
  int head[2] = {mine, static_cast<int>(last_message_.size())};
  MPI_Bcast(head, 2, MPI_INT, root, comm);
  std::string message = rank == root ? last_message_ : std::string(static_cast<std::size_t>(head[1]), '\0');
  MPI_Bcast(message.data(), head[1], MPI_CHAR, root, comm);
  if (mine != LOOM_OK) return mine;
  return fail(head[0], message + " (on rank " + std::to_string(root) + "; every rank returns this error)");
}

}  // namespace h5loom::capi

using namespace h5loom::capi;

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

const char* loom_last_error_message(void) { return last_message_.c_str(); }
loom_status loom_last_error_code(void) { return last_code_; }

const char* loom_status_name(loom_status status) {
  switch (status) {
    case LOOM_OK: return "LOOM_OK";
#define H5LOOM_ERROR_KIND(Kind, C_NAME, code, Class, PyBase, meaning) \
  case LOOM_ERR_##C_NAME: return "LOOM_ERR_" #C_NAME;
#include "h5loom/error_codes.def"
#undef H5LOOM_ERROR_KIND
  }
  return "LOOM_ERR_UNKNOWN";
}

size_t loom_datatype_size(loom_datatype t) {
  if (static_cast<int>(t) < 0 || static_cast<int>(t) > LOOM_FLOAT16) return 0;
  return h5loom::scalar_size(static_cast<h5loom::Scalar>(t));
}

}  // extern "C"
