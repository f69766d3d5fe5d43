/* Misuse of the C API in plain C99 (issue 13; docs/errors.md): every entry
 * point is called with each bad argument - NULL handles, NULL strings, buffers
 * and out-pointers, invalid enum values, negative or overflowing counts and
 * dimension counts - and must return the documented status with a message
 * naming the function and the argument. Run at 1 and 2 ranks; at 2 ranks every
 * collective entry point is also called with the bad argument on the last rank
 * only, and every rank must return the error (the others name that rank).
 *
 * Usage: test_capi_misuse DIR              the checks above (exit 1 if any failed)
 *        test_capi_misuse DIR null-handle  rank 1 passes a NULL file handle to a
 *                                          collective call: the job must end (MPI_Abort)
 *
 * A NULL handle leaves a rank without a communicator to agree on; in a job of
 * more than one rank that ends the job unless H5LOOM_ABORT_ON_ERROR=0, which the
 * checks set so that they can see the status. */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <h5loom/h5loom.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank_ = 0, nranks_ = 1, checks = 0, failures = 0;

#define CHECK(cond)                                                                                          \
  do {                                                                                                       \
    ++checks;                                                                                                \
    if (!(cond)) {                                                                                           \
      ++failures;                                                                                            \
      fprintf(stderr, "rank %d: %s:%d: CHECK failed: %s (last error %s: %s)\n", rank_, __FILE__, __LINE__, \
              #cond, loom_status_name(loom_last_error_code()), loom_last_error_message());                   \
    }                                                                                                        \
  } while (0)
#define OK(call) CHECK((call) == LOOM_OK)
/* Every rank makes the mistake: `code` and a message containing `needle`. */
#define FAILS_WITH(call, code, needle)                                   \
  do {                                                                   \
    loom_status st_ = (call);                                            \
    CHECK(st_ == (code));                                                \
    CHECK(loom_last_error_code() == (code));                             \
    CHECK(strstr(loom_last_error_message(), (needle)) != NULL);          \
  } while (0)
/* Only the last rank makes the mistake in a collective call: every rank gets
 * the error; the others' message names the rank that made it. At 1 rank this
 * is FAILS_WITH(bad_call). */
#define ONE_RANK_FAILS(good_call, bad_call, code, needle)                                  \
  do {                                                                                     \
    const int bad_ = rank_ == nranks_ - 1;                                                 \
    char on_[64];                                                                          \
    loom_status st_ = bad_ ? (bad_call) : (good_call);                                     \
    snprintf(on_, sizeof on_, "(on rank %d;", nranks_ - 1);                                \
    CHECK(st_ == (code));                                                                  \
    CHECK(loom_last_error_code() == (code));                                               \
    CHECK(strstr(loom_last_error_message(), (needle)) != NULL);                            \
    if (!bad_) CHECK(strstr(loom_last_error_message(), on_) != NULL);                      \
  } while (0)

#define BIG ((size_t)-1) /* what a count of -1 becomes */
#define NULL_HANDLE(fn, what) fn ": null " what " handle"

static void test_errors_and_misc(void) {
  CHECK(strcmp(loom_status_name(-1), "LOOM_ERR_UNKNOWN") == 0);
  CHECK(strcmp(loom_status_name(99), "LOOM_ERR_UNKNOWN") == 0);
  CHECK(loom_datatype_size((loom_datatype)-1) == 0);
  CHECK(loom_datatype_size((loom_datatype)42) == 0);
  /* freeing NULL is a no-op, as free(NULL) */
  OK(loom_object_close(NULL));
  OK(loom_step_free(NULL));
  OK(loom_particles_free(NULL));
  OK(loom_field_free(NULL));
}

static void test_files(const char* dir) {
  char path[600];
  loom_file* f = NULL;
  loom_group* g = NULL;
  int r = 0;
  char buf[8];
  snprintf(path, sizeof path, "%s/misuse-files-np%d.h5", dir, nranks_);
  FAILS_WITH(loom_file_create(NULL, MPI_COMM_WORLD, "hdf5", &f), LOOM_ERR_USAGE, "loom_file_create: null string 'name'");
  FAILS_WITH(loom_file_create(path, MPI_COMM_WORLD, "hdf5", NULL), LOOM_ERR_USAGE,
             "loom_file_create: null output pointer 'out'");
  FAILS_WITH(loom_file_create_exclusive(NULL, MPI_COMM_WORLD, "hdf5", &f), LOOM_ERR_USAGE,
             "loom_file_create_exclusive: null string 'name'");
  FAILS_WITH(loom_file_create_exclusive(path, MPI_COMM_WORLD, "hdf5", NULL), LOOM_ERR_USAGE, "null output pointer 'out'");
  FAILS_WITH(loom_file_open(NULL, LOOM_MODE_READ, MPI_COMM_WORLD, NULL, &f), LOOM_ERR_USAGE,
             "loom_file_open: null string 'name'");
  FAILS_WITH(loom_file_open(path, (loom_mode)-1, MPI_COMM_WORLD, NULL, &f), LOOM_ERR_USAGE,
             "loom_file_open: invalid loom_mode value -1 for 'mode'");
  FAILS_WITH(loom_file_open(path, (loom_mode)9, MPI_COMM_WORLD, NULL, &f), LOOM_ERR_USAGE, "invalid loom_mode value 9");
  FAILS_WITH(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, NULL, NULL), LOOM_ERR_USAGE, "null output pointer 'out'");
  FAILS_WITH(loom_file_open_f(NULL, LOOM_MODE_READ, MPI_Comm_c2f(MPI_COMM_WORLD), NULL, &f), LOOM_ERR_USAGE,
             "loom_file_open_f: null string 'name'");
  FAILS_WITH(loom_file_open_f(path, LOOM_MODE_READ, (MPI_Fint)123456, NULL, &f), LOOM_ERR_USAGE,
             "loom_file_open_f: invalid communicator 'comm'");
  CHECK(f == NULL);
  FAILS_WITH(loom_file_flush(NULL), LOOM_ERR_USAGE, NULL_HANDLE("loom_file_flush", "file") " 'f'");
  FAILS_WITH(loom_file_close(NULL), LOOM_ERR_USAGE, NULL_HANDLE("loom_file_close", "file") " 'f'");
  FAILS_WITH(loom_file_rank(NULL, &r, NULL), LOOM_ERR_USAGE, NULL_HANDLE("loom_file_rank", "file"));
  FAILS_WITH(loom_file_engine(NULL, buf, sizeof buf, NULL), LOOM_ERR_USAGE, NULL_HANDLE("loom_file_engine", "file"));
  FAILS_WITH(loom_file_root(NULL, &g), LOOM_ERR_USAGE, NULL_HANDLE("loom_file_root", "file"));

  /* one rank only: agreed on, so the other ranks do not go on into the open */
  ONE_RANK_FAILS(loom_file_create(path, MPI_COMM_WORLD, "hdf5", &f), loom_file_create(NULL, MPI_COMM_WORLD, "hdf5", &f),
                 LOOM_ERR_USAGE, "loom_file_create: null string 'name'");
  CHECK(f == NULL);
  OK(loom_file_create(path, MPI_COMM_WORLD, "hdf5", &f));
  FAILS_WITH(loom_file_engine(f, NULL, 5, NULL), LOOM_ERR_USAGE, "loom_file_engine: null buffer 'buf' with bufsize 5");
  FAILS_WITH(loom_file_root(f, NULL), LOOM_ERR_USAGE, "loom_file_root: null output pointer 'out'");
  OK(loom_file_rank(f, NULL, NULL)); /* rank and size are optional */
  OK(loom_file_close(f));
  {
    loom_file* again = NULL;
    ONE_RANK_FAILS(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, NULL, &again),
                   loom_file_open(path, (loom_mode)7, MPI_COMM_WORLD, NULL, &again), LOOM_ERR_USAGE,
                   "invalid loom_mode value 7");
    CHECK(again == NULL);
  }
}

