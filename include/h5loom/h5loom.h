/* h5loom C API: a thin layer over the C++ API (h5loom.hpp), for C, C++ and
 * Fortran (ISO_C_BINDING) codes. See docs/c-api.md.
 *
 * Conventions
 *  - Handles are opaque pointers: loom_file*, and loom_object* for groups and
 *    datasets (loom_group and loom_dataset are documentation aliases). Every
 *    handle is released with its close function.
 *  - Every call returns a loom_status: LOOM_OK (0) or an error code. The last
 *    error's message (it names the file, the object and the wrong value) is
 *    kept per thread: loom_last_error_message(). No C++ exception crosses this API.
 *  - Strings are returned into caller buffers: (buf, bufsize, &needed); `needed`
 *    is the length without the terminating NUL; a too small buffer is truncated
 *    (always NUL-terminated) and the call still succeeds.
 *  - The collective and deferred-write contracts are those of the C++ API
 *    (docs/object-model.md): every call is collective except loom_dataset_write.
 *  - Bad arguments (NULL handles, strings, buffers and out-pointers, invalid enum
 *    values, dimension counts outside 0..LOOM_MAX_RANK, counts that overflow) are
 *    returned as LOOM_ERR_USAGE / _SELECTION / _DATATYPE / _CONFIG with a message
 *    naming the function and the argument. Output pointers documented as
 *    optional may be NULL; the *_free functions and loom_object_close accept NULL.
 *  - Calls that modify, flush, read or open a file agree across the ranks before
 *    they act: a mistake on some ranks is returned on every rank. A NULL handle
 *    in such a call, or ranks in different such calls, end a multi-rank job with
 *    MPI_Abort unless H5LOOM_ABORT_ON_ERROR=0. docs/errors.md lists every case.
 */
#ifndef H5LOOM_H
#define H5LOOM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes (equal to h5loom::ErrorCode) ----
 * LOOM_OK (0), and LOOM_ERR_<C_NAME> for each row of error_codes.def, the one
 * error table of C++, C and Python, which says what each means:
 * LOOM_ERR_GENERIC (1), LOOM_ERR_NOT_FOUND (2), ... LOOM_ERR_CORRUPTION (11). */
typedef int loom_status;
enum {
  LOOM_OK = 0,
#define H5LOOM_ERROR_KIND(Kind, C_NAME, code, Class, PyBase, meaning) LOOM_ERR_##C_NAME = code,
#include "error_codes.def"
#undef H5LOOM_ERROR_KIND
};

/* In C++ these enums have int as their type, so that a value outside the
 * enumerators (a C caller's mistake) is an int the library checks, not
 * undefined behaviour. The same size and calling convention as in C. */
#ifdef __cplusplus
#define LOOM_ENUM_BASE : int
#else
#define LOOM_ENUM_BASE
#endif

typedef enum LOOM_ENUM_BASE {
  LOOM_INT8 = 0, LOOM_INT16, LOOM_INT32, LOOM_INT64,
  LOOM_UINT8, LOOM_UINT16, LOOM_UINT32, LOOM_UINT64,
  LOOM_FLOAT32, LOOM_FLOAT64,
  LOOM_FLOAT16 /* IEEE half precision: elements are the 16 bits (uint16_t), e.g. _Float16's */
} loom_datatype;

typedef enum LOOM_ENUM_BASE { LOOM_MODE_READ = 0, LOOM_MODE_READWRITE, LOOM_MODE_CREATE, LOOM_MODE_CREATE_EXCLUSIVE } loom_mode;
/* What a path names; LOOM_KIND_DATATYPE: a named datatype (loom_group_commit_type). */
typedef enum LOOM_ENUM_BASE { LOOM_KIND_NONE = 0, LOOM_KIND_GROUP, LOOM_KIND_DATASET, LOOM_KIND_DATATYPE } loom_kind;
/* LOOM_ATTR_EMPTY: a type and no value (HDF5's null dataspace; engines with "null_spaces"). */
typedef enum LOOM_ENUM_BASE {
  LOOM_ATTR_SCALAR = 0,
  LOOM_ATTR_ARRAY,
  LOOM_ATTR_STRING,
  LOOM_ATTR_STRING_ARRAY,
  LOOM_ATTR_EMPTY
} loom_attr_kind;
typedef enum LOOM_ENUM_BASE { LOOM_LAYOUT_CONTIGUOUS = 0, LOOM_LAYOUT_CHUNKED } loom_layout;

#define LOOM_UNLIMITED UINT64_MAX
#define LOOM_MAX_RANK 32

/* How loom_dataset_write treats the buffer. */
typedef enum LOOM_ENUM_BASE {
  LOOM_WRITE_DEFERRED = 0, /* keep the pointer; the buffer must stay valid until the next flush point */
  LOOM_WRITE_COPY = 1      /* copy now; the buffer may be reused at once */
} loom_write_mode;

typedef struct loom_file_s loom_file;
typedef struct loom_object_s loom_object;
typedef loom_object loom_group;   /* a group (or the root group) */
typedef loom_object loom_dataset; /* a dataset */

/* A selection. The arrays are the caller's and are read during the call only.
 * Build one with loom_select_all/none/box/hyperslab. */
