/* Object references and variable-length strings through the C API, in plain
 * C99: references in datasets, in attributes (one, an array, and netCDF's
 * REFERENCE_LIST, an array of compounds {reference, int32}), and in compound
 * datasets; variable-length strings written and read as char*.
 *   test_capi_refs DIR ENGINE [LABEL]   (any number of ranks; ENGINE a name or JSON)
 * A part whose conformance group the engine does not declare ("references",
 * "vlen_strings") is skipped, and says so. */
#include <h5loom/h5loom.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* netCDF's REFERENCE_LIST element: a dataset that uses a dimension scale, and which dimension. */
struct dimension_use {
  loom_ref dataset;
  int32_t dimension;
};

static loom_type* dimension_use_type(void) {
  loom_type *ref = NULL, *t = NULL;
  OK(loom_type_reference(&ref));
  OK(loom_type_compound(sizeof(struct dimension_use), &t));
  OK(loom_type_insert_type(t, "dataset", offsetof(struct dimension_use, dataset), ref));
  OK(loom_type_insert(t, "dimension", offsetof(struct dimension_use, dimension), LOOM_INT32));
  OK(loom_type_free(ref));
  return t;
}

/* The path `ref` names, in a static buffer ("" on error). */
static const char* deref(loom_group* g, loom_ref ref) {
  static char buf[256];
  buf[0] = '\0';
  OK(loom_group_dereference(g, ref, buf, sizeof buf, NULL));
  return buf;
}

static int supports(const char* engine, const char* group) {
  int yes = 0;
  OK(loom_engine_supports(engine, group, &yes));
  if (!yes && rank_ == 0) printf("test_capi_refs: skipped '%s': engine %s does not declare the group\n", group, engine);
  return yes;
}

