/* Tests of the C API in plain C99: the object model, engine choice and error
 * reporting. Run at 1 and 2 ranks (mpirun). Every check is counted; the
 * program fails if any check failed on any rank. */
#include <h5loom/h5loom.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
/* A call that must fail with `code` and a message containing `needle`. */
#define FAILS_WITH(call, code, needle)                                                          \
  do {                                                                                          \
    loom_status st_ = (call);                                                                   \
    CHECK(st_ == (code));                                                                       \
    CHECK(loom_last_error_code() == (code));                                                    \
    CHECK(strstr(loom_last_error_message(), (needle)) != NULL);                                 \
  } while (0)

static void test_round_trip(const char* path) {
  loom_file* f = NULL;
  loom_group *root = NULL, *grid = NULL;
  loom_dataset* rho = NULL;
  uint64_t shape[2] = {2 * (uint64_t)nranks_, 3}, start[2] = {2 * (uint64_t)rank_, 0}, count[2] = {2, 3};
  double mine[6];
  int i;
  for (i = 0; i < 6; ++i) mine[i] = rank_ * 100 + i;

  OK(loom_file_create(path, MPI_COMM_WORLD, "hdf5", &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_group(root, "grid", &grid));
  OK(loom_group_create_dataset(grid, "rho", LOOM_FLOAT64, 2, shape, NULL, NULL, &rho));
  {
    loom_selection sel = loom_select_box(2, start, count);
    OK(loom_dataset_write(rho, &sel, LOOM_FLOAT64, 6, mine, LOOM_WRITE_DEFERRED));
  }
  {
    double t = 0.25;
    int32_t axes[3] = {2, 1, 0};
    OK(loom_attr_write_scalar(rho, "time", LOOM_FLOAT64, &t));
    OK(loom_attr_write_array(rho, "axes", LOOM_INT32, 3, axes));
    const char* labels[3] = {"z", "y", "x"};
    OK(loom_attr_write_string(root, "title", "C API test"));
    const int64_t count = 300;
    OK(loom_attr_write_scalar(root, "count", LOOM_INT64, &count));
    OK(loom_attr_write_strings(rho, "axisLabels", 3, labels));
  }
  OK(loom_object_close(rho));
  OK(loom_object_close(grid));
  OK(loom_object_close(root));
  OK(loom_file_close(f)); /* flush point: `mine` is read here */

  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, NULL, &f));
  OK(loom_file_root(f, &root));
  {
    loom_kind k;
    size_t n = 0, needed = 0;
    char name[64];
    OK(loom_group_kind(root, "grid/rho", &k));
    CHECK(k == LOOM_KIND_DATASET);
    OK(loom_group_kind(root, "grid", &k));
    CHECK(k == LOOM_KIND_GROUP);
    OK(loom_group_kind(root, "nothing", &k));
    CHECK(k == LOOM_KIND_NONE);
    OK(loom_group_member_count(root, &n));
    CHECK(n == 1);
    OK(loom_group_member_name(root, 0, name, sizeof name, &needed));
    CHECK(strcmp(name, "grid") == 0 && needed == 4);
    FAILS_WITH(loom_group_member_name(root, 99, name, sizeof name, &needed), LOOM_ERR_SELECTION, "member index 99");
    OK(loom_attr_read_string(root, "title", name, sizeof name, &needed));
    CHECK(strcmp(name, "C API test") == 0);
    OK(loom_attr_read_string(root, "title", name, 4, &needed)); /* truncated, still terminated */
    CHECK(strcmp(name, "C A") == 0 && needed == 10);
  }
  OK(loom_group_open_dataset(root, "/grid/rho", &rho));
  {
    double all[64];
    uint64_t s[2], m[2], c[2];
    loom_layout layout;
    loom_datatype dt;
    int ndim = 0, r;
    loom_selection everything = loom_select_all();
    char path_buf[32];
    OK(loom_dataset_ndim(rho, &ndim));
    CHECK(ndim == 2);
    OK(loom_dataset_dtype(rho, &dt));
    CHECK(dt == LOOM_FLOAT64);
    OK(loom_dataset_shape(rho, s, m, c, &layout));
    CHECK(s[0] == shape[0] && s[1] == 3 && m[0] == shape[0] && layout == LOOM_LAYOUT_CONTIGUOUS && c[0] == 0);
    OK(loom_dataset_read(rho, &everything, LOOM_FLOAT64, 6 * (size_t)nranks_, all));
    for (r = 0; r < nranks_; ++r)
      for (i = 0; i < 6; ++i) CHECK(all[r * 6 + i] == r * 100 + i);
    OK(loom_object_path(rho, path_buf, sizeof path_buf, NULL));
    CHECK(strcmp(path_buf, "/grid/rho") == 0);
  }
  {
    loom_attr_kind kind;
    loom_datatype type;
    size_t n = 0;
    double t = 0;
    int64_t axes[3] = {0, 0, 0};
    float tf = 0;
    OK(loom_attr_info(rho, "axes", &kind, &type, &n));
    CHECK(kind == LOOM_ATTR_ARRAY && type == LOOM_INT32 && n == 3);
    OK(loom_attr_read(rho, "axes", LOOM_INT64, 3, axes)); /* numbers convert */
    CHECK(axes[0] == 2 && axes[1] == 1 && axes[2] == 0);
    OK(loom_attr_read(rho, "time", LOOM_FLOAT64, 1, &t));
    CHECK(t == 0.25);
    OK(loom_attr_read(rho, "time", LOOM_FLOAT32, 1, &tf));
    CHECK(tf == 0.25f);
    {
      /* a value the memory type cannot hold is refused, not wrapped or undefined */
      uint8_t small = 0;
      int32_t whole = 0;
      FAILS_WITH(loom_attr_read(root, "count", LOOM_UINT8, 1, &small), LOOM_ERR_DATATYPE,
                 "attribute 'count' on '/': attribute value 300 (element 0 of its int64 values) is not a value of uint8");
      OK(loom_attr_read(root, "count", LOOM_INT32, 1, &whole));
      CHECK(whole == 300 && small == 0);
    }
    OK(loom_attr_count(rho, &n));
    CHECK(n == 3);
    {
      char name[16];
      OK(loom_attr_name(rho, 2, name, sizeof name, NULL));
      CHECK(strcmp(name, "time") == 0);
      OK(loom_attr_info(rho, "axisLabels", &kind, NULL, &n));
      CHECK(kind == LOOM_ATTR_STRING_ARRAY && n == 3);
      OK(loom_attr_read_string_element(rho, "axisLabels", 2, name, sizeof name, NULL));
      CHECK(strcmp(name, "x") == 0);
      FAILS_WITH(loom_attr_read(rho, "axisLabels", LOOM_INT32, 3, axes), LOOM_ERR_DATATYPE, "axisLabels");
    }
  }
  OK(loom_object_close(rho));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