typedef enum LOOM_ENUM_BASE { LOOM_SELECT_ALL = 0, LOOM_SELECT_NONE, LOOM_SELECT_HYPERSLAB } loom_selection_kind;
typedef struct {
  loom_selection_kind kind;
  int ndim;
  const uint64_t* start;
  const uint64_t* count;
  const uint64_t* stride; /* NULL: all ones */
  const uint64_t* block;  /* NULL: all ones */
} loom_selection;

loom_selection loom_select_all(void);
loom_selection loom_select_none(void);
loom_selection loom_select_box(int ndim, const uint64_t* start, const uint64_t* count);
loom_selection loom_select_hyperslab(int ndim, const uint64_t* start, const uint64_t* count, const uint64_t* stride,
                                     const uint64_t* block);

/* ---- errors ---- */
const char* loom_last_error_message(void); /* "" after a successful call; valid until the next call on this thread */
loom_status loom_last_error_code(void);
const char* loom_status_name(loom_status status); /* "LOOM_ERR_NOT_FOUND", ... */
size_t loom_datatype_size(loom_datatype t);

/* ---- files ----
 * comm: MPI_COMM_NULL means MPI_COMM_WORLD. engine: NULL or "" means $H5LOOM_ENGINE, else "hdf5";
 * a name or a JSON configuration (docs/engines.md). MPI is initialised if needed. */
loom_status loom_file_create(const char* name, MPI_Comm comm, const char* engine, loom_file** out);
loom_status loom_file_create_exclusive(const char* name, MPI_Comm comm, const char* engine, loom_file** out);
loom_status loom_file_open(const char* name, loom_mode mode, MPI_Comm comm, const char* engine, loom_file** out);
/* The same with a Fortran communicator handle (MPI_Comm_c2f / mpi_f08 %MPI_VAL). */
loom_status loom_file_open_f(const char* name, loom_mode mode, MPI_Fint comm, const char* engine, loom_file** out);
loom_status loom_file_flush(loom_file* f); /* durable: the writes survive a crash */
/* A flush that only makes the writes visible to later reads (cheaper for engines that sync). */
loom_status loom_file_flush_visible(loom_file* f);
/* Closes (collectively) and frees the handle, even if the close reports an error. */
loom_status loom_file_close(loom_file* f);

/* ---- flushes that complete later (docs/async.md) ---- */
typedef struct loom_request_s loom_request;
/* A flush point that returns at once (durable != 0: durable, else visible only);
 * *out completes when every write made before it has. With the async wrapper
 * (engine "async+log") the flush completes at loom_wait or at the next collective
 * call on the file; with other engines it is complete on return. Deferred
 * buffers (LOOM_WRITE_DEFERRED) stay in use until it completes. */
loom_status loom_file_flush_async(loom_file* f, int durable, loom_request** out);
/* Local, never blocks: *done = 1 once the request has completed, else 0. */
loom_status loom_test(loom_request* r, int* done);
/* Waits for the request and frees it, even on error. Collective for a flush
 * (every rank waits, in the order of its other collective calls); an error is
 * returned on every rank. NULL: LOOM_OK. */
loom_status loom_wait(loom_request* r);
/* Frees a request without waiting: a flush still completes, at the next
 * collective call on the file, which returns its error if it failed; a close
 * completes (collectively, its error only printed) when the file's last
 * handle is gone: here, or at the last loom_object_close of its groups and
 * datasets. */
void loom_request_free(loom_request* r);
/* A close that returns at once (collective): frees the file handle, and *out
 * completes the close at loom_wait, collectively, returning its error on every
 * rank. Meanwhile the async wrapper moves the file's data in the background;
 * with other engines it moves at loom_wait. */
loom_status loom_file_close_async(loom_file* f, loom_request** out);
loom_status loom_file_rank(loom_file* f, int* rank, int* size);
loom_status loom_file_engine(loom_file* f, char* buf, size_t bufsize, size_t* needed);
loom_status loom_file_root(loom_file* f, loom_group** out);

/* ---- groups (paths relative to the group, or absolute) ---- */
loom_status loom_group_create_group(loom_group* parent, const char* path, loom_group** out);
loom_status loom_group_open_group(loom_group* parent, const char* path, loom_group** out);
loom_status loom_group_kind(loom_group* parent, const char* path, loom_kind* out);
loom_status loom_group_member_count(loom_group* g, size_t* count);
loom_status loom_group_member_name(loom_group* g, size_t index, char* buf, size_t bufsize, size_t* needed);

/* max_shape: NULL for a fixed size (LOOM_UNLIMITED entries grow without bound).
 * chunks: NULL to let the engine decide (chunked if extendable). */
loom_status loom_group_create_dataset(loom_group* parent, const char* path, loom_datatype dtype, int ndim,
                                      const uint64_t* shape, const uint64_t* max_shape, const uint64_t* chunks,
                                      loom_dataset** out);
loom_status loom_group_open_dataset(loom_group* parent, const char* path, loom_dataset** out);

/* ---- datasets ---- */
loom_status loom_dataset_dtype(loom_dataset* d, loom_datatype* out);
loom_status loom_dataset_ndim(loom_dataset* d, int* out);
/* Arrays of ndim entries (max_shape and chunks may be NULL). chunks are zeros for contiguous datasets. */
loom_status loom_dataset_shape(loom_dataset* d, uint64_t* shape, uint64_t* max_shape, uint64_t* chunks,
                               loom_layout* layout);
