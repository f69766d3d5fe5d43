// What the C API's files share: the handle types of the core API, the per-thread
// last error, the guard that turns exceptions into a status, the agreement of a
// collective entry point across ranks, and the argument checks.
//
// Files: capi_common.cpp (errors, agreement, argument checks, the small
// functions of h5loom.h), capi_core.cpp (files, groups, datasets, attributes),
// capi_types.cpp (loom_type: compounds, strings, enums, references; typed
// datasets), capi_links.cpp (links), capi_refs.cpp (object references,
// variable-length strings, typed attributes), capi_series.cpp (series, steps,
// particles, fields), capi_pio.cpp (PIO decompositions and rearrangers),
// capi_netcdf.cpp (netCDF files).
#pragma once

#include "h5loom/h5loom.h"

#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "h5loom/h5loom.hpp"
#include "h5loom/pio.hpp"

namespace h5loom::capi {

// One communicator per file for the C API's own agreement step (a duplicate of
// the file's, so that the step can never match a collective call of the
// engine). The file handle and every handle made from it share it; it goes with
// the last one.
struct AgreeComm {
  MPI_Comm comm = MPI_COMM_NULL;
  explicit AgreeComm(MPI_Comm of) { MPI_Comm_dup(of, &comm); }
  AgreeComm(const AgreeComm&) = delete;
  AgreeComm& operator=(const AgreeComm&) = delete;
  ~AgreeComm();
};
using SharedComm = std::shared_ptr<AgreeComm>;

}  // namespace h5loom::capi

struct loom_file_s {
  h5loom::File file;
  h5loom::capi::SharedComm agree;
};

struct loom_request_s {
  h5loom::Request request;
  h5loom::capi::SharedComm agree;  // the file's: a flush's wait is collective
};

struct loom_object_s {
  std::optional<h5loom::Group> group;
  std::optional<h5loom::Dataset> dataset;
  std::vector<std::string> members;     // taken by loom_group_member_count
  std::vector<std::string> attributes;  // taken by loom_attr_count
  h5loom::capi::SharedComm agree;
};

// PIO's handles (capi_pio.cpp); the netCDF calls write through rearrangements too.
struct loom_decomposition_s {
  h5loom::pio::Decomposition decomposition;
  h5loom::capi::SharedComm agree;
};
struct loom_rearrangement_s {
  h5loom::pio::Rearrangement rearrangement;
  h5loom::capi::SharedComm agree;
};

// A datatype of any class (capi_types.cpp builds them).
struct loom_type_s {
  h5loom::Datatype type;
  // Being built: the members or names so far (the type is remade with each).
  std::size_t compound_size = 0;
  std::vector<h5loom::Member> members;
  std::vector<std::pair<std::string, int64_t>> values;
  bool enumeration = false;  // made by loom_type_enum
};