static void test_references(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group *root = NULL, *grid = NULL;
  loom_dataset *time = NULL, *temp = NULL, *refs = NULL, *uses_ds = NULL, *ds = NULL;
  loom_type *ref_type = NULL, *use_type = dimension_use_type(), *back = NULL;
  loom_ref targets[4], r, gone;
  const uint64_t n = (uint64_t)nranks_;
  uint64_t four[1] = {4}, shape2[2] = {4, 3}, nshape[1], one[1] = {1}, at[1];
  size_t needed = 0, count = 0;
  char small[5], name[512], want[512];
  int i;
  /* Datasets of references: parallel HDF5 1.12+ cannot write them (attributes it can). */
  const int with_datasets = supports(engine, "reference_datasets");
  nshape[0] = n;
  at[0] = (uint64_t)rank_;
  OK(loom_type_reference(&ref_type));
  OK(loom_type_name(ref_type, name, sizeof name, NULL));
  CHECK(strcmp(name, "reference") == 0);
  OK(loom_type_size(ref_type, &count));
  CHECK(count == sizeof(loom_ref) && sizeof(loom_ref) == 8);

  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset(root, "time", LOOM_FLOAT64, 1, four, NULL, NULL, &time));
  OK(loom_group_create_group(root, "grid/cells", &grid));
  OK(loom_object_close(grid));
  OK(loom_group_create_dataset(root, "grid/temperature", LOOM_FLOAT32, 2, shape2, NULL, NULL, &temp));
  OK(loom_group_reference(root, "time", &targets[0]));
  OK(loom_group_reference(root, "/grid/cells", &targets[1]));
  OK(loom_group_open_group(root, "grid", &grid));
  OK(loom_group_reference(grid, "temperature", &targets[2])); /* relative to the group */
  OK(loom_group_reference(root, ".", &targets[3]));            /* the root itself */
  CHECK(targets[0].token != 0 && targets[0].token != targets[1].token && targets[2].token != targets[3].token);
  OK(loom_group_reference(root, "/time", &r));
  CHECK(r.token == targets[0].token); /* the same object, the same reference */
  CHECK(strcmp(deref(grid, targets[0]), "/time") == 0); /* from any group of the file */
  OK(loom_object_close(grid));
  CHECK(loom_group_reference(root, "missing", &r) == LOOM_ERR_NOT_FOUND);
  CHECK(strstr(loom_last_error_message(), "missing") != NULL);
  r.token = 0;
  CHECK(loom_group_dereference(root, r, name, sizeof name, &needed) == LOOM_ERR_NOT_FOUND);
  CHECK(strstr(loom_last_error_message(), "null reference") != NULL);

  /* A dataset of references, one element per rank. */
  if (with_datasets) {
  OK(loom_group_create_dataset_typed(root, "refs", ref_type, 1, nshape, NULL, NULL, &refs));
  {
    loom_selection sel = loom_select_box(1, at, one);
    OK(loom_dataset_write_typed(refs, &sel, ref_type, 1, &targets[rank_ % 4], LOOM_WRITE_COPY));
  }
  {
    loom_ref fill = targets[0];
    CHECK(loom_group_create_dataset_typed(root, "filled", ref_type, 1, four, NULL, &fill, &ds) == LOOM_ERR_DATATYPE);
    CHECK(strstr(loom_last_error_message(), "no fill value") != NULL);
  }
  /* A compound dataset holding references: each rank writes one element. */
  OK(loom_group_create_dataset_typed(root, "uses", use_type, 1, nshape, NULL, NULL, &uses_ds));
  {
    struct dimension_use mine;
    loom_selection sel = loom_select_box(1, at, one);
    memset(&mine, 0, sizeof mine);
    mine.dataset = targets[2];
    mine.dimension = rank_;
    OK(loom_dataset_write_typed(uses_ds, &sel, use_type, 1, &mine, LOOM_WRITE_COPY));
  }
  } /* with_datasets */
  /* References in attributes: one, an array, an array of compounds. */
  OK(loom_attr_write_refs(time, "users", 1, &targets[2]));
  OK(loom_attr_write_ref(temp, "scale", targets[0]));
  {
    struct dimension_use uses[2];
    memset(uses, 0, sizeof uses); /* the padding too: attribute values must agree bytewise across ranks */
    uses[0].dataset = targets[2];
    uses[0].dimension = 0;
    uses[1].dataset = targets[2];
    uses[1].dimension = 1;
    OK(loom_attr_write_typed(time, "REFERENCE_LIST", use_type, LOOM_ATTR_ARRAY, 2, uses));
    CHECK(loom_attr_write_typed(time, "bad", use_type, LOOM_ATTR_SCALAR, 2, uses) == LOOM_ERR_SELECTION);
    OK(loom_attr_write_typed(time, "first_use", use_type, LOOM_ATTR_SCALAR, 1, uses));
  }
  {
    double t = 0.5;
    loom_ref got;
    OK(loom_attr_write_scalar(time, "t", LOOM_FLOAT64, &t));
    CHECK(loom_attr_read_refs(time, "t", 1, &got) == LOOM_ERR_DATATYPE); /* numbers are not references */
    CHECK(strstr(loom_last_error_message(), "attribute 't' on '/time'") != NULL);
    CHECK(loom_attr_read(temp, "scale", LOOM_UINT64, 1, &got) == LOOM_ERR_DATATYPE); /* nor references numbers */
    CHECK(strstr(loom_last_error_message(), "loom_attr_read_refs") != NULL);
    CHECK(loom_attr_read_typed(time, "users", use_type, 1, &got) == LOOM_ERR_DATATYPE);
  }
  /* Moving an object keeps references to it; a removed object's reference is dangling. */
  OK(loom_group_move(root, "grid/cells", "grid/cells_v2"));
  OK(loom_group_create_dataset(root, "gone", LOOM_INT8, 1, one, NULL, NULL, &ds));
  OK(loom_object_close(ds));
  OK(loom_group_reference(root, "gone", &gone));
  OK(loom_group_remove(root, "gone"));
  CHECK(loom_group_dereference(root, gone, name, sizeof name, &needed) == LOOM_ERR_NOT_FOUND);
  if (with_datasets) {
    OK(loom_object_close(uses_ds));
    OK(loom_object_close(refs));
  }
  OK(loom_object_close(time));
  OK(loom_object_close(temp));
  OK(loom_object_close(root));
  OK(loom_file_close(f));

  /* ---- read back ---- */
  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  if (with_datasets) {
  OK(loom_group_open_dataset(root, "refs", &refs));
  OK(loom_dataset_type(refs, &back));
  OK(loom_type_name(back, name, sizeof name, NULL));
  CHECK(strcmp(name, "reference") == 0);
  OK(loom_type_free(back));
  {
    loom_ref all[64];
    const char* paths[4] = {"/time", "/grid/cells_v2", "/grid/temperature", "/"};
    loom_selection everything = loom_select_all();
    OK(loom_dataset_read_typed(refs, &everything, ref_type, (size_t)n, all));
    for (i = 0; i < nranks_; ++i) CHECK(strcmp(deref(root, all[i]), paths[i % 4]) == 0);
    /* the path into a small buffer: cut, NUL-terminated, the full length in needed */
    OK(loom_group_dereference(root, all[2 % nranks_], small, sizeof small, &needed));
    CHECK(strlen(small) == 4 && needed == strlen(paths[2 % nranks_]));
    OK(loom_group_dereference(root, all[0], NULL, 0, &needed)); /* the length only */
    CHECK(needed == 5);
  }
  OK(loom_group_open_dataset(root, "uses", &uses_ds));
  {
    struct dimension_use got[64];
    loom_selection everything = loom_select_all();
    OK(loom_dataset_read_typed(uses_ds, &everything, use_type, (size_t)n, got));
    for (i = 0; i < nranks_; ++i) {
      CHECK(got[i].dimension == i);
      CHECK(strcmp(deref(root, got[i].dataset), "/grid/temperature") == 0);
    }
  }
  } /* with_datasets */
  OK(loom_group_open_dataset(root, "time", &time));
  OK(loom_group_open_dataset(root, "grid/temperature", &temp));
  {
    loom_attr_kind kind;
    loom_datatype type = LOOM_FLOAT64;
    loom_ref users[1], scale;
    struct dimension_use list[2], first;
    OK(loom_attr_info(time, "users", &kind, &type, &count));
    CHECK(kind == LOOM_ATTR_ARRAY && count == 1 && type == LOOM_UINT8);
    OK(loom_attr_read_refs(time, "users", 1, users));
    CHECK(strcmp(deref(root, users[0]), "/grid/temperature") == 0);
    CHECK(loom_attr_read_refs(time, "users", 2, users) == LOOM_ERR_SELECTION);
    OK(loom_attr_info(temp, "scale", &kind, NULL, &count));
    CHECK(kind == LOOM_ATTR_SCALAR && count == 1);
    OK(loom_attr_read_refs(temp, "scale", 1, &scale));
    CHECK(strcmp(deref(root, scale), "/time") == 0);
    OK(loom_attr_type(temp, "scale", &back));
    OK(loom_type_name(back, name, sizeof name, NULL));
    CHECK(strcmp(name, "reference") == 0);
    OK(loom_type_free(back));
    OK(loom_attr_type(time, "REFERENCE_LIST", &back));
    OK(loom_type_name(back, name, sizeof name, NULL));
    OK(loom_type_name(use_type, want, sizeof want, NULL));
    CHECK(strcmp(name, want) == 0);
    OK(loom_attr_info(time, "REFERENCE_LIST", &kind, NULL, &count));
    CHECK(kind == LOOM_ATTR_ARRAY && count == 2);
    OK(loom_attr_read_typed(time, "REFERENCE_LIST", back, 2, list));
    CHECK(strcmp(deref(root, list[0].dataset), "/grid/temperature") == 0 && list[0].dimension == 0);
    CHECK(strcmp(deref(root, list[1].dataset), "/grid/temperature") == 0 && list[1].dimension == 1);
    OK(loom_attr_read_typed(time, "first_use", use_type, 1, &first));
    CHECK(first.dimension == 0 && first.dataset.token == list[0].dataset.token);
    CHECK(loom_attr_exists(time, "bad", &i) == LOOM_OK && i == 0);
    OK(loom_type_free(back));
  }
  OK(loom_object_close(temp));
  OK(loom_object_close(time));
  if (with_datasets) {
    OK(loom_object_close(uses_ds));
    OK(loom_object_close(refs));
  }
  OK(loom_object_close(root));
  OK(loom_file_close(f));
  OK(loom_type_free(ref_type));
  OK(loom_type_free(use_type));
}