loom_status loom_dataset_extend(loom_dataset* d, const uint64_t* new_shape);
/* Any shape within max_shape; shrinking needs an engine declaring "shrink" (collective). */
loom_status loom_dataset_resize(loom_dataset* d, const uint64_t* new_shape);
/* n: the number of elements in data (must equal the selection's); mem_type: must equal the dataset's type. */
loom_status loom_dataset_write(loom_dataset* d, const loom_selection* sel, loom_datatype mem_type, size_t n,
                               const void* data, loom_write_mode mode);
loom_status loom_dataset_read(loom_dataset* d, const loom_selection* sel, loom_datatype mem_type, size_t n,
                              void* out);
/* NOT collective (engines declaring "independent_read"): this rank alone reads, seeing what the
 * last flush point made visible; LOOM_ERR_USAGE if this rank has writes not yet flushed. */
loom_status loom_dataset_read_independent(loom_dataset* d, const loom_selection* sel, loom_datatype mem_type,
                                          size_t n, void* out);

/* ---- datatypes beyond numbers: compounds, fixed-length strings, enums (docs/c-api.md) ----
 * A loom_type describes one; build it, use it, free it. Compound members sit at
 * the byte offsets given (offsetof) in an element of `size` bytes (sizeof). */
typedef struct loom_type_s loom_type;
loom_status loom_type_compound(size_t size, loom_type** out);
/* A scalar member, or a member of another loom_type (nested compounds, strings, enums). */
loom_status loom_type_insert(loom_type* compound, const char* name, size_t offset, loom_datatype member);
loom_status loom_type_insert_type(loom_type* compound, const char* name, size_t offset, const loom_type* member);
/* Strings of `length` bytes, NUL-padded; utf8: 0 for ASCII, 1 for UTF-8. */
loom_status loom_type_string(size_t length, int utf8, loom_type** out);
/* An enum over an integer type; then name its values. */
loom_status loom_type_enum(loom_datatype base, loom_type** out);
loom_status loom_type_enum_insert(loom_type* e, const char* name, int64_t value);
/* An array of ndim (1 to 32) dimensions of elements of `element` (any fixed-size loom_type,
 * complete): HDF5's array datatype, e.g. double[3] as one element. */
loom_status loom_type_array(const loom_type* element, int ndim, const uint64_t* dims, loom_type** out);
/* A scalar in an array. */
loom_status loom_type_array_of(loom_datatype element, int ndim, const uint64_t* dims, loom_type** out);
/* Opaque: `size` (1 byte to 4 GiB) uninterpreted bytes per element, copied as they are,
 * with a NUL-terminated `tag` (at most 255 bytes; NULL or "" for none) saying what they
 * hold: HDF5's opaque datatype. */
loom_status loom_type_opaque(size_t size, const char* tag, loom_type** out);
/* Variable-length sequences of `element` (HDF5's H5T_VLEN, h5py's ragged arrays):
 * each element a loom_vlen, laid out as HDF5's hvl_t; inside one, and inside a
 * compound, a variable-length string (loom_type_varstring) is a char*. Datasets
 * of them: engines declaring "variable_length" (the hdf5 engine with driver
 * "sec2" or "core" only). Writes copy every part at once; loom_dataset_read_typed
 * allocates the parts it reads with malloc: release them with loom_reclaim. */
typedef struct {
  size_t len; /* elements */
  void* p;
} loom_vlen;
loom_status loom_type_sequence(const loom_type* element, loom_type** out);
/* Releases the variable-length parts (sequences, strings inside) of n elements
 * of `type` at data, leaving them empty; other types: nothing to do. */
loom_status loom_reclaim(const loom_type* type, void* data, size_t n);
/* A number type as a loom_type (for the calls that take one). */
loom_status loom_type_scalar(loom_datatype scalar, loom_type** out);
/* How files store a scalar's or an enum's numbers (memory is always the host's order):
 * HDF5's ..BE types, numpy's '>i4'. Other loom_types: LOOM_ERR_DATATYPE. */
typedef enum LOOM_ENUM_BASE { LOOM_LITTLE_ENDIAN = 0, LOOM_BIG_ENDIAN } loom_byte_order;
loom_status loom_type_set_byte_order(loom_type* t, loom_byte_order order);
/* Fixed-length strings padded as HDF5 says: NUL-padded (loom_type_string's), NUL-terminated,
 * space-padded. The bytes are kept as written; the padding tells readers how to trim them. */
typedef enum LOOM_ENUM_BASE { LOOM_STR_NULLPAD = 0, LOOM_STR_NULLTERM, LOOM_STR_SPACEPAD } loom_string_padding;
loom_status loom_type_string_padded(size_t length, int utf8, loom_string_padding padding, loom_type** out);
loom_status loom_type_size(const loom_type* t, size_t* out);
/* "compound[16]{id: int64 @0, x: float64 @8}", "string[8]", "enum<int8>{red: 0}", "array<float64>[3]", "float64". */
loom_status loom_type_name(const loom_type* t, char* buf, size_t bufsize, size_t* needed);
loom_status loom_type_free(loom_type* t);