static void test_extend_and_copy(const char* path) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset* ids = NULL;
  uint64_t zero[1] = {0}, unlimited[1] = {LOOM_UNLIMITED}, step;
  const char* json = "{\"engine\": \"hdf5\", \"hdf5\": {\"transfer\": \"collective\"}}";
  OK(loom_file_create(path, MPI_COMM_WORLD, json, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset(root, "particles/id", LOOM_INT64, 1, zero, unlimited, NULL, &ids));
  for (step = 0; step < 3; ++step) {
    uint64_t new_shape[1] = {(step + 1) * (uint64_t)nranks_}, start[1] = {step * (uint64_t)nranks_ + (uint64_t)rank_},
             one[1] = {1};
    int64_t value = (int64_t)start[0];
    loom_selection sel = loom_select_box(1, start, one);
    OK(loom_dataset_extend(ids, new_shape));
    OK(loom_dataset_write(ids, &sel, LOOM_INT64, 1, &value, LOOM_WRITE_COPY)); /* `value` is reused at once */
  }
  OK(loom_file_flush(f));
  {
    int64_t all[64];
    uint64_t s[1], c[1];
    loom_layout layout;
    loom_selection everything = loom_select_all();
    size_t i;
    char engine[64];
    OK(loom_dataset_shape(ids, s, NULL, c, &layout));
    CHECK(s[0] == 3 * (uint64_t)nranks_ && layout == LOOM_LAYOUT_CHUNKED && c[0] > 0);
    OK(loom_dataset_read(ids, &everything, LOOM_INT64, (size_t)s[0], all));
    for (i = 0; i < s[0]; ++i) CHECK(all[i] == (int64_t)i);
    OK(loom_file_engine(f, engine, sizeof engine, NULL));
    CHECK(strcmp(engine, "hdf5") == 0);
  }
  OK(loom_object_close(ids));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

static void test_errors(const char* path) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset* d = NULL;
  uint64_t four[1] = {4}, start[1] = {3}, count[1] = {2};
  float floats[4] = {0, 0, 0, 0};
  double doubles[4] = {1, 2, 3, 4};
  loom_selection all = loom_select_all(), outside = loom_select_box(1, start, count);

  FAILS_WITH(loom_file_open("/nonexistent/dir/missing.h5", LOOM_MODE_READ, MPI_COMM_WORLD, NULL, &f),
             LOOM_ERR_NOT_FOUND, "missing.h5");
  CHECK(f == NULL);
  FAILS_WITH(loom_file_create(path, MPI_COMM_WORLD, "no-such-engine", &f), LOOM_ERR_CONFIG, "'no-such-engine'");
  FAILS_WITH(loom_file_create(path, MPI_COMM_WORLD, "{\"hdf5\": {\"transfer\": \"sometimes\"}}", &f),
             LOOM_ERR_CONFIG, "hdf5.transfer");

  OK(loom_file_create(path, MPI_COMM_WORLD, NULL, &f));
  CHECK(strcmp(loom_last_error_message(), "") == 0); /* success clears the message */
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset(root, "d", LOOM_FLOAT64, 1, four, NULL, NULL, &d));
  FAILS_WITH(loom_group_open_dataset(root, "missing", &d), LOOM_ERR_NOT_FOUND, "'/missing'");
  FAILS_WITH(loom_group_create_dataset(root, "d", LOOM_FLOAT64, 1, four, NULL, NULL, &d), LOOM_ERR_EXISTS, "'/d'");
  OK(loom_group_open_dataset(root, "d", &d));
  FAILS_WITH(loom_dataset_write(d, &all, LOOM_FLOAT32, 4, floats, LOOM_WRITE_COPY), LOOM_ERR_DATATYPE, "float32");
  FAILS_WITH(loom_dataset_write(d, &outside, LOOM_FLOAT64, 2, doubles, LOOM_WRITE_COPY), LOOM_ERR_SELECTION, "'/d'");
  FAILS_WITH(loom_dataset_write(d, &all, LOOM_FLOAT64, 3, doubles, LOOM_WRITE_COPY), LOOM_ERR_SELECTION, "3 elements");
  FAILS_WITH(loom_attr_read_string(d, "nope", NULL, 0, NULL), LOOM_ERR_NOT_FOUND, "'nope'");
  FAILS_WITH(loom_group_create_group(d, "x", &root), LOOM_ERR_USAGE, "is a dataset, not a group");
  FAILS_WITH(loom_dataset_write(NULL, &all, LOOM_FLOAT64, 4, doubles, LOOM_WRITE_COPY), LOOM_ERR_USAGE, "null");
  FAILS_WITH(loom_group_create_dataset(root, "bad", (loom_datatype)42, 1, four, NULL, NULL, &d), LOOM_ERR_DATATYPE,
             "42");
  OK(loom_dataset_write(d, &all, LOOM_FLOAT64, 4, doubles, LOOM_WRITE_COPY)); /* still usable */
  OK(loom_object_close(d));
  OK(loom_object_close(root));
  OK(loom_file_close(f));

  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, NULL, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_open_dataset(root, "d", &d));
  FAILS_WITH(loom_dataset_write(d, &all, LOOM_FLOAT64, 4, doubles, LOOM_WRITE_COPY), LOOM_ERR_READ_ONLY, "read-only");
  FAILS_WITH(loom_attr_write_string(root, "a", "b"), LOOM_ERR_READ_ONLY, path);
  {
    double back[4] = {0, 0, 0, 0};
    OK(loom_dataset_read(d, &all, LOOM_FLOAT64, 4, back));
    CHECK(back[0] == 1 && back[3] == 4);
  }
  OK(loom_object_close(d));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
  FAILS_WITH(loom_file_create_exclusive(path, MPI_COMM_WORLD, NULL, &f), LOOM_ERR_EXISTS, "exists");
  CHECK(strcmp(loom_status_name(LOOM_ERR_SELECTION), "LOOM_ERR_SELECTION") == 0);
  CHECK(loom_datatype_size(LOOM_UINT16) == 2);
}