static void test_groups_datasets_attributes(const char* dir) {
  char path[600], buf[16];
  loom_file* f = NULL;
  loom_group *root = NULL, *g = NULL;
  loom_dataset* d = NULL;
  loom_kind kind;
  size_t n = 0, needed = 0;
  int i = 0;
  uint64_t four[1] = {4}, eight[1] = {8}, start[1] = {0}, count[1] = {4};
  double values[4] = {1, 2, 3, 4}, out[4];
  loom_selection all = loom_select_all(), box = loom_select_box(1, start, count);
  loom_selection negative = loom_select_box(-1, start, count), no_count = loom_select_box(1, start, NULL);
  loom_selection bad_kind = loom_select_all();
  loom_datatype type;
  loom_attr_kind akind;
  const char* strings[2] = {"a", NULL};
  const char* good_strings[2] = {"a", "b"};
  bad_kind.kind = (loom_selection_kind)9;

  snprintf(path, sizeof path, "%s/misuse-objects-np%d.h5", dir, nranks_);
  OK(loom_file_create(path, MPI_COMM_WORLD, "hdf5", &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset(root, "d", LOOM_FLOAT64, 1, four, eight, four, &d));
  OK(loom_group_create_group(root, "g", &g));
  OK(loom_object_close(g));
  g = NULL;

  /* ---- groups ---- */
  FAILS_WITH(loom_group_create_group(NULL, "x", &g), LOOM_ERR_USAGE, NULL_HANDLE("loom_group_create_group", "group") " 'parent'");
  FAILS_WITH(loom_group_create_group(root, NULL, &g), LOOM_ERR_USAGE, "loom_group_create_group: null string 'path'");
  FAILS_WITH(loom_group_create_group(root, "x", NULL), LOOM_ERR_USAGE, "null output pointer 'out'");
  FAILS_WITH(loom_group_create_group(d, "x", &g), LOOM_ERR_USAGE, "is a dataset, not a group");
  FAILS_WITH(loom_group_open_group(NULL, "g", &g), LOOM_ERR_USAGE, NULL_HANDLE("loom_group_open_group", "group"));
  FAILS_WITH(loom_group_open_group(root, NULL, &g), LOOM_ERR_USAGE, "loom_group_open_group: null string 'path'");
  FAILS_WITH(loom_group_open_group(root, "g", NULL), LOOM_ERR_USAGE, "null output pointer 'out'");
  FAILS_WITH(loom_group_kind(NULL, "g", &kind), LOOM_ERR_USAGE, NULL_HANDLE("loom_group_kind", "group"));
  FAILS_WITH(loom_group_kind(root, NULL, &kind), LOOM_ERR_USAGE, "loom_group_kind: null string 'path'");
  FAILS_WITH(loom_group_kind(root, "g", NULL), LOOM_ERR_USAGE, "loom_group_kind: null output pointer 'out'");
  FAILS_WITH(loom_group_member_count(NULL, &n), LOOM_ERR_USAGE, NULL_HANDLE("loom_group_member_count", "group") " 'g'");
  FAILS_WITH(loom_group_member_count(root, NULL), LOOM_ERR_USAGE, "null output pointer 'count'");
  FAILS_WITH(loom_group_member_name(NULL, 0, buf, sizeof buf, &needed), LOOM_ERR_USAGE,
             NULL_HANDLE("loom_group_member_name", "group"));
  OK(loom_group_member_count(root, &n));
  FAILS_WITH(loom_group_member_name(root, 0, NULL, 3, &needed), LOOM_ERR_USAGE, "null buffer 'buf' with bufsize 3");
  FAILS_WITH(loom_group_member_name(root, BIG, buf, sizeof buf, &needed), LOOM_ERR_SELECTION, "out of range");
  OK(loom_group_member_name(root, 0, NULL, 0, &needed)); /* the length only */
  CHECK(needed == 1);

  /* ---- creating and opening datasets ---- */
  FAILS_WITH(loom_group_create_dataset(NULL, "e", LOOM_FLOAT64, 1, four, NULL, NULL, &d), LOOM_ERR_USAGE,
             NULL_HANDLE("loom_group_create_dataset", "group") " 'parent'");
  FAILS_WITH(loom_group_create_dataset(root, NULL, LOOM_FLOAT64, 1, four, NULL, NULL, &d), LOOM_ERR_USAGE,
             "loom_group_create_dataset: null string 'path'");
  FAILS_WITH(loom_group_create_dataset(root, "e", LOOM_FLOAT64, 1, four, NULL, NULL, NULL), LOOM_ERR_USAGE,
             "null output pointer 'out'");
  FAILS_WITH(loom_group_create_dataset(root, "e", (loom_datatype)-1, 1, four, NULL, NULL, &d), LOOM_ERR_DATATYPE,
             "invalid loom_datatype value -1 for 'dtype'");
  FAILS_WITH(loom_group_create_dataset(root, "e", (loom_datatype)11, 1, four, NULL, NULL, &d), LOOM_ERR_DATATYPE,
             "invalid loom_datatype value 11");
  FAILS_WITH(loom_group_create_dataset(root, "e", LOOM_FLOAT64, -1, four, NULL, NULL, &d), LOOM_ERR_SELECTION,
             "invalid number of dimensions -1 for 'ndim'");
  FAILS_WITH(loom_group_create_dataset(root, "e", LOOM_FLOAT64, LOOM_MAX_RANK + 1, four, NULL, NULL, &d),
             LOOM_ERR_SELECTION, "invalid number of dimensions 33 for 'ndim'");
  FAILS_WITH(loom_group_create_dataset(root, "e", LOOM_FLOAT64, 1, NULL, NULL, NULL, &d), LOOM_ERR_USAGE,
             "null array 'shape'");
  ONE_RANK_FAILS(loom_group_create_dataset(root, "e", LOOM_FLOAT64, 1, four, NULL, NULL, &g),
                 loom_group_create_dataset(root, "e", LOOM_FLOAT64, -1, four, NULL, NULL, &g), LOOM_ERR_SELECTION,
                 "invalid number of dimensions -1 for 'ndim'");
  ONE_RANK_FAILS(loom_group_create_group(root, "h", &g), loom_group_create_group(root, NULL, &g), LOOM_ERR_USAGE,
                 "null string 'path'");
  CHECK(g == NULL);
  {
    int exists_e = -1, exists_h = -1;
    loom_kind k1, k2;
    OK(loom_group_kind(root, "e", &k1));
    OK(loom_group_kind(root, "h", &k2));
    exists_e = k1 != LOOM_KIND_NONE, exists_h = k2 != LOOM_KIND_NONE;
    CHECK(!exists_e && !exists_h); /* no rank went on to create them */
  }
  FAILS_WITH(loom_group_open_dataset(NULL, "d", &g), LOOM_ERR_USAGE, NULL_HANDLE("loom_group_open_dataset", "group"));
  FAILS_WITH(loom_group_open_dataset(root, NULL, &g), LOOM_ERR_USAGE, "loom_group_open_dataset: null string 'path'");
  FAILS_WITH(loom_group_open_dataset(root, "d", NULL), LOOM_ERR_USAGE, "null output pointer 'out'");

  /* ---- dataset queries ---- */
  FAILS_WITH(loom_dataset_dtype(NULL, &type), LOOM_ERR_USAGE, NULL_HANDLE("loom_dataset_dtype", "dataset") " 'd'");
  FAILS_WITH(loom_dataset_dtype(d, NULL), LOOM_ERR_USAGE, "loom_dataset_dtype: null output pointer 'out'");
  FAILS_WITH(loom_dataset_dtype(root, &type), LOOM_ERR_USAGE, "is a group, not a dataset");
  FAILS_WITH(loom_dataset_ndim(NULL, &i), LOOM_ERR_USAGE, NULL_HANDLE("loom_dataset_ndim", "dataset"));
  FAILS_WITH(loom_dataset_ndim(d, NULL), LOOM_ERR_USAGE, "loom_dataset_ndim: null output pointer 'out'");
  FAILS_WITH(loom_dataset_shape(NULL, four, NULL, NULL, NULL), LOOM_ERR_USAGE, NULL_HANDLE("loom_dataset_shape", "dataset"));
  FAILS_WITH(loom_dataset_shape(d, NULL, NULL, NULL, NULL), LOOM_ERR_USAGE, "loom_dataset_shape: null output pointer 'shape'");

  /* ---- extend, write, read ---- */
  FAILS_WITH(loom_dataset_extend(NULL, eight), LOOM_ERR_USAGE, NULL_HANDLE("loom_dataset_extend", "dataset"));
  FAILS_WITH(loom_dataset_extend(d, NULL), LOOM_ERR_USAGE, "loom_dataset_extend: null array 'new_shape'");
  ONE_RANK_FAILS(loom_dataset_extend(d, eight), loom_dataset_extend(d, NULL), LOOM_ERR_USAGE, "null array 'new_shape'");
  {
    uint64_t s[1] = {0};
    OK(loom_dataset_shape(d, s, NULL, NULL, NULL));
    CHECK(s[0] == 4); /* no rank extended it */
  }
  FAILS_WITH(loom_dataset_write(NULL, &all, LOOM_FLOAT64, 4, values, LOOM_WRITE_COPY), LOOM_ERR_USAGE,
             NULL_HANDLE("loom_dataset_write", "dataset") " 'd'");
  FAILS_WITH(loom_dataset_write(d, NULL, LOOM_FLOAT64, 4, values, LOOM_WRITE_COPY), LOOM_ERR_USAGE,
             "loom_dataset_write: null selection 'sel'");
  FAILS_WITH(loom_dataset_write(d, &all, (loom_datatype)-3, 4, values, LOOM_WRITE_COPY), LOOM_ERR_DATATYPE,
             "invalid loom_datatype value -3 for 'mem_type'");
  FAILS_WITH(loom_dataset_write(d, &all, LOOM_FLOAT64, BIG, values, LOOM_WRITE_COPY), LOOM_ERR_SELECTION,
             "loom_dataset_write: 'n' = 18446744073709551615 elements of 8 bytes overflows");
  FAILS_WITH(loom_dataset_write(d, &all, LOOM_FLOAT64, 4, NULL, LOOM_WRITE_COPY), LOOM_ERR_USAGE,
             "loom_dataset_write: null buffer 'data' for 4 elements");
  FAILS_WITH(loom_dataset_write(d, &all, LOOM_FLOAT64, 4, values, (loom_write_mode)7), LOOM_ERR_USAGE,
             "invalid loom_write_mode value 7 for 'mode'");
  FAILS_WITH(loom_dataset_write(d, &negative, LOOM_FLOAT64, 4, values, LOOM_WRITE_COPY), LOOM_ERR_SELECTION,
             "invalid number of dimensions -1 for 'sel.ndim'");
  FAILS_WITH(loom_dataset_write(d, &no_count, LOOM_FLOAT64, 4, values, LOOM_WRITE_COPY), LOOM_ERR_SELECTION,
             "null 'sel.start' or 'sel.count'");
  FAILS_WITH(loom_dataset_write(d, &bad_kind, LOOM_FLOAT64, 4, values, LOOM_WRITE_COPY), LOOM_ERR_SELECTION,
             "invalid selection kind 9 in 'sel'");
  FAILS_WITH(loom_dataset_write(d, &all, LOOM_FLOAT64, 5, values, LOOM_WRITE_COPY), LOOM_ERR_SELECTION, "5 elements");
  if (rank_ == 0) OK(loom_dataset_write(d, &box, LOOM_FLOAT64, 4, values, LOOM_WRITE_COPY));
  FAILS_WITH(loom_dataset_read(NULL, &all, LOOM_FLOAT64, 4, out), LOOM_ERR_USAGE, NULL_HANDLE("loom_dataset_read", "dataset"));
  FAILS_WITH(loom_dataset_read(d, NULL, LOOM_FLOAT64, 4, out), LOOM_ERR_USAGE, "loom_dataset_read: null selection 'sel'");
  FAILS_WITH(loom_dataset_read(d, &all, (loom_datatype)12, 4, out), LOOM_ERR_DATATYPE, "invalid loom_datatype value 12");
  FAILS_WITH(loom_dataset_read(d, &all, LOOM_FLOAT64, BIG, out), LOOM_ERR_SELECTION, "'n' = 18446744073709551615");
  FAILS_WITH(loom_dataset_read(d, &all, LOOM_FLOAT64, 4, NULL), LOOM_ERR_USAGE, "loom_dataset_read: null buffer 'out' for 4 elements");
  ONE_RANK_FAILS(loom_dataset_read(d, &all, LOOM_FLOAT64, 4, out), loom_dataset_read(d, &all, LOOM_FLOAT64, 4, NULL),
                 LOOM_ERR_USAGE, "null buffer 'out'");
  ONE_RANK_FAILS(loom_dataset_read(d, &all, LOOM_FLOAT64, 4, out), loom_dataset_read(d, &negative, LOOM_FLOAT64, 4, out),
                 LOOM_ERR_SELECTION, "'sel.ndim'");
  OK(loom_dataset_read(d, &all, LOOM_FLOAT64, 4, out));
  CHECK(out[0] == 1 && out[3] == 4);

  /* ---- objects ---- */
  FAILS_WITH(loom_object_path(NULL, buf, sizeof buf, &needed), LOOM_ERR_USAGE, NULL_HANDLE("loom_object_path", "object") " 'o'");
  FAILS_WITH(loom_object_path(d, NULL, 2, &needed), LOOM_ERR_USAGE, "loom_object_path: null buffer 'buf' with bufsize 2");

  /* ---- attributes ---- */
  FAILS_WITH(loom_attr_write_scalar(NULL, "a", LOOM_FLOAT64, values), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_write_scalar", "object"));
  FAILS_WITH(loom_attr_write_scalar(d, NULL, LOOM_FLOAT64, values), LOOM_ERR_USAGE, "loom_attr_write_scalar: null string 'name'");
  FAILS_WITH(loom_attr_write_scalar(d, "a", (loom_datatype)-1, values), LOOM_ERR_DATATYPE, "invalid loom_datatype value -1 for 'type'");
  FAILS_WITH(loom_attr_write_scalar(d, "a", LOOM_FLOAT64, NULL), LOOM_ERR_USAGE, "loom_attr_write_scalar: null buffer 'value'");
  ONE_RANK_FAILS(loom_attr_write_scalar(d, "a", LOOM_FLOAT64, values), loom_attr_write_scalar(d, "a", LOOM_FLOAT64, NULL),
                 LOOM_ERR_USAGE, "null buffer 'value'");
  FAILS_WITH(loom_attr_write_array(NULL, "a", LOOM_FLOAT64, 4, values), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_write_array", "object"));
  FAILS_WITH(loom_attr_write_array(d, NULL, LOOM_FLOAT64, 4, values), LOOM_ERR_USAGE, "loom_attr_write_array: null string 'name'");
  FAILS_WITH(loom_attr_write_array(d, "a", (loom_datatype)11, 4, values), LOOM_ERR_DATATYPE, "invalid loom_datatype value 11");
  FAILS_WITH(loom_attr_write_array(d, "a", LOOM_FLOAT64, 3, NULL), LOOM_ERR_USAGE, "loom_attr_write_array: null buffer 'values' for 3");
  FAILS_WITH(loom_attr_write_array(d, "a", LOOM_FLOAT64, BIG, values), LOOM_ERR_SELECTION, "'count' = 18446744073709551615");
  ONE_RANK_FAILS(loom_attr_write_array(d, "a", LOOM_FLOAT64, 4, values), loom_attr_write_array(d, "a", LOOM_FLOAT64, BIG, values),
                 LOOM_ERR_SELECTION, "overflows");
  FAILS_WITH(loom_attr_write_string(NULL, "s", "v"), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_write_string", "object"));
  FAILS_WITH(loom_attr_write_string(d, NULL, "v"), LOOM_ERR_USAGE, "loom_attr_write_string: null string 'name'");
  FAILS_WITH(loom_attr_write_string(d, "s", NULL), LOOM_ERR_USAGE, "loom_attr_write_string: null string 'value'");
  ONE_RANK_FAILS(loom_attr_write_string(d, "s", "v"), loom_attr_write_string(d, "s", NULL), LOOM_ERR_USAGE, "null string 'value'");
  FAILS_WITH(loom_attr_write_strings(NULL, "l", 2, good_strings), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_write_strings", "object"));
  FAILS_WITH(loom_attr_write_strings(d, NULL, 2, good_strings), LOOM_ERR_USAGE, "loom_attr_write_strings: null string 'name'");
  FAILS_WITH(loom_attr_write_strings(d, "l", 2, NULL), LOOM_ERR_USAGE, "null buffer 'values' for 2");
  FAILS_WITH(loom_attr_write_strings(d, "l", 2, strings), LOOM_ERR_USAGE, "null string 'values[1]'");
  FAILS_WITH(loom_attr_write_strings(d, "l", BIG, good_strings), LOOM_ERR_SELECTION, "'count' = 18446744073709551615");
  ONE_RANK_FAILS(loom_attr_write_strings(d, "l", 2, good_strings), loom_attr_write_strings(d, "l", 2, strings),
                 LOOM_ERR_USAGE, "null string 'values[1]'");
  {
    int exists = -1;
    OK(loom_attr_exists(d, "a", &exists));
    CHECK(exists == 0); /* none of the writes above happened on any rank */
    OK(loom_attr_exists(d, "l", &exists));
    CHECK(exists == 0);
  }
  OK(loom_attr_write_array(d, "a", LOOM_FLOAT64, 4, values));
  OK(loom_attr_write_strings(d, "l", 2, good_strings));
  FAILS_WITH(loom_attr_exists(NULL, "a", &i), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_exists", "object"));
  FAILS_WITH(loom_attr_exists(d, NULL, &i), LOOM_ERR_USAGE, "loom_attr_exists: null string 'name'");
  FAILS_WITH(loom_attr_exists(d, "a", NULL), LOOM_ERR_USAGE, "loom_attr_exists: null output pointer 'exists'");
  FAILS_WITH(loom_attr_info(NULL, "a", &akind, &type, &n), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_info", "object"));
  FAILS_WITH(loom_attr_info(d, NULL, &akind, &type, &n), LOOM_ERR_USAGE, "loom_attr_info: null string 'name'");
  FAILS_WITH(loom_attr_read(NULL, "a", LOOM_FLOAT64, 4, out), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_read", "object"));
  FAILS_WITH(loom_attr_read(d, NULL, LOOM_FLOAT64, 4, out), LOOM_ERR_USAGE, "loom_attr_read: null string 'name'");
  FAILS_WITH(loom_attr_read(d, "a", (loom_datatype)-2, 4, out), LOOM_ERR_DATATYPE, "invalid loom_datatype value -2 for 'mem_type'");
  FAILS_WITH(loom_attr_read(d, "a", LOOM_FLOAT64, 4, NULL), LOOM_ERR_USAGE, "loom_attr_read: null buffer 'out' for 4");
  FAILS_WITH(loom_attr_read(d, "a", LOOM_FLOAT64, BIG, out), LOOM_ERR_SELECTION, "holds 4 values");
  FAILS_WITH(loom_attr_read_string(NULL, "s", buf, sizeof buf, &needed), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_read_string", "object"));
  FAILS_WITH(loom_attr_read_string(d, NULL, buf, sizeof buf, &needed), LOOM_ERR_USAGE, "loom_attr_read_string: null string 'name'");
  FAILS_WITH(loom_attr_read_string(d, "l", NULL, 4, &needed), LOOM_ERR_USAGE, "null buffer 'buf' with bufsize 4");
  FAILS_WITH(loom_attr_read_string_element(NULL, "l", 0, buf, sizeof buf, &needed), LOOM_ERR_USAGE,
             NULL_HANDLE("loom_attr_read_string_element", "object"));
  FAILS_WITH(loom_attr_read_string_element(d, NULL, 0, buf, sizeof buf, &needed), LOOM_ERR_USAGE, "null string 'name'");
  FAILS_WITH(loom_attr_read_string_element(d, "l", 0, NULL, 9, &needed), LOOM_ERR_USAGE, "null buffer 'buf' with bufsize 9");
  FAILS_WITH(loom_attr_read_string_element(d, "l", BIG, buf, sizeof buf, &needed), LOOM_ERR_SELECTION, "out of range");
  FAILS_WITH(loom_attr_count(NULL, &n), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_count", "object"));
  FAILS_WITH(loom_attr_count(d, NULL), LOOM_ERR_USAGE, "loom_attr_count: null output pointer 'count'");
  FAILS_WITH(loom_attr_name(NULL, 0, buf, sizeof buf, &needed), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_name", "object"));
  OK(loom_attr_count(d, &n));
  FAILS_WITH(loom_attr_name(d, 0, NULL, 1, &needed), LOOM_ERR_USAGE, "loom_attr_name: null buffer 'buf' with bufsize 1");
  FAILS_WITH(loom_attr_name(d, BIG, buf, sizeof buf, &needed), LOOM_ERR_SELECTION, "out of range");

  /* ---- references, variable-length strings and typed attributes ---- */
  {
    loom_ref r = {0}, refs[2];
    loom_type *rt = NULL, *vs = NULL, *empty = NULL;
    char* got[4] = {NULL, NULL, NULL, NULL};
    int yes = 0;
    FAILS_WITH(loom_engine_supports("hdf5", NULL, &yes), LOOM_ERR_USAGE, "loom_engine_supports: null string 'group'");
    FAILS_WITH(loom_engine_supports("hdf5", "references", NULL), LOOM_ERR_USAGE, "null output pointer 'out'");
    FAILS_WITH(loom_engine_supports("bogus", "references", &yes), LOOM_ERR_CONFIG, "unknown engine 'bogus'");
    OK(loom_engine_supports("hdf5", "references", &yes));
    CHECK(yes == 1);
    OK(loom_engine_supports("hdf5", "vlen_strings", &yes)); /* parallel HDF5 cannot write them */
    CHECK(yes == 0);
    FAILS_WITH(loom_type_reference(NULL), LOOM_ERR_USAGE, "loom_type_reference: null output pointer 'out'");
    FAILS_WITH(loom_type_varstring(1, NULL), LOOM_ERR_USAGE, "loom_type_varstring: null output pointer 'out'");
    OK(loom_type_reference(&rt));
    OK(loom_type_varstring(1, &vs));
    OK(loom_type_compound(8, &empty));

    FAILS_WITH(loom_group_reference(NULL, "d", &r), LOOM_ERR_USAGE, NULL_HANDLE("loom_group_reference", "group") " 'g'");
    FAILS_WITH(loom_group_reference(root, NULL, &r), LOOM_ERR_USAGE, "loom_group_reference: null string 'path'");
    FAILS_WITH(loom_group_reference(root, "d", NULL), LOOM_ERR_USAGE, "loom_group_reference: null output pointer 'out'");
    FAILS_WITH(loom_group_reference(d, "x", &r), LOOM_ERR_USAGE, "is a dataset, not a group");
    FAILS_WITH(loom_group_reference(root, "nope", &r), LOOM_ERR_NOT_FOUND, "nothing of that name");
    ONE_RANK_FAILS(loom_group_reference(root, "d", &r), loom_group_reference(root, "d", NULL), LOOM_ERR_USAGE,
                   "null output pointer 'out'");
    OK(loom_group_reference(root, "d", &r));
    FAILS_WITH(loom_group_dereference(NULL, r, buf, sizeof buf, &needed), LOOM_ERR_USAGE,
               NULL_HANDLE("loom_group_dereference", "group") " 'g'");
    FAILS_WITH(loom_group_dereference(root, r, NULL, 4, &needed), LOOM_ERR_USAGE,
               "loom_group_dereference: null buffer 'buf' with bufsize 4");
    FAILS_WITH(loom_group_dereference(d, r, buf, sizeof buf, &needed), LOOM_ERR_USAGE, "is a dataset, not a group");
    ONE_RANK_FAILS(loom_group_dereference(root, r, buf, sizeof buf, &needed),
                   loom_group_dereference(root, r, NULL, 4, &needed), LOOM_ERR_USAGE, "null buffer 'buf'");
    {
      loom_ref null_ref = {0};
      FAILS_WITH(loom_group_dereference(root, null_ref, buf, sizeof buf, &needed), LOOM_ERR_NOT_FOUND,
                 "cannot resolve a null reference");
    }
    OK(loom_group_dereference(root, r, buf, sizeof buf, &needed));
    CHECK(strcmp(buf, "/d") == 0 && needed == 2);

    /* strings: the arguments are checked before the dataset's type (no dataset of
     * variable-length strings here: parallel HDF5 has none) */
    FAILS_WITH(loom_dataset_write_strings(NULL, &all, 2, good_strings), LOOM_ERR_USAGE,
               NULL_HANDLE("loom_dataset_write_strings", "dataset") " 'd'");
    FAILS_WITH(loom_dataset_write_strings(root, &all, 2, good_strings), LOOM_ERR_USAGE, "is a group, not a dataset");
    FAILS_WITH(loom_dataset_write_strings(d, NULL, 2, good_strings), LOOM_ERR_USAGE, "null selection 'sel'");
    FAILS_WITH(loom_dataset_write_strings(d, &all, BIG, good_strings), LOOM_ERR_SELECTION, "'n' = 18446744073709551615");
    FAILS_WITH(loom_dataset_write_strings(d, &all, 2, NULL), LOOM_ERR_USAGE,
               "loom_dataset_write_strings: null buffer 'strings' for 2 elements");
    FAILS_WITH(loom_dataset_write_strings(d, &all, 2, strings), LOOM_ERR_USAGE, "null string 'strings[1]'");
    FAILS_WITH(loom_dataset_write_strings(d, &all, 2, good_strings), LOOM_ERR_DATATYPE,
               "dataset '/d' is of type float64, not variable-length strings");
    FAILS_WITH(loom_dataset_read_strings(NULL, &all, 4, got), LOOM_ERR_USAGE,
               NULL_HANDLE("loom_dataset_read_strings", "dataset"));
    FAILS_WITH(loom_dataset_read_strings(d, NULL, 4, got), LOOM_ERR_USAGE, "loom_dataset_read_strings: null selection 'sel'");
    FAILS_WITH(loom_dataset_read_strings(d, &all, BIG, got), LOOM_ERR_SELECTION, "'n' = 18446744073709551615");
    FAILS_WITH(loom_dataset_read_strings(d, &all, 4, NULL), LOOM_ERR_USAGE, "null buffer 'out' for 4 elements");
    FAILS_WITH(loom_dataset_read_strings(d, &all, 4, got), LOOM_ERR_DATATYPE, "not variable-length strings");
    CHECK(got[0] == NULL && got[3] == NULL);
    OK(loom_strings_free(NULL, 3)); /* nothing to free */
    FAILS_WITH(loom_dataset_write_typed(d, &all, vs, 4, values, LOOM_WRITE_COPY), LOOM_ERR_DATATYPE,
               "use loom_dataset_write_strings");
    FAILS_WITH(loom_group_create_dataset_typed(root, "vs", vs, 1, four, NULL, "fill", &g), LOOM_ERR_DATATYPE,
               "has no fill value");

    /* attributes of references and of any type */
    refs[0] = r;
    refs[1] = r;
    FAILS_WITH(loom_attr_write_ref(NULL, "r", r), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_write_ref", "object") " 'o'");
    FAILS_WITH(loom_attr_write_ref(d, NULL, r), LOOM_ERR_USAGE, "loom_attr_write_ref: null string 'name'");
    ONE_RANK_FAILS(loom_attr_write_ref(d, "r", r), loom_attr_write_ref(d, NULL, r), LOOM_ERR_USAGE, "null string 'name'");
    FAILS_WITH(loom_attr_write_refs(NULL, "rs", 2, refs), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_write_refs", "object"));
    FAILS_WITH(loom_attr_write_refs(d, NULL, 2, refs), LOOM_ERR_USAGE, "loom_attr_write_refs: null string 'name'");
    FAILS_WITH(loom_attr_write_refs(d, "rs", 2, NULL), LOOM_ERR_USAGE, "null buffer 'refs' for 2 elements");
    FAILS_WITH(loom_attr_write_refs(d, "rs", BIG, refs), LOOM_ERR_SELECTION, "'count' = 18446744073709551615");
    ONE_RANK_FAILS(loom_attr_write_refs(d, "rs", 2, refs), loom_attr_write_refs(d, "rs", 2, NULL), LOOM_ERR_USAGE,
                   "null buffer 'refs'");
    FAILS_WITH(loom_attr_write_typed(NULL, "t", rt, LOOM_ATTR_ARRAY, 2, refs), LOOM_ERR_USAGE,
               NULL_HANDLE("loom_attr_write_typed", "object"));
    FAILS_WITH(loom_attr_write_typed(d, NULL, rt, LOOM_ATTR_ARRAY, 2, refs), LOOM_ERR_USAGE, "null string 'name'");
    FAILS_WITH(loom_attr_write_typed(d, "t", NULL, LOOM_ATTR_ARRAY, 2, refs), LOOM_ERR_USAGE,
               "loom_attr_write_typed: null loom_type 'type'");
    FAILS_WITH(loom_attr_write_typed(d, "t", empty, LOOM_ATTR_ARRAY, 1, refs), LOOM_ERR_DATATYPE,
               "loom_type 'type' has no members yet");
    FAILS_WITH(loom_attr_write_typed(d, "t", rt, (loom_attr_kind)7, 2, refs), LOOM_ERR_USAGE,
               "invalid loom_attr_kind value 7 for 'kind'");
    FAILS_WITH(loom_attr_write_typed(d, "t", rt, LOOM_ATTR_STRING, 2, refs), LOOM_ERR_USAGE,
               "invalid loom_attr_kind value 2");
    FAILS_WITH(loom_attr_write_typed(d, "t", rt, LOOM_ATTR_SCALAR, 2, refs), LOOM_ERR_SELECTION,
               "a scalar attribute holds 1 value, not 'count' = 2");
    FAILS_WITH(loom_attr_write_typed(d, "t", rt, LOOM_ATTR_ARRAY, 2, NULL), LOOM_ERR_USAGE, "null buffer 'values' for 2");
    FAILS_WITH(loom_attr_write_typed(d, "t", rt, LOOM_ATTR_ARRAY, BIG, refs), LOOM_ERR_SELECTION, "overflows");
    FAILS_WITH(loom_attr_write_typed(d, "t", vs, LOOM_ATTR_ARRAY, 2, good_strings), LOOM_ERR_DATATYPE,
               "loom_attr_write_strings");
    ONE_RANK_FAILS(loom_attr_write_typed(d, "t", rt, LOOM_ATTR_ARRAY, 2, refs),
                   loom_attr_write_typed(d, "t", rt, (loom_attr_kind)-1, 2, refs), LOOM_ERR_USAGE,
                   "invalid loom_attr_kind value -1");
    {
      int exists = -1;
      OK(loom_attr_exists(d, "rs", &exists));
      CHECK(exists == 0); /* none of the writes above happened on any rank */
      OK(loom_attr_exists(d, "t", &exists));
      CHECK(exists == 0);
    }
    OK(loom_attr_write_refs(d, "rs", 2, refs));
    FAILS_WITH(loom_attr_read_refs(NULL, "rs", 2, refs), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_read_refs", "object"));
    FAILS_WITH(loom_attr_read_refs(d, NULL, 2, refs), LOOM_ERR_USAGE, "loom_attr_read_refs: null string 'name'");
    FAILS_WITH(loom_attr_read_refs(d, "rs", 2, NULL), LOOM_ERR_USAGE, "null buffer 'out' for 2");
    FAILS_WITH(loom_attr_read_refs(d, "rs", 3, refs), LOOM_ERR_SELECTION, "attribute 'rs' on '/d' holds 2 values, not 3");
    FAILS_WITH(loom_attr_read_refs(d, "a", 4, refs), LOOM_ERR_DATATYPE,
               "attribute 'a' on '/d' holds float64 values, not references");
    FAILS_WITH(loom_attr_read_refs(d, "l", 2, refs), LOOM_ERR_DATATYPE, "loom_attr_read_string");
    FAILS_WITH(loom_attr_read(d, "rs", LOOM_UINT64, 2, out), LOOM_ERR_DATATYPE, "read it with loom_attr_read_refs");
    FAILS_WITH(loom_attr_read_typed(NULL, "rs", rt, 2, refs), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_read_typed", "object"));
    FAILS_WITH(loom_attr_read_typed(d, NULL, rt, 2, refs), LOOM_ERR_USAGE, "loom_attr_read_typed: null string 'name'");
    FAILS_WITH(loom_attr_read_typed(d, "rs", NULL, 2, refs), LOOM_ERR_USAGE, "null loom_type 'mem_type'");
    FAILS_WITH(loom_attr_read_typed(d, "rs", rt, 2, NULL), LOOM_ERR_USAGE, "null buffer 'out' for 2");
    FAILS_WITH(loom_attr_read_typed(d, "rs", rt, BIG, refs), LOOM_ERR_SELECTION, "holds 2 values");
    FAILS_WITH(loom_attr_read_typed(d, "a", rt, 4, refs), LOOM_ERR_DATATYPE,
               "attribute 'a' on '/d' is of type float64, not reference");
    FAILS_WITH(loom_attr_type(NULL, "rs", &empty), LOOM_ERR_USAGE, NULL_HANDLE("loom_attr_type", "object"));
    FAILS_WITH(loom_attr_type(d, NULL, &empty), LOOM_ERR_USAGE, "loom_attr_type: null string 'name'");
    FAILS_WITH(loom_attr_type(d, "rs", NULL), LOOM_ERR_USAGE, "loom_attr_type: null output pointer 'out'");
    FAILS_WITH(loom_attr_type(d, "l", &rt), LOOM_ERR_DATATYPE, "a string attribute: it has no loom_type");
    FAILS_WITH(loom_attr_type(d, "missing", &rt), LOOM_ERR_NOT_FOUND, "missing");
    OK(loom_attr_read_refs(d, "rs", 2, refs));
    CHECK(refs[0].token == r.token && refs[1].token == r.token);
    OK(loom_type_free(rt));
    OK(loom_type_free(vs));
    OK(loom_type_free(empty));
  }

  /* ---- ranks in different collective calls ---- */
  if (nranks_ > 1) {
    loom_status st = rank_ == 0 ? loom_file_flush(f) : loom_attr_write_string(root, "x", "y");
    CHECK(st == LOOM_ERR_COLLECTIVE_MISMATCH);
    CHECK(strstr(loom_last_error_message(), "different collective calls (loom_file_flush and loom_attr_write_string)") != NULL);
  }

  OK(loom_object_close(d));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

static void test_series(const char* dir) {
  char path[600];
  loom_series* s = NULL;
  loom_step *st = NULL, *st2 = NULL;
  loom_particles *p = NULL, *q = NULL;
  loom_field* fld = NULL;
  loom_group* g = NULL;
  loom_series_layout layout;
  size_t n = 0;
  uint64_t u = 0, b = 0, e = 0, shape[1], lshape[1] = {2}, at[1], lo[1], cnt[1] = {2}, idx[2] = {0, 1};
  double x[2] = {1, 2}, back[2], t = 0, dt = 0, fill = 0;
  int nd = 0;
  snprintf(path, sizeof path, "%s/misuse-series-np%d.h5", dir, nranks_);
  shape[0] = 2 * (uint64_t)nranks_;
  at[0] = lo[0] = 2 * (uint64_t)rank_;

  FAILS_WITH(loom_series_create(NULL, MPI_COMM_WORLD, "hdf5", LOOM_SERIES_OPENPMD, &s), LOOM_ERR_USAGE,
             "loom_series_create: null string 'name'");
  FAILS_WITH(loom_series_create(path, MPI_COMM_WORLD, "hdf5", LOOM_SERIES_OPENPMD, NULL), LOOM_ERR_USAGE,
             "loom_series_create: null output pointer 'out'");
  FAILS_WITH(loom_series_create(path, MPI_COMM_WORLD, "hdf5", (loom_series_layout)5, &s), LOOM_ERR_CONFIG,
             "invalid loom_series_layout value 5 for 'layout'");
  ONE_RANK_FAILS(loom_series_create(path, MPI_COMM_WORLD, "hdf5", LOOM_SERIES_OPENPMD, &s),
                 loom_series_create(path, MPI_COMM_WORLD, "hdf5", (loom_series_layout)-1, &s), LOOM_ERR_CONFIG,
                 "invalid loom_series_layout value -1");
  CHECK(s == NULL);
  FAILS_WITH(loom_series_append(NULL, MPI_COMM_WORLD, NULL, &s), LOOM_ERR_USAGE, "loom_series_append: null string 'name'");
  FAILS_WITH(loom_series_append(path, MPI_COMM_WORLD, NULL, NULL), LOOM_ERR_USAGE, "loom_series_append: null output pointer 'out'");
  FAILS_WITH(loom_series_open(NULL, MPI_COMM_WORLD, NULL, &s), LOOM_ERR_USAGE, "loom_series_open: null string 'name'");
  FAILS_WITH(loom_series_open(path, MPI_COMM_WORLD, NULL, NULL), LOOM_ERR_USAGE, "loom_series_open: null output pointer 'out'");
  FAILS_WITH(loom_series_close(NULL), LOOM_ERR_USAGE, NULL_HANDLE("loom_series_close", "series") " 's'");
  FAILS_WITH(loom_series_layout_of(NULL, &layout), LOOM_ERR_USAGE, NULL_HANDLE("loom_series_layout_of", "series"));
  FAILS_WITH(loom_series_root(NULL, &g), LOOM_ERR_USAGE, NULL_HANDLE("loom_series_root", "series"));
  FAILS_WITH(loom_series_step_count(NULL, &n), LOOM_ERR_USAGE, NULL_HANDLE("loom_series_step_count", "series") " 's'");
  FAILS_WITH(loom_series_step_number(NULL, 0, &u), LOOM_ERR_USAGE, NULL_HANDLE("loom_series_step_number", "series"));
  FAILS_WITH(loom_series_write_step(NULL, 0, 0.0, 0.0, &st), LOOM_ERR_USAGE, NULL_HANDLE("loom_series_write_step", "series"));
  FAILS_WITH(loom_series_step(NULL, 0, &st), LOOM_ERR_USAGE, NULL_HANDLE("loom_series_step", "series"));

  OK(loom_series_create(path, MPI_COMM_WORLD, "hdf5", LOOM_SERIES_OPENPMD, &s));
  FAILS_WITH(loom_series_layout_of(s, NULL), LOOM_ERR_USAGE, "loom_series_layout_of: null output pointer 'out'");
  FAILS_WITH(loom_series_root(s, NULL), LOOM_ERR_USAGE, "loom_series_root: null output pointer 'out'");
  FAILS_WITH(loom_series_step_count(s, NULL), LOOM_ERR_USAGE, "loom_series_step_count: null output pointer 'count'");
  FAILS_WITH(loom_series_step_number(s, 0, NULL), LOOM_ERR_USAGE, "null output pointer 'step'");
  FAILS_WITH(loom_series_write_step(s, 0, 0.0, 0.0, NULL), LOOM_ERR_USAGE, "loom_series_write_step: null output pointer 'out'");
  ONE_RANK_FAILS(loom_series_write_step(s, 0, 0.0, 0.0, &st), loom_series_write_step(s, 0, 0.0, 0.0, NULL),
                 LOOM_ERR_USAGE, "null output pointer 'out'");
  CHECK(st == NULL);
  OK(loom_series_write_step(s, 0, 0.5, 0.25, &st));

  /* ---- steps ---- */
  FAILS_WITH(loom_step_time(NULL, &t, &dt), LOOM_ERR_USAGE, NULL_HANDLE("loom_step_time", "step") " 'st'");
  FAILS_WITH(loom_step_group(NULL, &g), LOOM_ERR_USAGE, NULL_HANDLE("loom_step_group", "step"));
  FAILS_WITH(loom_step_group(st, NULL), LOOM_ERR_USAGE, "loom_step_group: null output pointer 'out'");
  FAILS_WITH(loom_step_end(NULL), LOOM_ERR_USAGE, NULL_HANDLE("loom_step_end", "step"));
  FAILS_WITH(loom_step_particles(NULL, "e", &p), LOOM_ERR_USAGE, NULL_HANDLE("loom_step_particles", "step"));
  FAILS_WITH(loom_step_particles(st, NULL, &p), LOOM_ERR_USAGE, "loom_step_particles: null string 'species'");
  FAILS_WITH(loom_step_particles(st, "e", NULL), LOOM_ERR_USAGE, "loom_step_particles: null output pointer 'out'");

  /* ---- particles, writing ---- */
  OK(loom_step_particles(st, "e", &p));
  FAILS_WITH(loom_particles_set_local_count(NULL, 2, &u, &u), LOOM_ERR_USAGE, NULL_HANDLE("loom_particles_set_local_count", "particles"));
  if (nranks_ > 1) {
    /* -1 particles on the last rank: the ranks' counts add up past 2^64 - 1,
     * which every rank finds from the same sum */
    FAILS_WITH(loom_particles_set_local_count(p, rank_ == nranks_ - 1 ? (uint64_t)-1 : 2, &b, &u), LOOM_ERR_SELECTION,
               "loom_particles_set_local_count: the local counts 'n' of the ranks add up to more than 2^64 - 1");
  }
  OK(loom_particles_set_local_count(p, 2, &b, &u));
  CHECK(b == 2 * (uint64_t)rank_ && u == 2 * (uint64_t)nranks_);
  FAILS_WITH(loom_particles_write(NULL, "x", LOOM_FLOAT64, x), LOOM_ERR_USAGE, NULL_HANDLE("loom_particles_write", "particles"));
  FAILS_WITH(loom_particles_write(p, NULL, LOOM_FLOAT64, x), LOOM_ERR_USAGE, "loom_particles_write: null string 'array'");
  FAILS_WITH(loom_particles_write(p, "x", (loom_datatype)-1, x), LOOM_ERR_DATATYPE, "invalid loom_datatype value -1 for 'dtype'");
  FAILS_WITH(loom_particles_write(p, "x", LOOM_FLOAT64, NULL), LOOM_ERR_USAGE, "loom_particles_write: null buffer 'data' for 2");
  OK(loom_particles_write(p, "x", LOOM_FLOAT64, x));
  FAILS_WITH(loom_particles_global_count(NULL, &u), LOOM_ERR_USAGE, NULL_HANDLE("loom_particles_global_count", "particles"));
  FAILS_WITH(loom_particles_global_count(p, NULL), LOOM_ERR_USAGE, "loom_particles_global_count: null output pointer 'out'");
  FAILS_WITH(loom_particles_my_share(NULL, &b, &e), LOOM_ERR_USAGE, NULL_HANDLE("loom_particles_my_share", "particles"));

  /* ---- fields, writing ---- */
  FAILS_WITH(loom_step_create_field(NULL, "rho", 1, shape, 1, LOOM_FLOAT64, NULL, NULL, &fld), LOOM_ERR_USAGE,
             NULL_HANDLE("loom_step_create_field", "step"));
  FAILS_WITH(loom_step_create_field(st, NULL, 1, shape, 1, LOOM_FLOAT64, NULL, NULL, &fld), LOOM_ERR_USAGE,
             "loom_step_create_field: null string 'name'");
  FAILS_WITH(loom_step_create_field(st, "rho", 1, shape, 1, LOOM_FLOAT64, NULL, NULL, NULL), LOOM_ERR_USAGE,
             "loom_step_create_field: null output pointer 'out'");
  FAILS_WITH(loom_step_create_field(st, "rho", -2, shape, 1, LOOM_FLOAT64, NULL, NULL, &fld), LOOM_ERR_SELECTION,
             "invalid number of dimensions -2 for 'ndim'");
  FAILS_WITH(loom_step_create_field(st, "rho", 1, NULL, 1, LOOM_FLOAT64, NULL, NULL, &fld), LOOM_ERR_USAGE,
             "null array 'global_shape'");
  FAILS_WITH(loom_step_create_field(st, "rho", 1, shape, -1, LOOM_FLOAT64, NULL, NULL, &fld), LOOM_ERR_SELECTION,
             "'components' is -1");
  FAILS_WITH(loom_step_create_field(st, "rho", 1, shape, 1, (loom_datatype)99, NULL, NULL, &fld), LOOM_ERR_DATATYPE,
             "invalid loom_datatype value 99");
  ONE_RANK_FAILS(loom_step_create_field(st, "rho", 1, shape, 1, LOOM_FLOAT64, NULL, NULL, &fld),
                 loom_step_create_field(st, "rho", 1, shape, 2, LOOM_FLOAT64, NULL, NULL, &fld), LOOM_ERR_SELECTION,
                 "'components' is 2");
  CHECK(fld == NULL);
  OK(loom_step_create_field(st, "rho", 1, shape, 1, LOOM_FLOAT64, NULL, NULL, &fld));
  FAILS_WITH(loom_field_info(NULL, &nd, NULL, NULL, NULL), LOOM_ERR_USAGE, NULL_HANDLE("loom_field_info", "field") " 'f'");
  FAILS_WITH(loom_field_write(NULL, 0, LOOM_FLOAT64, x, lshape, at, 0), LOOM_ERR_USAGE, NULL_HANDLE("loom_field_write", "field"));
  FAILS_WITH(loom_field_write(fld, 0, LOOM_FLOAT64, x, NULL, at, 0), LOOM_ERR_USAGE, "loom_field_write: null array 'local_shape'");
  FAILS_WITH(loom_field_write(fld, 0, LOOM_FLOAT64, x, lshape, NULL, 0), LOOM_ERR_USAGE, "loom_field_write: null array 'offset'");
  FAILS_WITH(loom_field_write(fld, -1, LOOM_FLOAT64, x, lshape, at, 0), LOOM_ERR_SELECTION, "'component' is -1");
  FAILS_WITH(loom_field_write(fld, 0, (loom_datatype)-1, x, lshape, at, 0), LOOM_ERR_DATATYPE, "invalid loom_datatype value -1");
  FAILS_WITH(loom_field_write(fld, 0, LOOM_FLOAT64, NULL, lshape, at, 0), LOOM_ERR_USAGE, "loom_field_write: null buffer 'local' for 2");
  FAILS_WITH(loom_field_write(fld, 0, LOOM_FLOAT64, x, lshape, at, (uint64_t)-1), LOOM_ERR_SELECTION, "overflows");
  OK(loom_field_write(fld, 0, LOOM_FLOAT64, x, lshape, at, 0));
  OK(loom_field_free(fld));
  fld = NULL;
  OK(loom_particles_free(p));
  p = NULL;
  OK(loom_step_end(st));
  OK(loom_step_free(st));

  /* ---- reading back through the same series ---- */
  OK(loom_series_step_count(s, &n));
  FAILS_WITH(loom_series_step_number(s, BIG, &u), LOOM_ERR_SELECTION, "out of range");
  FAILS_WITH(loom_series_step(s, 0, NULL), LOOM_ERR_USAGE, "loom_series_step: null output pointer 'out'");
  OK(loom_series_step(s, 0, &st2));
  OK(loom_step_particles(st2, "e", &q));
  FAILS_WITH(loom_particles_read_range(NULL, "x", LOOM_FLOAT64, 0, 2, back), LOOM_ERR_USAGE,
             NULL_HANDLE("loom_particles_read_range", "particles"));
  FAILS_WITH(loom_particles_read_range(q, NULL, LOOM_FLOAT64, 0, 2, back), LOOM_ERR_USAGE, "null string 'array'");
  FAILS_WITH(loom_particles_read_range(q, "x", (loom_datatype)11, 0, 2, back), LOOM_ERR_DATATYPE, "invalid loom_datatype value 11");
  FAILS_WITH(loom_particles_read_range(q, "x", LOOM_FLOAT64, 2, 1, back), LOOM_ERR_SELECTION, "'end' 1 is before 'begin' 2");
  FAILS_WITH(loom_particles_read_range(q, "x", LOOM_FLOAT64, 0, 2, NULL), LOOM_ERR_USAGE, "null buffer 'out' for 2");
  FAILS_WITH(loom_particles_read_range(q, "x", LOOM_FLOAT64, 0, (uint64_t)-1, back), LOOM_ERR_SELECTION, "overflows");
  ONE_RANK_FAILS(loom_particles_read_range(q, "x", LOOM_FLOAT64, 0, 2, back),
                 loom_particles_read_range(q, "x", LOOM_FLOAT64, 2, 0, back), LOOM_ERR_SELECTION, "is before 'begin'");
  FAILS_WITH(loom_particles_read_indices(NULL, "x", LOOM_FLOAT64, 2, idx, back), LOOM_ERR_USAGE,
             NULL_HANDLE("loom_particles_read_indices", "particles"));
  FAILS_WITH(loom_particles_read_indices(q, NULL, LOOM_FLOAT64, 2, idx, back), LOOM_ERR_USAGE, "null string 'array'");
  FAILS_WITH(loom_particles_read_indices(q, "x", (loom_datatype)-5, 2, idx, back), LOOM_ERR_DATATYPE, "invalid loom_datatype value -5");
  FAILS_WITH(loom_particles_read_indices(q, "x", LOOM_FLOAT64, 2, NULL, back), LOOM_ERR_USAGE, "null buffer 'indices' for 2");
  FAILS_WITH(loom_particles_read_indices(q, "x", LOOM_FLOAT64, 2, idx, NULL), LOOM_ERR_USAGE, "null buffer 'out' for 2");
  FAILS_WITH(loom_particles_read_indices(q, "x", LOOM_FLOAT64, BIG, idx, back), LOOM_ERR_SELECTION, "'count' = 18446744073709551615");
  ONE_RANK_FAILS(loom_particles_read_indices(q, "x", LOOM_FLOAT64, 2, idx, back),
                 loom_particles_read_indices(q, "x", LOOM_FLOAT64, 2, NULL, back), LOOM_ERR_USAGE, "null buffer 'indices'");
  OK(loom_particles_read_range(q, "x", LOOM_FLOAT64, 0, 2, back));
  CHECK(back[0] == 1 && back[1] == 2);

  FAILS_WITH(loom_step_open_field(NULL, "rho", &fld), LOOM_ERR_USAGE, NULL_HANDLE("loom_step_open_field", "step"));
  FAILS_WITH(loom_step_open_field(st2, NULL, &fld), LOOM_ERR_USAGE, "loom_step_open_field: null string 'name'");
  FAILS_WITH(loom_step_open_field(st2, "rho", NULL), LOOM_ERR_USAGE, "loom_step_open_field: null output pointer 'out'");
  OK(loom_step_open_field(st2, "rho", &fld));
  FAILS_WITH(loom_field_read(NULL, 0, LOOM_FLOAT64, lo, cnt, 0, &fill, back), LOOM_ERR_USAGE, NULL_HANDLE("loom_field_read", "field"));
  FAILS_WITH(loom_field_read(fld, 0, LOOM_FLOAT64, NULL, cnt, 0, &fill, back), LOOM_ERR_USAGE, "loom_field_read: null array 'lo'");
  FAILS_WITH(loom_field_read(fld, 0, LOOM_FLOAT64, lo, NULL, 0, &fill, back), LOOM_ERR_USAGE, "loom_field_read: null array 'count'");
  FAILS_WITH(loom_field_read(fld, -1, LOOM_FLOAT64, lo, cnt, 0, &fill, back), LOOM_ERR_SELECTION, "'component' is -1");
  FAILS_WITH(loom_field_read(fld, 0, (loom_datatype)-1, lo, cnt, 0, &fill, back), LOOM_ERR_DATATYPE, "invalid loom_datatype value -1");
  FAILS_WITH(loom_field_read(fld, 0, LOOM_FLOAT64, lo, cnt, 0, &fill, NULL), LOOM_ERR_USAGE, "loom_field_read: null buffer 'out' for 2");
  FAILS_WITH(loom_field_read(fld, 0, LOOM_FLOAT64, lo, cnt, (uint64_t)-1 / 2, &fill, back), LOOM_ERR_SELECTION, "overflows");
  ONE_RANK_FAILS(loom_field_read(fld, 0, LOOM_FLOAT64, lo, cnt, 0, &fill, back),
                 loom_field_read(fld, 0, LOOM_FLOAT64, lo, cnt, 0, &fill, NULL), LOOM_ERR_USAGE, "null buffer 'out'");
  OK(loom_field_read(fld, 0, LOOM_FLOAT64, lo, cnt, 0, &fill, back));
  CHECK(back[0] == 1 && back[1] == 2);
  OK(loom_field_info(fld, &nd, NULL, NULL, NULL));
  CHECK(nd == 1);
  OK(loom_field_free(fld));
  OK(loom_particles_free(q));
  OK(loom_step_free(st2));
  OK(loom_series_close(s));
  ONE_RANK_FAILS(loom_series_open(path, MPI_COMM_WORLD, NULL, &s), loom_series_open(NULL, MPI_COMM_WORLD, NULL, &s),
                 LOOM_ERR_USAGE, "loom_series_open: null string 'name'");
  CHECK(s == NULL);
}

/* Rank 1 passes a NULL handle to a collective call while rank 0 passes its
 * file: rank 1 has no communicator to agree on and ends the job. */
static int null_handle_on_one_rank(const char* dir) {
  char path[600];
  loom_file* f = NULL;
  snprintf(path, sizeof path, "%s/misuse-null-handle.h5", dir);
  if (loom_file_create(path, MPI_COMM_WORLD, "hdf5", &f) != LOOM_OK) return 2;
  loom_file_flush(rank_ == 1 ? NULL : f);
  fprintf(stderr, "rank %d: still running after the NULL handle\n", rank_);
  return 3;
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : ".";
  int total_failures = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
  if (argc > 2 && strcmp(argv[2], "null-handle") == 0) {
    int code = null_handle_on_one_rank(dir);
    MPI_Finalize();
    return code;
  }
  setenv("H5LOOM_ABORT_ON_ERROR", "0", 1); /* see the NULL handles' status instead of ending the job */
  test_errors_and_misc();
  test_files(dir);
  test_groups_datasets_attributes(dir);
  test_series(dir);
  MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0)
    printf("C API misuse tests at %d rank(s): %d checks per rank, %d failed in all\n", nranks_, checks, total_failures);
  MPI_Finalize();
  return total_failures ? 1 : 0;
}