/* A dataset of any datatype; fill: one element (the value of elements never written) or NULL. */
loom_status loom_group_create_dataset_typed(loom_group* parent, const char* path, const loom_type* type, int ndim,
                                            const uint64_t* shape, const uint64_t* max_shape, const void* fill,
                                            loom_dataset** out);
/* The dataset's datatype (any class), as a new loom_type to free. */
loom_status loom_dataset_type(loom_dataset* d, loom_type** out);
/* A dataset of `type` with HDF5's null dataspace: no elements, no shape (engines with the
 * conformance group "null_spaces"). It reports ndim 1 and shape {0}, and never changes. */
loom_status loom_group_create_dataset_null(loom_group* parent, const char* path, const loom_type* type,
                                           loom_dataset** out);
/* *out = 1 if the dataset has a null dataspace, else 0. */
loom_status loom_dataset_is_null(loom_dataset* d, int* out);

/* HDF5 filters (compression, shuffling, checksums), in the order they apply on writing:
 * an HDF5 filter id (LOOM_FILTER_DEFLATE with params {level}, LOOM_FILTER_SHUFFLE,
 * LOOM_FILTER_FLETCHER32, or a registered filter's), its parameters, and whether it is
 * optional (skipped where it cannot apply). Engines with the conformance group "filters":
 * the hdf5 engine applies them, the log engine records them for h5loom convert. */
#define LOOM_FILTER_DEFLATE 1u
#define LOOM_FILTER_SHUFFLE 2u
#define LOOM_FILTER_FLETCHER32 3u
typedef struct {
  unsigned id;
  size_t nparams;
  const unsigned* params; /* nparams values (NULL if none); read during the call only */
  int optional;
} loom_filter;
/* Collective. As loom_group_create_dataset_typed, chunked (chunks: NULL for automatic ones),
 * with nfilters filters. */
loom_status loom_group_create_dataset_filtered(loom_group* parent, const char* path, const loom_type* type, int ndim,
                                               const uint64_t* shape, const uint64_t* max_shape,
                                               const uint64_t* chunks, size_t nfilters, const loom_filter* filters,
                                               loom_dataset** out);
loom_status loom_dataset_filter_count(loom_dataset* d, size_t* count);
/* Filter `index`: its id, whether optional, and its parameters into params[0..*nparams)
 * (*nparams: the room on entry, the number it has on return; params may be NULL to ask). */
loom_status loom_dataset_filter(loom_dataset* d, size_t index, unsigned* id, int* optional, unsigned* params,
                                size_t* nparams);
/* Dimension names (Zarr v3's dimension_names, xarray's dimensions; engines with the
 * conformance group "dimension_names": the zarr engine). Collective. As
 * loom_group_create_dataset_typed, with dim_names[0..ndim): a name for each dimension
 * (NULL or "" leaves one unnamed). */
loom_status loom_group_create_dataset_named_dims(loom_group* parent, const char* path, const loom_type* type,
                                                 int ndim, const uint64_t* shape, const uint64_t* max_shape,
                                                 const char* const* dim_names, loom_dataset** out);
/* The name of dimension `dim` ("" if it is unnamed or the dataset names none), as
 * loom_group_member_name returns strings. */
loom_status loom_dataset_dim_name(loom_dataset* d, int dim, char* buf, size_t bufsize, size_t* needed);
/* A named (committed) datatype: `type` kept in the file as `path` (HDF5's
 * H5Tcommit; engines with the conformance group "named_types"). Collective. */
loom_status loom_group_commit_type(loom_group* parent, const char* path, const loom_type* type);
/* The datatype the named datatype `path` describes, as a new loom_type to free. */
loom_status loom_group_named_type(loom_group* parent, const char* path, loom_type** out);
/* As loom_dataset_write/read, with a loom_type that must equal the dataset's. */
loom_status loom_dataset_write_typed(loom_dataset* d, const loom_selection* sel, const loom_type* mem_type, size_t n,
                                     const void* data, loom_write_mode mode);
loom_status loom_dataset_read_typed(loom_dataset* d, const loom_selection* sel, const loom_type* mem_type, size_t n,
                                    void* out);

/* ---- object references and variable-length strings (docs/c-api.md) ----
 * A reference names a group or dataset of the file that made it; {0} is the
 * null reference. It has the layout of h5loom::ObjectRef (8 bytes), so arrays
 * of loom_ref, and C structs with loom_ref members, are what datasets and
 * attributes of reference type (loom_type_reference) hold. Engines declaring
 * the conformance group "references" have them; "vlen_strings" for
 * variable-length strings (the hdf5 engine: with driver "sec2" or "core" only,
 * on one rank; parallel HDF5 cannot write them). */
typedef struct {
  uint64_t token;
} loom_ref;

/* Whether an engine (a name or JSON configuration; NULL or "": $H5LOOM_ENGINE, else
 * "hdf5") declares a conformance group ("references", "vlen_strings", ...). No MPI needed. */
loom_status loom_engine_supports(const char* engine, const char* group, int* out);

/* The datatype of references; of variable-length strings (utf8: 0 ASCII, 1 UTF-8).
 * In C an element of variable-length strings is a char* (loom_type_size gives
 * sizeof(char*)): they are written and read with loom_dataset_write_strings /
 * _read_strings, not _typed, and have no fill value. As a compound member or a
 * sequence's element they are a char* part (loom_type_sequence). */