/* Deleting and renaming attributes, and their creation order. */
static void test_attribute_edit(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  size_t n = 0;
  char name[16];
  int32_t v = 1;
  int exists = 1;
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_attr_write_scalar(root, "zeta", LOOM_INT32, &v));
  OK(loom_attr_write_string(root, "alpha", "a"));
  OK(loom_attr_write_scalar(root, "gone", LOOM_INT32, &v));
  OK(loom_attr_delete(root, "gone"));
  OK(loom_attr_rename(root, "zeta", "omega"));
  FAILS_WITH(loom_attr_delete(root, "gone"), LOOM_ERR_NOT_FOUND, "gone");
  FAILS_WITH(loom_attr_rename(root, "omega", "alpha"), LOOM_ERR_EXISTS, "alpha");
  FAILS_WITH(loom_attr_rename(root, "omega", NULL), LOOM_ERR_USAGE, "to");
  OK(loom_attr_exists(root, "zeta", &exists));
  CHECK(exists == 0);
  OK(loom_attr_count_created(root, &n));
  CHECK(n == 2);
  OK(loom_attr_name(root, 0, name, sizeof name, NULL));
  CHECK(strcmp(name, "omega") == 0);
  OK(loom_attr_name(root, 1, name, sizeof name, NULL));
  CHECK(strcmp(name, "alpha") == 0);
  OK(loom_attr_count(root, &n)); /* by name */
  OK(loom_attr_name(root, 0, name, sizeof name, NULL));
  CHECK(n == 2 && strcmp(name, "alpha") == 0);
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