namespace h5loom::capi {

// ---- the last error of this thread (loom_last_error_message / _code) ----

// Records the entry point running, for the messages of argument errors.
void enter(const char* function) noexcept;
// Records a success: code LOOM_OK, message "".
loom_status succeed() noexcept;
// Records an error and returns its code.
loom_status fail(loom_status code, const std::string& message);
const std::string& last_message() noexcept;

// Runs the body of an entry point: any exception becomes a status code and the
// per-thread message (H5hut's enter/leave macro pair, as a function). An
// h5loom::Error's code is its status: ErrorCode and loom_status are both made
// from include/h5loom/error_codes.def.
template <class F>
loom_status guarded(const char* function, F&& body) noexcept {
  enter(function);
  try {
    body();
    return succeed();
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

// ---- agreement: an error on some ranks of a collective call is returned on all ----

// An error this rank cannot agree on with the others (a NULL handle, ranks in
// different collective calls): in a job of more than one rank it ends the job
// (MPI_Abort) unless H5LOOM_ABORT_ON_ERROR=0.
loom_status unagreed(loom_status status);
// Collective over comm: all ranks leave with LOOM_OK or the error of the lowest
// failing rank. `function` must be one of the agreeing entry points (capi_common.cpp).
loom_status agree(const char* function, MPI_Comm comm, loom_status mine);

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

// ---- argument checks: each error names the entry point and the argument ----

// "<entry point>: what"
std::string in_call(const std::string& what);

template <class T>
T* need(T* p, const char* arg, const char* what) {
  if (!p) throw h5loom::UsageError(in_call(std::string("null ") + what + " handle '" + arg + "'"));
  return p;
}

void need_out(const void* p, const char* arg);
const char* text(const char* s, const char* arg);
// A buffer of n elements: NULL only when there is nothing to transfer.
void need_buffer(const void* p, uint64_t n, const char* arg);
// The checks of a write of n elements of `element_size` bytes from `data`;
// returns whether `mode` asks for a copy.
bool write_copies(size_t n, std::size_t element_size, const void* data, loom_write_mode mode);
// n elements of `size` bytes must fit in memory: a negative count passed to a
// size_t parameter arrives as a huge one.
void fits_in_memory(uint64_t n, std::size_t size, const char* arg);
h5loom::Datatype to_datatype(loom_datatype t, const char* arg = "dtype");
void check_ndim(int ndim, const char* arg);
// ndim entries of p (none if p is NULL).
h5loom::Dims dims(int ndim, const uint64_t* p, const char* arg);
// The shape and maximum shape of a new dataset at `path`, checked ('ndim',
// 'shape' not null, 'max_shape' may be).
void dataset_shape(int ndim, const uint64_t* shape, const uint64_t* max_shape, const char* path,
                   h5loom::DatasetSpec& spec);

// A string out: NULL buf asks for the length only (bufsize must then be 0).
void check_string_out(const char* buf, size_t bufsize);
void copy_out(const std::string& s, char* buf, size_t bufsize, size_t* needed);
// Entry `index` of a name list taken by a count call (loom_group_member_count, ...).
const std::string& name_at(const std::vector<std::string>& names, size_t index, const char* what,
                           const std::string& path);

h5loom::FileOptions options(MPI_Comm comm, const char* engine);
// The communicator an open call agrees over: `comm`, the world for
// MPI_COMM_NULL, and MPI_COMM_NULL (no agreement) for an invalid handle - what
// MPI_Comm_f2c gives for an unknown Fortran one - which check_comm refuses.
MPI_Comm opening_comm(MPI_Comm comm);
void check_comm(MPI_Comm comm);

// An entry point that makes a handle over the communicator it is given (files,
// netCDF files, series, decompositions): the ranks agree over `comm` after
// `check` (and the checks of `comm` and `out`), then `make` returns the new
// handle on every rank or on none; `*out` stays NULL unless it succeeds.
template <class Handle, class Check, class Make>
loom_status open_over(const char* function, MPI_Comm comm, Handle** out, Check&& check, Make&& make) noexcept {
  h5loom::ensure_mpi();
  if (out) *out = nullptr;
  return collective(
      function, opening_comm(comm),
      [&] {
        check_comm(comm);
        need_out(out, "out");
        check();
      },
      [&] { *out = make(); });
}

// A handle of a group or a dataset (the series' root and step groups too).
// The handles of an object as a group or a dataset (UsageError naming the argument otherwise).
h5loom::Group& as_group(loom_object* o, const char* arg = "parent");
h5loom::Dataset& as_dataset(loom_object* o);
// A group or a dataset, for attributes (argument 'o').
h5loom::Object& as_object(loom_object* o);
// A loom_type ready for a dataset or attribute: not NULL (UsageError naming
// `arg`), a compound or enum with a member or name (DatatypeError).
const h5loom::Datatype& usable(const loom_type* t, const char* arg);
// A type for typed transfers (loom_dataset_write_typed, loom_darray_write):
// C elements of the type's size (variable-length strings have their own calls).
const h5loom::Datatype& transferable(const loom_type* t, const char* arg);
h5loom::Selection to_selection(const loom_selection* s);
loom_object* new_object(h5loom::Group g, SharedComm agree);
loom_object* new_object(h5loom::Dataset d, SharedComm agree);

}  // namespace h5loom::capi