loom_status loom_type_reference(loom_type** out);
loom_status loom_type_varstring(int utf8, loom_type** out);

/* Collective. A reference to the group or dataset at `path` (relative to g, or
 * absolute; soft links followed; "." is g itself). LOOM_ERR_NOT_FOUND if there is none. */
loom_status loom_group_reference(loom_group* g, const char* path, loom_ref* out);
/* Collective. The absolute path of the object `ref` names, into (buf, bufsize, needed).
 * LOOM_ERR_NOT_FOUND for the null reference, a removed object, or a reference of another file. */
loom_status loom_group_dereference(loom_group* g, loom_ref ref, char* buf, size_t bufsize, size_t* needed);

/* Variable-length strings. write: n NUL-terminated strings (n must equal the
 * selection's element count), copied at once (the strings may be freed as soon
 * as the call returns); not collective, like loom_dataset_write.
 * read (collective): out[0..n) receive malloc'd NUL-terminated strings (never
 * NULL on success; every out[i] NULL on error); free them with loom_strings_free
 * (or free() each). Either charset: the bytes are the file's. */
loom_status loom_dataset_write_strings(loom_dataset* d, const loom_selection* sel, size_t n,
                                       const char* const* strings);
loom_status loom_dataset_read_strings(loom_dataset* d, const loom_selection* sel, size_t n, char** out);
/* Frees out[0..n) and sets each to NULL (the array itself is the caller's). strings NULL: nothing. */
loom_status loom_strings_free(char** strings, size_t n);

/* ---- links: deleting, renaming, soft and hard links, creation order (collective) ---- */
/* Deletes the link `path`; the object goes with its last name (hard links). */
loom_status loom_group_remove(loom_group* g, const char* path);
loom_status loom_group_move(loom_group* g, const char* from, const char* to);
loom_status loom_group_create_soft_link(loom_group* g, const char* path, const char* target);
/* *is_link: 1 and the target in buf if `path` is a soft link, else 0. */
loom_status loom_group_soft_link(loom_group* g, const char* path, int* is_link, char* buf, size_t bufsize,
                                 size_t* needed);
/* A second name `path` for the object `target` (engines with the conformance
 * group "hard_links"): every name is equal, and the object lives while one is left. */
loom_status loom_group_create_hard_link(loom_group* g, const char* path, const char* target);
/* *count: how many names (hard links) the object at `path` has (1 without hard links),
 * plus the references held on it (below). */
loom_status loom_group_link_count(loom_group* g, const char* path, uint64_t* count);
/* Collective. HDF5's H5Oincr_refcount (delta +1) / H5Odecr_refcount (-1): a reference held on
 * the object at `path` besides its names (engines with "reference_counts"); count (may be
 * NULL) receives loom_group_link_count afterwards. Releasing one not held: LOOM_ERR_USAGE. */
loom_status loom_group_change_reference_count(loom_group* g, const char* path, int delta, uint64_t* count);
/* An external link `path` to the object `target` of the file `file` (engines
 * with "external_links"); h5loom does not follow it, HDF5 readers do. */
loom_status loom_group_create_external_link(loom_group* g, const char* path, const char* file, const char* target);
/* *is_link: 1 and the file and target path (NUL-terminated, cut to their
 * buffers; *_needed: the full lengths) if `path` is an external link, else 0. */
loom_status loom_group_external_link(loom_group* g, const char* path, int* is_link, char* file, size_t file_size,
                                     size_t* file_needed, char* target, size_t target_size, size_t* target_needed);
/* Copies the object at `from_path` of `from` (a group with everything below it,
 * a dataset with its values, a named datatype) to the new path `to_path` of `to`
 * (the same file or another; missing parents created). flags: 0 or LOOM_COPY_*
 * or'ed. Collective over both files. docs/object-model.md, "Copying". */
#define LOOM_COPY_SHALLOW 1u            /* a group's members, not what is below them */
#define LOOM_COPY_WITHOUT_ATTRS 2u      /* no attributes */
#define LOOM_COPY_EXPAND_SOFT_LINKS 4u  /* soft links inside become copies of their targets */
loom_status loom_file_copy_object(loom_file* from, const char* from_path, loom_file* to, const char* to_path,
                                  unsigned flags);
/* As loom_group_member_count, the members taken in the order they were created. */
loom_status loom_group_member_count_created(loom_group* g, size_t* count);

/* ---- any object (group or dataset) ---- */
loom_status loom_object_path(loom_object* o, char* buf, size_t bufsize, size_t* needed);
loom_status loom_object_close(loom_object* o); /* frees the handle; the file stays open */

/* ---- attributes (on the root group, a group or a dataset) ---- */
loom_status loom_attr_write_scalar(loom_object* o, const char* name, loom_datatype type, const void* value);
loom_status loom_attr_write_array(loom_object* o, const char* name, loom_datatype type, size_t count,
                                  const void* values);
loom_status loom_attr_write_string(loom_object* o, const char* name, const char* value);
loom_status loom_attr_write_strings(loom_object* o, const char* name, size_t count, const char* const* values);
loom_status loom_attr_exists(loom_object* o, const char* name, int* exists);
/* count: elements for numbers, string arrays and typed attributes, bytes for a string. type: the
 * number type (an enum's base); meaningless (LOOM_UINT8) for strings, compounds and references:
 * loom_attr_type gives their loom_type. */