/* loom_file_flush_async + loom_test/loom_wait: with the async wrapper the
 * flush completes at the wait; the deferred (lent) buffer is read by then and
 * a copied one may be overwritten at once. */
static void test_flush_async(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset* x = NULL;
  loom_request* r = NULL;
  uint64_t shape[1], start[1], count[1] = {4};
  double lent[4], copied[4], back[64];
  int i, done = -1;
  loom_selection sel;
  shape[0] = 8 * (uint64_t)nranks_;
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset(root, "x", LOOM_FLOAT64, 1, shape, NULL, NULL, &x));
  for (i = 0; i < 4; ++i) lent[i] = rank_ * 8 + i, copied[i] = rank_ * 8 + 4 + i;
  start[0] = 8 * (uint64_t)rank_;
  sel = loom_select_box(1, start, count);
  OK(loom_dataset_write(x, &sel, LOOM_FLOAT64, 4, lent, LOOM_WRITE_DEFERRED));
  start[0] += 4;
  sel = loom_select_box(1, start, count);
  OK(loom_dataset_write(x, &sel, LOOM_FLOAT64, 4, copied, LOOM_WRITE_COPY));
  for (i = 0; i < 4; ++i) copied[i] = -1; /* a copied buffer is free at once */
  OK(loom_file_flush_async(f, 1, &r));
  OK(loom_test(r, &done));
  CHECK(done == 0 || done == 1);
  OK(loom_wait(r)); /* frees r */
  for (i = 0; i < 4; ++i) lent[i] = -1; /* the flush has completed: no longer read */
  sel = loom_select_all();
  OK(loom_dataset_read(x, &sel, LOOM_FLOAT64, 8 * (size_t)nranks_, back));
  for (i = 0; i < 8 * nranks_; ++i) CHECK(back[i] == i);
  /* A request freed without waiting: the next collective call completes the flush. */
  OK(loom_file_flush_async(f, 0, &r));
  loom_request_free(r);
  FAILS_WITH(loom_file_flush_async(f, 1, NULL), LOOM_ERR_USAGE, "out");
  FAILS_WITH(loom_file_close_async(f, NULL), LOOM_ERR_USAGE, "out");
  /* loom_file_close_async frees the file handle; the close completes at the
   * wait. A dataset handle still open is refused meanwhile. */
  for (i = 0; i < 4; ++i) copied[i] = 100 + rank_ * 4 + i;
  start[0] = 8 * (uint64_t)rank_ + 4;
  sel = loom_select_box(1, start, count);
  OK(loom_dataset_write(x, &sel, LOOM_FLOAT64, 4, copied, LOOM_WRITE_COPY));
  OK(loom_file_close_async(f, &r));
  for (i = 0; i < 4; ++i) copied[i] = -1;
  sel = loom_select_all();
  FAILS_WITH(loom_dataset_read(x, &sel, LOOM_FLOAT64, 8 * (size_t)nranks_, back), LOOM_ERR_USAGE, "closing");
  OK(loom_object_close(x));
  OK(loom_object_close(root));
  OK(loom_test(r, &done));
  CHECK(done == 0);
  OK(loom_wait(r));
  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_open_dataset(root, "x", &x));
  OK(loom_dataset_read(x, &sel, LOOM_FLOAT64, 8 * (size_t)nranks_, back));
  for (i = 0; i < 8 * nranks_; ++i) CHECK(back[i] == (i % 8 < 4 ? i : 100 + (i / 8) * 4 + i % 8 - 4));
  OK(loom_object_close(x));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