static void text_of(uint64_t i, char* buf, size_t size) {
  if (i % 3 == 0) {
    buf[0] = '\0'; /* empty strings stay empty */
    return;
  }
  snprintf(buf, size, "element %u %.*s \xc3\xa9t\xc3\xa9", (unsigned)i, (int)(i * 37 % 200),
           "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
           "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
}

static void test_strings(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset *names = NULL, *plain = NULL, *numbers = NULL, *ds = NULL;
  loom_type *utf8 = NULL, *ascii = NULL;
  const uint64_t n = 3 * (uint64_t)nranks_;
  uint64_t shape[1], start[1], three[1] = {3}, two[1] = {2};
  char buf[3][300], name[64];
  const char* mine[3];
  size_t size = 0;
  int i;
  shape[0] = n;
  start[0] = 3 * (uint64_t)rank_;
  OK(loom_type_varstring(1, &utf8));
  OK(loom_type_varstring(0, &ascii));
  OK(loom_type_name(utf8, name, sizeof name, NULL));
  CHECK(strcmp(name, "utf8") == 0);
  OK(loom_type_name(ascii, name, sizeof name, NULL));
  CHECK(strcmp(name, "string") == 0);
  OK(loom_type_size(utf8, &size));
  CHECK(size == sizeof(char*));
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset_typed(root, "names", utf8, 1, shape, NULL, NULL, &names));
  CHECK(loom_group_create_dataset_typed(root, "filled", utf8, 1, shape, NULL, "x", &ds) == LOOM_ERR_DATATYPE);
  for (i = 0; i < 3; ++i) {
    text_of(3 * (uint64_t)rank_ + (uint64_t)i, buf[i], sizeof buf[i]);
    mine[i] = buf[i];
  }
  {
    loom_selection sel = loom_select_box(1, start, three);
    OK(loom_dataset_write_strings(names, &sel, 3, mine));
    for (i = 0; i < 3; ++i) strcpy(buf[i], "overwritten: the write copied the strings");
    CHECK(loom_dataset_write_strings(names, &sel, 2, mine) == LOOM_ERR_SELECTION); /* 2 strings for 3 elements */
    mine[1] = NULL;
    CHECK(loom_dataset_write_strings(names, &sel, 3, mine) == LOOM_ERR_USAGE);
    CHECK(strstr(loom_last_error_message(), "null string 'strings[1]'") != NULL);
    CHECK(loom_dataset_write_typed(names, &sel, utf8, 3, mine, LOOM_WRITE_COPY) == LOOM_ERR_DATATYPE);
    CHECK(strstr(loom_last_error_message(), "loom_dataset_write_strings") != NULL);
  }
  OK(loom_group_create_dataset_typed(root, "plain", ascii, 1, two, NULL, NULL, &plain));
  if (rank_ == 0) {
    const char* ab[2] = {"abc", "de"};
    loom_selection everything = loom_select_all();
    OK(loom_dataset_write_strings(plain, &everything, 2, ab));
  }
  OK(loom_group_create_dataset(root, "numbers", LOOM_FLOAT64, 1, two, NULL, NULL, &numbers));
  {
    const char* ab[2] = {"a", "b"};
    loom_selection everything = loom_select_all();
    CHECK(loom_dataset_write_strings(numbers, &everything, 2, ab) == LOOM_ERR_DATATYPE);
    CHECK(strstr(loom_last_error_message(), "'/numbers' is of type float64, not variable-length strings") != NULL);
  }
  OK(loom_object_close(numbers));
  OK(loom_object_close(plain));
  OK(loom_object_close(names));
  OK(loom_object_close(root));
  OK(loom_file_close(f));

  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_open_dataset(root, "names", &names));
  {
    loom_type* t = NULL;
    OK(loom_dataset_type(names, &t));
    OK(loom_type_name(t, name, sizeof name, NULL));
    CHECK(strcmp(name, "utf8") == 0);
    OK(loom_type_free(t));
  }
  {
    char** all = (char**)calloc((size_t)n, sizeof(char*));
    char* part[2] = {NULL, NULL};
    uint64_t at[1];
    loom_selection everything = loom_select_all(), sel;
    OK(loom_dataset_read_strings(names, &everything, (size_t)n, all));
    for (i = 0; i < (int)n; ++i) {
      char want[300];
      text_of((uint64_t)i, want, sizeof want);
      CHECK(all[i] != NULL && strcmp(all[i], want) == 0);
    }
    OK(loom_strings_free(all, (size_t)n));
    CHECK(all[0] == NULL);
    /* each rank reads a different part */
    at[0] = 3 * (uint64_t)rank_ + 1;
    sel = loom_select_box(1, at, two);
    OK(loom_dataset_read_strings(names, &sel, 2, part));
    text_of(at[0], buf[0], sizeof buf[0]);
    text_of(at[0] + 1, buf[1], sizeof buf[1]);
    CHECK(part[0] && part[1] && strcmp(part[0], buf[0]) == 0 && strcmp(part[1], buf[1]) == 0);
    free(part[0]); /* plain free() works too */
    free(part[1]);
    CHECK(loom_dataset_read_strings(names, &everything, 1, part) == LOOM_ERR_SELECTION);
    CHECK(part[0] == NULL); /* NULL after an error */
    free(all);
  }
  OK(loom_group_open_dataset(root, "plain", &plain));
  {
    char* ab[2];
    loom_selection everything = loom_select_all();
    OK(loom_dataset_read_strings(plain, &everything, 2, ab));
    CHECK(strcmp(ab[0], "abc") == 0 && strcmp(ab[1], "de") == 0);
    OK(loom_strings_free(ab, 2));
  }
  OK(loom_object_close(plain));
  OK(loom_object_close(names));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
  OK(loom_type_free(utf8));
  OK(loom_type_free(ascii));
}