loom_status loom_attr_info(loom_object* o, const char* name, loom_attr_kind* kind, loom_datatype* type,
                           size_t* count);
/* Numbers (and enums) convert to mem_type; count must equal the attribute's element count. */
loom_status loom_attr_read(loom_object* o, const char* name, loom_datatype mem_type, size_t count, void* out);
loom_status loom_attr_read_string(loom_object* o, const char* name, char* buf, size_t bufsize, size_t* needed);
/* Element `index` of a string-array attribute. */
loom_status loom_attr_read_string_element(loom_object* o, const char* name, size_t index, char* buf, size_t bufsize,
                                          size_t* needed);
loom_status loom_attr_count(loom_object* o, size_t* count);
loom_status loom_attr_name(loom_object* o, size_t index, char* buf, size_t bufsize, size_t* needed);
/* Editing attributes (engines declaring the conformance group "attribute_edit"; collective).
 * LOOM_ERR_NOT_FOUND if `name`/`from` does not exist, LOOM_ERR_EXISTS if `to` does. */
loom_status loom_attr_delete(loom_object* o, const char* name);
loom_status loom_attr_rename(loom_object* o, const char* from, const char* to);
/* As loom_attr_count, the names (loom_attr_name) taken in the order they were created. */
loom_status loom_attr_count_created(loom_object* o, size_t* count);
/* Attributes of references: one (a scalar), or a 1-D array of count. read: a scalar
 * or array attribute of references; count must equal its element count (1 for a scalar). */
loom_status loom_attr_write_ref(loom_object* o, const char* name, loom_ref ref);
loom_status loom_attr_write_refs(loom_object* o, const char* name, size_t count, const loom_ref* refs);
loom_status loom_attr_read_refs(loom_object* o, const char* name, size_t count, loom_ref* out);
/* Attributes of any fixed-size loom_type (compounds, enums, references, fixed-length
 * strings, numbers): kind LOOM_ATTR_SCALAR (count 1) or LOOM_ATTR_ARRAY (count
 * elements), e.g. netCDF's REFERENCE_LIST, an array of {loom_ref dataset; int32_t dim};
 * or LOOM_ATTR_EMPTY (count 0, values NULL; any type, variable-length strings too).
 * read: mem_type must equal the attribute's type (loom_attr_type) and count its element count. */
loom_status loom_attr_write_typed(loom_object* o, const char* name, const loom_type* type, loom_attr_kind kind,
                                  size_t count, const void* values);
loom_status loom_attr_read_typed(loom_object* o, const char* name, const loom_type* mem_type, size_t count,
                                 void* out);
/* The attribute's datatype as a new loom_type to free (LOOM_ERR_DATATYPE for a string attribute). */
loom_status loom_attr_type(loom_object* o, const char* name, loom_type** out);

/* ---- series: steps, particles and block fields (docs/series.md) ----
 * A series is a file in the openPMD or H5Part layout. loom_series_root gives the
 * root group for file attributes; loom_step_group the step's group. */
typedef enum LOOM_ENUM_BASE { LOOM_SERIES_OPENPMD = 0, LOOM_SERIES_H5PART } loom_series_layout;
typedef struct loom_series_s loom_series;
typedef struct loom_step_s loom_step;
typedef struct loom_particles_s loom_particles;
typedef struct loom_field_s loom_field;

loom_status loom_series_create(const char* name, MPI_Comm comm, const char* engine, loom_series_layout layout,
                               loom_series** out);
loom_status loom_series_append(const char* name, MPI_Comm comm, const char* engine, loom_series** out);
loom_status loom_series_open(const char* name, MPI_Comm comm, const char* engine, loom_series** out);
/* The same with a Fortran communicator handle (MPI_Comm_c2f / mpi_f08 %MPI_VAL). */
loom_status loom_series_create_f(const char* name, MPI_Fint comm, const char* engine, loom_series_layout layout,
                                 loom_series** out);
loom_status loom_series_open_f(const char* name, MPI_Fint comm, const char* engine, loom_series** out);
loom_status loom_series_close(loom_series* s); /* ends any open step, closes the file, frees the handle */
loom_status loom_series_layout_of(loom_series* s, loom_series_layout* out);
loom_status loom_series_root(loom_series* s, loom_group** out);
/* The sorted step numbers: count first, then by index (the list taken by the count call). */
loom_status loom_series_step_count(loom_series* s, size_t* count);
loom_status loom_series_step_number(loom_series* s, size_t index, uint64_t* step);

loom_status loom_series_write_step(loom_series* s, uint64_t n, double time, double dt, loom_step** out);
loom_status loom_series_step(loom_series* s, uint64_t n, loom_step** out);
loom_status loom_step_time(loom_step* st, double* time, double* dt);
loom_status loom_step_group(loom_step* st, loom_group** out);
loom_status loom_step_end(loom_step* st); /* ends the step: a collective flush point */
loom_status loom_step_free(loom_step* st);