int main(int argc, char** argv) {
  char dir[512], path[600];
  int total_failures = 0, provided = 0;
  /* FUNNELED: the async wrapper's background thread (test_flush_async). */
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
  snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : ".");
  snprintf(path, sizeof path, "%s/capi-roundtrip-np%d.h5", dir, nranks_);
  test_round_trip(path);
  snprintf(path, sizeof path, "%s/capi-extend-np%d.h5", dir, nranks_);
  test_extend_and_copy(path);
  snprintf(path, sizeof path, "%s/capi-attr-edit-hdf5-np%d.h5", dir, nranks_);
  test_attribute_edit(path, "hdf5");
  snprintf(path, sizeof path, "%s/capi-attr-edit-log-np%d.h5", dir, nranks_);
  test_attribute_edit(path, "log");
  snprintf(path, sizeof path, "%s/capi-errors-np%d.h5", dir, nranks_);
  test_errors(path);
  snprintf(path, sizeof path, "%s/capi-flush-async-log-np%d.h5", dir, nranks_);
  test_flush_async(path, "async+log");
  snprintf(path, sizeof path, "%s/capi-flush-async-hdf5-np%d.h5", dir, nranks_);
  test_flush_async(path, "hdf5");
  MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("C API tests at %d rank(s): %d checks per rank, %d failed in all\n", nranks_, checks, total_failures);
  MPI_Finalize();
  return total_failures ? 1 : 0;
}