/* Records with a variable-length string and a ragged sequence (HDF5's layout:
 * char* and hvl_t), one per rank: written with loom_dataset_write_typed, read
 * back with loom_dataset_read_typed, parts released with loom_reclaim. */
typedef struct {
  char* name;
  loom_vlen hits; /* int32 */
  double energy;
} event;

static void test_variable_length(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset* ds = NULL;
  loom_type *utf8 = NULL, *hits = NULL, *int32 = NULL, *ev = NULL;
  uint64_t shape[1], start[1], one[1] = {1};
  char name[128];
  int32_t mine[8];
  event e, *all;
  int i, r;
  shape[0] = (uint64_t)nranks_;
  start[0] = (uint64_t)rank_;
  OK(loom_type_varstring(1, &utf8));
  OK(loom_type_scalar(LOOM_INT32, &int32));
  OK(loom_type_sequence(int32, &hits));
  OK(loom_type_compound(sizeof(event), &ev));
  OK(loom_type_insert_type(ev, "name", offsetof(event, name), utf8));
  OK(loom_type_insert_type(ev, "hits", offsetof(event, hits), hits));
  OK(loom_type_insert(ev, "energy", offsetof(event, energy), LOOM_FLOAT64));
  OK(loom_type_name(hits, name, sizeof name, NULL));
  CHECK(strcmp(name, "vlen<int32>") == 0);

  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset_typed(root, "events", ev, 1, shape, NULL, NULL, &ds));
  snprintf(name, sizeof name, "rank %d", rank_);
  for (i = 0; i < rank_ && i < 8; ++i) mine[i] = 10 * rank_ + i;
  e.name = name;
  e.hits.len = (size_t)(rank_ < 8 ? rank_ : 8);
  e.hits.p = e.hits.len ? mine : NULL;
  e.energy = 0.5 * rank_;
  {
    loom_selection sel = loom_select_box(1, start, one);
    OK(loom_dataset_write_typed(ds, &sel, ev, 1, &e, LOOM_WRITE_COPY));
    strcpy(name, "changed: the write copied every part");
    mine[0] = -1;
  }
  OK(loom_object_close(ds));
  OK(loom_object_close(root));
  OK(loom_file_close(f));

  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_open_dataset(root, "events", &ds));
  all = (event*)calloc((size_t)nranks_, sizeof(event));
  {
    loom_selection everything = loom_select_all();
    OK(loom_dataset_read_typed(ds, &everything, ev, (size_t)nranks_, all));
  }
  for (r = 0; r < nranks_; ++r) {
    char want[32];
    snprintf(want, sizeof want, "rank %d", r);
    CHECK(all[r].name != NULL && strcmp(all[r].name, want) == 0);
    CHECK(all[r].hits.len == (size_t)(r < 8 ? r : 8));
    for (i = 0; i < (int)all[r].hits.len; ++i) CHECK(((int32_t*)all[r].hits.p)[i] == 10 * r + i);
    CHECK(all[r].energy == 0.5 * r);
  }
  OK(loom_reclaim(ev, all, (size_t)nranks_));
  CHECK(all[0].name == NULL && all[nranks_ - 1].hits.p == NULL);
  free(all);
  OK(loom_object_close(ds));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
  OK(loom_type_free(ev));
  OK(loom_type_free(hits));
  OK(loom_type_free(int32));
  OK(loom_type_free(utf8));
}