loom_status loom_step_particles(loom_step* st, const char* species, loom_particles** out);
/* Collective: offset and global count come from an exclusive scan (either pointer may be NULL). */
loom_status loom_particles_set_local_count(loom_particles* p, uint64_t n, uint64_t* offset, uint64_t* global);
/* local-count elements; deferred until the step ends: the buffer must stay valid and unchanged until then. */
loom_status loom_particles_write(loom_particles* p, const char* array, loom_datatype dtype, const void* data);
/* The same, copied at once: the buffer may be reused (the Fortran module's way). */
loom_status loom_particles_write_copy(loom_particles* p, const char* array, loom_datatype dtype, const void* data);
loom_status loom_particles_global_count(loom_particles* p, uint64_t* out);
loom_status loom_particles_read_range(loom_particles* p, const char* array, loom_datatype dtype, uint64_t begin,
                                      uint64_t end, void* out);
loom_status loom_particles_read_indices(loom_particles* p, const char* array, loom_datatype dtype, size_t count,
                                        const uint64_t* indices, void* out);
loom_status loom_particles_my_share(loom_particles* p, uint64_t* begin, uint64_t* end);
loom_status loom_particles_free(loom_particles* p);

/* origin and spacing: ndim values in array order, or NULL for zeros / ones. */
loom_status loom_step_create_field(loom_step* st, const char* name, int ndim, const uint64_t* global_shape,
                                   int components, loom_datatype dtype, const double* origin, const double* spacing,
                                   loom_field** out);
loom_status loom_step_open_field(loom_step* st, const char* name, loom_field** out);
/* shape: LOOM_MAX_RANK entries at most. */
loom_status loom_field_info(loom_field* f, int* ndim, uint64_t* shape, int* components, loom_datatype* dtype);
/* local: local_shape elements (the box plus `ghost` cells per side, dropped); offset: the box's global start. */
loom_status loom_field_write(loom_field* f, int component, loom_datatype dtype, const void* local,
                             const uint64_t* local_shape, const uint64_t* offset, uint64_t ghost);
/* Collective: the box [lo, lo+count) plus `halo` cells per side, `fill` outside the domain;
 * out holds prod(count + 2*halo) elements (nothing when count has a zero). */
loom_status loom_field_read(loom_field* f, int component, loom_datatype dtype, const uint64_t* lo,
                            const uint64_t* count, uint64_t halo, const void* fill, void* out);
loom_status loom_field_free(loom_field* f);

/* ---- PIO decompositions and rearrangers (docs/pio.md) ---- */
typedef struct loom_decomposition_s loom_decomposition;
typedef struct loom_rearrangement_s loom_rearrangement;
typedef enum LOOM_ENUM_BASE { LOOM_REARRANGER_BOX = 0, LOOM_REARRANGER_SUBSET = 1 } loom_rearranger;
/* Collective. map: this rank's n global offsets (in the C-order array of ndim dimensions
 * `shape`), counted from `base`: 0 (holes -1) or 1 as PIO's Fortran maps (holes 0). */
loom_status loom_decomposition_from_map(MPI_Comm comm, int ndim, const uint64_t* shape, size_t n, const int64_t* map,
                                        int base, loom_decomposition** out);
/* Collective: a PIO "version 2001" file; task t goes to rank t % size. */
loom_status loom_decomposition_from_file(MPI_Comm comm, const char* path, loom_decomposition** out);
/* The same with a Fortran communicator handle. */
loom_status loom_decomposition_from_map_f(MPI_Fint comm, int ndim, const uint64_t* shape, size_t n, const int64_t* map,
                                          int base, loom_decomposition** out);
loom_status loom_decomposition_from_file_f(MPI_Fint comm, const char* path, loom_decomposition** out);
/* This rank's element count; its map (local_size 0-based offsets, -1 holes) if map is not NULL. */
loom_status loom_decomposition_local(const loom_decomposition* d, size_t* local_size, int64_t* map);
/* The global shape, C order (slowest first): ndim entries into shape (LOOM_MAX_RANK at most) if not NULL. */
loom_status loom_decomposition_shape(const loom_decomposition* d, int* ndim, uint64_t* shape);
loom_status loom_decomposition_free(loom_decomposition* d);
/* Collective: num_iotasks I/O tasks, `stride` ranks apart from rank `base`. */
loom_status loom_rearrangement_create(const loom_decomposition* d, int num_iotasks, int stride, int base,
                                      loom_rearranger kind, loom_rearrangement** out);
loom_status loom_rearrangement_free(loom_rearrangement* r);
/* Collective (PIO's write_darray / read_darray): this rank's n elements of `type` (the
 * dataset's; n must be the decomposition's local_size), in map order, to or from the dataset -
 * of the decomposition's shape, or with one more leading dimension whose index `frame` is
 * used. Holes read as the fill value. */
loom_status loom_darray_write(loom_rearrangement* r, loom_dataset* d, uint64_t frame, const loom_type* type, size_t n,
                              const void* local);
loom_status loom_darray_read(loom_rearrangement* r, loom_dataset* d, uint64_t frame, const loom_type* type, size_t n,
                             void* local);

/* ---- netCDF-4 files (docs/netcdf.md): netCDF's model over any engine that yields HDF5 ----
 * Dimension ids count from 0 in definition order; variable ids too. Every call is
 * collective except loom_nc_put_vara and the loom_nc_inq_* calls (local). */