/* An engine without "vlen_strings": the hdf5 engine's MPI-IO driver refuses
 * such a dataset with LOOM_ERR_USAGE, naming what to use instead. */
static void test_hdf5_mpio_refuses_strings(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset* ds = NULL;
  loom_type* utf8 = NULL;
  uint64_t two[1] = {2};
  char name[64];
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_engine(f, name, sizeof name, NULL));
  if (strcmp(name, "hdf5") == 0) {
    OK(loom_type_varstring(1, &utf8));
    OK(loom_file_root(f, &root));
    CHECK(loom_group_create_dataset_typed(root, "s", utf8, 1, two, NULL, NULL, &ds) == LOOM_ERR_USAGE);
    CHECK(strstr(loom_last_error_message(), "cannot write variable-length data") != NULL);
    OK(loom_type_free(utf8));
    OK(loom_object_close(root));
  }
  OK(loom_file_close(f));
}

int main(int argc, char** argv) {
  char path[4096];
  const char* label;
  int any = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
  if (argc != 3 && argc != 4) {
    if (rank_ == 0) fprintf(stderr, "usage: test_capi_refs DIR ENGINE [LABEL]\n");
    MPI_Finalize();
    return 2;
  }
  label = argc == 4 ? argv[3] : argv[2];
  if (supports(argv[2], "references")) {
    snprintf(path, sizeof path, "%s/capi-refs-%s-np%d.h5", argv[1], label, nranks_);
    test_references(path, argv[2]);
  }
  snprintf(path, sizeof path, "%s/capi-strings-%s-np%d.h5", argv[1], label, nranks_);
  if (supports(argv[2], "vlen_strings")) test_strings(path, argv[2]);
  else test_hdf5_mpio_refuses_strings(path, argv[2]);
  snprintf(path, sizeof path, "%s/capi-vlen-%s-np%d.h5", argv[1], label, nranks_);
  if (supports(argv[2], "variable_length")) test_variable_length(path, argv[2]);
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("test_capi_refs (%s): %d checks, %d failed on some rank\n", label, checks, any);
  MPI_Finalize();
  return any ? 1 : 0;
}