typedef struct loom_nc_file_s loom_nc_file;
#define LOOM_NC_UNLIMITED 0 /* loom_nc_def_dim's length of the record dimension */
#define LOOM_NC_GLOBAL (-1) /* the varid of global attributes */
/* A new file in define mode / an existing one in data mode. engine: NULL or "" for the default. */
loom_status loom_nc_create(const char* path, MPI_Comm comm, const char* engine, loom_nc_file** out);
loom_status loom_nc_open(const char* path, loom_mode mode, MPI_Comm comm, const char* engine, loom_nc_file** out);
/* The same with a Fortran communicator handle (MPI_Comm_c2f / mpi_f08 %MPI_VAL). */
loom_status loom_nc_create_f(const char* path, MPI_Fint comm, const char* engine, loom_nc_file** out);
loom_status loom_nc_open_f(const char* path, loom_mode mode, MPI_Fint comm, const char* engine, loom_nc_file** out);
loom_status loom_nc_def_dim(loom_nc_file* f, const char* name, uint64_t length, int* dimid);
/* type: one of netCDF's (LOOM_INT8 ... LOOM_UINT64, LOOM_FLOAT32, LOOM_FLOAT64); dimids slowest first. */
loom_status loom_nc_def_var(loom_nc_file* f, const char* name, loom_datatype type, int ndims, const int* dimids,
                            int* varid);
/* Before loom_nc_enddef: chunks (ndims entries; NULL: netCDF's defaults), deflate level 0-9 and shuffle. */
loom_status loom_nc_def_var_chunking(loom_nc_file* f, int varid, const uint64_t* chunks);
loom_status loom_nc_def_var_deflate(loom_nc_file* f, int varid, int shuffle, int deflate_level);
/* _FillValue: one element of `type`, converted to the variable's type. */
loom_status loom_nc_def_var_fill(loom_nc_file* f, int varid, loom_datatype type, const void* fill);
loom_status loom_nc_enddef(loom_nc_file* f);
loom_status loom_nc_redef(loom_nc_file* f);
/* Attributes of a variable or LOOM_NC_GLOBAL: n numbers of `type`, or text (NC_CHAR). */
loom_status loom_nc_put_att(loom_nc_file* f, int varid, const char* name, loom_datatype type, size_t n,
                            const void* values);
loom_status loom_nc_put_att_text(loom_nc_file* f, int varid, const char* name, const char* text);
/* Collective (attributes are the file's metadata): n numbers converted to `type` (n must be the
 * attribute's length), or its text. */
loom_status loom_nc_get_att(loom_nc_file* f, int varid, const char* name, loom_datatype type, size_t n, void* out);
loom_status loom_nc_get_att_text(loom_nc_file* f, int varid, const char* name, char* buf, size_t bufsize,
                                 size_t* needed);
/* Local (the definitions the handle holds): counts, the unlimited dimension's id (-1 if none),
 * names and shapes. */
loom_status loom_nc_inq(loom_nc_file* f, int* ndims, int* nvars, int* unlimited_dimid);
loom_status loom_nc_inq_dimid(loom_nc_file* f, const char* name, int* dimid);
loom_status loom_nc_inq_dim(loom_nc_file* f, int dimid, char* name, size_t bufsize, size_t* needed, uint64_t* length);
loom_status loom_nc_inq_varid(loom_nc_file* f, const char* name, int* varid);
/* dimids: room for the variable's ndims (at most 32), or NULL. */
loom_status loom_nc_inq_var(loom_nc_file* f, int varid, char* name, size_t bufsize, size_t* needed,
                            loom_datatype* type, int* ndims, int* dimids);
/* Collective: grows every record variable to n records. */
loom_status loom_nc_set_records(loom_nc_file* f, uint64_t n);
/* Local (any rank, any number of times): the box [start, start+count) - ndims entries each, the
 * variable's number of dimensions - from n elements of `type` (converted as netCDF converts);
 * ndims 0 with start and count NULL: the whole variable. Copied: the buffer may be reused at
 * once. A box past the records is refused: loom_nc_set_records first. */
loom_status loom_nc_put_vara(loom_nc_file* f, int varid, int ndims, const uint64_t* start, const uint64_t* count,
                             loom_datatype type, size_t n, const void* data);
/* Collective, each rank its own box (a count with a 0: nothing). */
loom_status loom_nc_get_vara(loom_nc_file* f, int varid, int ndims, const uint64_t* start, const uint64_t* count,
                             loom_datatype type, size_t n, void* out);
/* Collective (PIO's write_darray / read_darray): this rank's n elements (its decomposition's
 * local_size, in map order; converted as netCDF converts) of record `frame` - the record
 * dimension grows to frame+1 if needed - or, for a variable without it, of the whole variable
 * (frame 0). Written at the next flush point: one comes when the darray data since the last
 * passes the file's buffer limit (256 MiB over all ranks; docs/netcdf.md). */
loom_status loom_nc_write_darray(loom_rearrangement* r, loom_nc_file* f, int varid, uint64_t frame,
                                 loom_datatype type, size_t n, const void* local);
loom_status loom_nc_read_darray(loom_rearrangement* r, loom_nc_file* f, int varid, uint64_t frame,
                                loom_datatype type, size_t n, void* local);
loom_status loom_nc_sync(loom_nc_file* f);
/* Collective: leaves define mode if in it, closes, and frees the handle (NULL: nothing). */
loom_status loom_nc_close(loom_nc_file* f);

#ifdef __cplusplus
}
#endif

#endif /* H5LOOM_H */
