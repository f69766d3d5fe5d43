/* The C API of HDF5's data model beyond numbers, in plain C99: a compound of a
 * C struct (with a nested compound, a fixed string and an enum), fill values,
 * links and creation order, array datatypes, named datatypes, on every engine given on the command line;
 * filters and dimension names on every engine (an engine of numbers only, zarr, runs just those).
 *   test_capi_types DIR ENGINE   (any number of ranks) */
#include <h5loom/h5loom.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

struct position {
  float x, y;
};
struct particle {
  int64_t id;
  struct position pos;
  char tag[6];
  int8_t species;
};

static loom_type* particle_type(void) {
  loom_type *pos = NULL, *tag = NULL, *species = NULL, *p = NULL;
  OK(loom_type_compound(sizeof(struct position), &pos));
  OK(loom_type_insert(pos, "x", offsetof(struct position, x), LOOM_FLOAT32));
  OK(loom_type_insert(pos, "y", offsetof(struct position, y), LOOM_FLOAT32));
  OK(loom_type_string(6, 0, &tag));
  OK(loom_type_enum(LOOM_INT8, &species));
  OK(loom_type_enum_insert(species, "electron", -1));
  OK(loom_type_enum_insert(species, "proton", 1));
  CHECK(loom_type_enum_insert(species, "proton", 2) == LOOM_ERR_DATATYPE); /* a name twice */
  OK(loom_type_compound(sizeof(struct particle), &p));
  OK(loom_type_insert(p, "id", offsetof(struct particle, id), LOOM_INT64));
  OK(loom_type_insert_type(p, "pos", offsetof(struct particle, pos), pos));
  OK(loom_type_insert_type(p, "tag", offsetof(struct particle, tag), tag));
  OK(loom_type_insert_type(p, "species", offsetof(struct particle, species), species));
  CHECK(loom_type_insert(p, "overlap", 4, LOOM_INT32) == LOOM_ERR_DATATYPE); /* inside id */
  OK(loom_type_free(pos));
  OK(loom_type_free(tag));
  OK(loom_type_free(species));
  return p;
}

static void test_records(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset *ds = NULL, *filled = NULL;
  loom_type *type = particle_type(), *back = NULL;
  uint64_t shape[1] = {2 * (uint64_t)nranks_}, start[1] = {2 * (uint64_t)rank_}, count[1] = {2};
  struct particle mine[2], all[64];
  int i;
  size_t size = 0;
  memset(mine, 0, sizeof mine);
  for (i = 0; i < 2; ++i) {
    mine[i].id = 100 * rank_ + i;
    mine[i].pos.x = (float)rank_;
    mine[i].pos.y = (float)i;
    snprintf(mine[i].tag, sizeof mine[i].tag, "r%di%d", rank_, i);
    mine[i].species = (int8_t)(i ? 1 : -1);
  }
  OK(loom_type_size(type, &size));
  CHECK(size == sizeof(struct particle));
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset_typed(root, "particles", type, 1, shape, NULL, NULL, &ds));
  {
    loom_selection sel = loom_select_box(1, start, count);
    OK(loom_dataset_write_typed(ds, &sel, type, 2, mine, LOOM_WRITE_COPY));
  }
  {
    int32_t fill = -7, one = 5;
    uint64_t four[1] = {4}, at[1] = {1}, n1[1] = {1};
    loom_type* i32 = NULL;
    loom_selection sel = loom_select_box(1, at, n1);
    int32_t got[4];
    /* A scalar type as a loom_type: an enum without names is refused, a compound of one member is not a scalar. */
    OK(loom_type_compound(4, &i32));
    OK(loom_type_insert(i32, "v", 0, LOOM_INT32));
    OK(loom_group_create_dataset(root, "filled_plain", LOOM_INT32, 1, four, NULL, NULL, &filled));
    OK(loom_object_close(filled));
    OK(loom_group_create_dataset_typed(root, "filled", i32, 1, four, NULL, &fill, &filled));
    if (rank_ == 0) OK(loom_dataset_write_typed(filled, &sel, i32, 1, &one, LOOM_WRITE_COPY));
    OK(loom_file_flush_visible(f));
    {
      loom_selection everything = loom_select_all();
      OK(loom_dataset_read_typed(filled, &everything, i32, 4, got));
    }
    CHECK(got[0] == -7 && got[1] == 5 && got[2] == -7 && got[3] == -7);
    OK(loom_object_close(filled));
    OK(loom_type_free(i32));
  }
  OK(loom_object_close(ds));
  /* links and creation order */
  OK(loom_group_create_soft_link(root, "latest", "/particles"));
  OK(loom_group_move(root, "filled_plain", "old/plain"));
  OK(loom_group_remove(root, "old"));
  CHECK(loom_group_move(root, "missing", "x") == LOOM_ERR_NOT_FOUND);
  /* hard links: a second name, counted; the first goes, the data stays */
  {
    const uint64_t two = 2;
    uint64_t links = 0;
    loom_dataset* first = NULL;
    OK(loom_group_create_dataset(root, "first", LOOM_INT8, 1, &two, NULL, NULL, &first));
    OK(loom_object_close(first));
    OK(loom_group_create_hard_link(root, "kept/second", "first"));
    OK(loom_group_link_count(root, "kept/second", &links));
    CHECK(links == 2);
    OK(loom_group_remove(root, "first"));
    OK(loom_group_link_count(root, "kept/second", &links));
    CHECK(links == 1);
    /* references held besides the names count with them; one not held cannot be released */
    OK(loom_group_change_reference_count(root, "kept/second", +1, &links));
    CHECK(links == 2);
    OK(loom_group_change_reference_count(root, "kept/second", -1, NULL));
    CHECK(loom_group_change_reference_count(root, "kept/second", -1, &links) == LOOM_ERR_USAGE);
    OK(loom_group_link_count(root, "kept/second", &links));
    CHECK(links == 1);
  }
  CHECK(loom_group_create_hard_link(root, "x", "missing") == LOOM_ERR_NOT_FOUND);
  /* external links: kept, not followed */
  OK(loom_group_create_external_link(root, "outside", "other.h5", "/data"));
  {
    int is_link = 0;
    char file[64], target[64];
    size_t needed = 0;
    OK(loom_group_external_link(root, "outside", &is_link, file, sizeof file, &needed, target, sizeof target, NULL));
    CHECK(is_link == 1 && strcmp(file, "other.h5") == 0 && strcmp(target, "/data") == 0 && needed == 8);
    OK(loom_group_external_link(root, "particles", &is_link, file, sizeof file, NULL, target, sizeof target, NULL));
    CHECK(is_link == 0);
    OK(loom_group_remove(root, "outside"));
  }
  /* copying: the dataset with its values, under a new name; misuse refused */
  OK(loom_file_copy_object(f, "/particles", f, "/copies/particles", 0));
  CHECK(loom_file_copy_object(f, "/particles", f, "/copies/particles", 0) == LOOM_ERR_EXISTS);
  CHECK(loom_file_copy_object(f, "/particles", f, "/y", 64) == LOOM_ERR_USAGE);
  OK(loom_object_close(root));
  OK(loom_file_close(f));

  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_open_dataset(root, "latest", &ds)); /* through the soft link */
  OK(loom_dataset_type(ds, &back));
  {
    char a[512], b[512];
    OK(loom_type_name(back, a, sizeof a, NULL));
    OK(loom_type_name(type, b, sizeof b, NULL));
    CHECK(strcmp(a, b) == 0);
  }
  {
    loom_selection everything = loom_select_all();
    OK(loom_dataset_read_typed(ds, &everything, back, 2 * (size_t)nranks_, all));
  }
  for (i = 0; i < 2 * nranks_; ++i) {
    char want[6];
    snprintf(want, sizeof want, "r%di%d", i / 2, i % 2);
    CHECK(all[i].id == 100 * (i / 2) + i % 2);
    CHECK(all[i].pos.x == (float)(i / 2) && all[i].pos.y == (float)(i % 2));
    CHECK(strncmp(all[i].tag, want, 6) == 0);
    CHECK(all[i].species == (i % 2 ? 1 : -1));
  }
  {
    loom_dataset* copied = NULL;
    loom_selection everything = loom_select_all();
    OK(loom_group_open_dataset(root, "copies/particles", &copied));
    memset(all, 0, sizeof all);
    OK(loom_dataset_read_typed(copied, &everything, back, 2 * (size_t)nranks_, all));
    for (i = 0; i < 2 * nranks_; ++i) CHECK(all[i].id == 100 * (i / 2) + i % 2);
    OK(loom_object_close(copied));
  }
  {
    size_t n = 0;
    char name[64];
    int is_link = 0;
    const char* created[] = {"particles", "filled", "latest", "kept", "copies"};
    OK(loom_group_member_count_created(root, &n));
    CHECK(n == 5);
    for (i = 0; i < (int)n && i < 5; ++i) {
      OK(loom_group_member_name(root, (size_t)i, name, sizeof name, NULL));
      CHECK(strcmp(name, created[i]) == 0);
    }
    OK(loom_group_soft_link(root, "latest", &is_link, name, sizeof name, NULL));
    CHECK(is_link == 1 && strcmp(name, "/particles") == 0);
    OK(loom_group_soft_link(root, "particles", &is_link, name, sizeof name, NULL));
    CHECK(is_link == 0);
  }
  OK(loom_type_free(back));
  OK(loom_type_free(type));
  OK(loom_object_close(ds));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

/* Array datatypes: a dataset of double[3] elements, a compound with a float[2][2] member. */
struct cell {
  int32_t id;
  float stress[2][2];
};

static void test_arrays(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset *vec = NULL, *cells = NULL;
  loom_type *vec3 = NULL, *tensor = NULL, *cell = NULL, *back = NULL;
  const uint64_t three = 3, two_two[2] = {2, 2}, n = (uint64_t)nranks_, start = (uint64_t)rank_, one = 1;
  double mine[3], all[3 * 64];
  struct cell c, cells_back[64];
  char name[128];
  int i, k;
  OK(loom_type_array_of(LOOM_FLOAT64, 1, &three, &vec3));
  OK(loom_type_array_of(LOOM_FLOAT32, 2, two_two, &tensor));
  OK(loom_type_name(vec3, name, sizeof name, NULL));
  CHECK(strcmp(name, "array<float64>[3]") == 0);
  OK(loom_type_compound(sizeof(struct cell), &cell));
  OK(loom_type_insert(cell, "id", offsetof(struct cell, id), LOOM_INT32));
  OK(loom_type_insert_type(cell, "stress", offsetof(struct cell, stress), tensor));
  CHECK(loom_type_array_of(LOOM_FLOAT64, 0, &three, &back) == LOOM_ERR_USAGE);
  {
    const uint64_t zero = 0;
    CHECK(loom_type_array_of(LOOM_FLOAT64, 1, &zero, &back) == LOOM_ERR_DATATYPE);
  }
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset_typed(root, "velocity", vec3, 1, &n, NULL, NULL, &vec));
  OK(loom_group_create_dataset_typed(root, "cells", cell, 1, &n, NULL, NULL, &cells));
  for (k = 0; k < 3; ++k) mine[k] = rank_ * 10 + k;
  memset(&c, 0, sizeof c);
  c.id = rank_;
  for (k = 0; k < 4; ++k) c.stress[k / 2][k % 2] = (float)(rank_ + k);
  {
    loom_selection sel = loom_select_box(1, &start, &one);
    OK(loom_dataset_write_typed(vec, &sel, vec3, 1, mine, LOOM_WRITE_COPY));
    OK(loom_dataset_write_typed(cells, &sel, cell, 1, &c, LOOM_WRITE_COPY));
  }
  OK(loom_object_close(vec));
  OK(loom_object_close(cells));
  OK(loom_object_close(root));
  OK(loom_file_close(f));

  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_open_dataset(root, "velocity", &vec));
  OK(loom_group_open_dataset(root, "cells", &cells));
  OK(loom_dataset_type(cells, &back));
  {
    char a[256], b[256];
    OK(loom_type_name(back, a, sizeof a, NULL));
    OK(loom_type_name(cell, b, sizeof b, NULL));
    CHECK(strcmp(a, b) == 0);
  }
  if (nranks_ <= 64) {
    loom_selection everything = loom_select_all();
    OK(loom_dataset_read_typed(vec, &everything, vec3, n, all));
    OK(loom_dataset_read_typed(cells, &everything, cell, n, cells_back));
    for (i = 0; i < nranks_; ++i) {
      for (k = 0; k < 3; ++k) CHECK(all[3 * i + k] == i * 10 + k);
      CHECK(cells_back[i].id == i);
      for (k = 0; k < 4; ++k) CHECK(cells_back[i].stress[k / 2][k % 2] == (float)(i + k));
    }
  }
  OK(loom_type_free(back));
  OK(loom_type_free(cell));
  OK(loom_type_free(tensor));
  OK(loom_type_free(vec3));
  OK(loom_object_close(vec));
  OK(loom_object_close(cells));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

/* Named datatypes: a compound committed as a type, read back after reopen; misuse refused. */
static void test_named_types(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_type *type = particle_type(), *back = NULL;
  loom_kind kind = LOOM_KIND_NONE;
  char a[256], b[256];
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_commit_type(root, "types/particle", type));
  CHECK(loom_group_commit_type(root, "types/particle", type) == LOOM_ERR_EXISTS);
  CHECK(loom_group_commit_type(root, "", type) == LOOM_ERR_USAGE);
  CHECK(loom_group_commit_type(root, "other", NULL) == LOOM_ERR_USAGE);
  OK(loom_object_close(root));
  OK(loom_file_close(f));
  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_kind(root, "types/particle", &kind));
  CHECK(kind == LOOM_KIND_DATATYPE);
  OK(loom_group_named_type(root, "/types/particle", &back));
  OK(loom_type_name(type, a, sizeof a, NULL));
  OK(loom_type_name(back, b, sizeof b, NULL));
  CHECK(strcmp(a, b) == 0);
  CHECK(loom_group_named_type(root, "types", &back) == LOOM_ERR_NOT_FOUND); /* a group */
  CHECK(loom_group_commit_type(root, "new", type) == LOOM_ERR_READ_ONLY);
  OK(loom_type_free(back));
  OK(loom_type_free(type));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

/* Half precision: elements are IEEE binary16 bits. */
static void test_half(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset* d = NULL;
  loom_selection all = loom_select_all();
  uint64_t two = 2;
  uint16_t halves[2] = {0x3c00, 0xc000}, back[2] = {0, 0}; /* 1.0, -2.0 */
  CHECK(loom_datatype_size(LOOM_FLOAT16) == 2);
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset(root, "h", LOOM_FLOAT16, 1, &two, NULL, NULL, &d));
  if (rank_ == 0) OK(loom_dataset_write(d, &all, LOOM_FLOAT16, 2, halves, LOOM_WRITE_COPY));
  OK(loom_dataset_read(d, &all, LOOM_FLOAT16, 2, back));
  CHECK(back[0] == 0x3c00 && back[1] == 0xc000);
  OK(loom_object_close(d));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

/* Opaque: bytes copied as they are, the tag kept; a bad tag refused. */
static void test_opaque(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset* d = NULL;
  loom_type *blob = NULL, *back = NULL;
  const uint64_t n = (uint64_t)nranks_, start = (uint64_t)rank_, one = 1;
  unsigned char mine[5], all[5 * 64];
  char name[64], long_tag[300];
  int i, k;
  OK(loom_type_opaque(5, "sensor", &blob));
  OK(loom_type_name(blob, name, sizeof name, NULL));
  CHECK(strcmp(name, "opaque[5]{sensor}") == 0);
  memset(long_tag, 't', sizeof long_tag - 1);
  long_tag[sizeof long_tag - 1] = 0;
  CHECK(loom_type_opaque(5, long_tag, &back) == LOOM_ERR_DATATYPE);
  CHECK(loom_type_opaque(0, NULL, &back) == LOOM_ERR_DATATYPE);
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset_typed(root, "blobs", blob, 1, &n, NULL, NULL, &d));
  for (k = 0; k < 5; ++k) mine[k] = (unsigned char)(rank_ * 5 + k);
  {
    loom_selection sel = loom_select_box(1, &start, &one);
    OK(loom_dataset_write_typed(d, &sel, blob, 1, mine, LOOM_WRITE_COPY));
  }
  OK(loom_object_close(d));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_open_dataset(root, "blobs", &d));
  OK(loom_dataset_type(d, &back));
  OK(loom_type_name(back, name, sizeof name, NULL));
  CHECK(strcmp(name, "opaque[5]{sensor}") == 0);
  if (nranks_ <= 64) {
    loom_selection everything = loom_select_all();
    OK(loom_dataset_read_typed(d, &everything, blob, n, all));
    for (i = 0; i < nranks_ * 5; ++i) CHECK(all[i] == (unsigned char)i);
  }
  OK(loom_type_free(back));
  OK(loom_type_free(blob));
  OK(loom_object_close(d));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

/* Big-endian numbers and padded strings: the types' names say so after reopen, values in the host's order. */
static void test_byte_order_and_padding(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset* d = NULL;
  loom_type *be = NULL, *padded = NULL, *back = NULL, *str = NULL;
  const uint64_t n = (uint64_t)nranks_, start = (uint64_t)rank_, one = 1;
  int32_t mine = 1000 + rank_, all[64];
  char name[64];
  int i;
  OK(loom_type_scalar(LOOM_INT32, &be));
  OK(loom_type_set_byte_order(be, LOOM_BIG_ENDIAN));
  OK(loom_type_name(be, name, sizeof name, NULL));
  CHECK(strcmp(name, "int32be") == 0);
  OK(loom_type_string_padded(6, 0, LOOM_STR_SPACEPAD, &padded));
  OK(loom_type_name(padded, name, sizeof name, NULL));
  CHECK(strcmp(name, "string[6, spacepad]") == 0);
  OK(loom_type_string(4, 0, &str));
  CHECK(loom_type_set_byte_order(str, LOOM_BIG_ENDIAN) == LOOM_ERR_DATATYPE);
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset_typed(root, "be", be, 1, &n, NULL, NULL, &d));
  {
    loom_selection sel = loom_select_box(1, &start, &one);
    OK(loom_dataset_write(d, &sel, LOOM_INT32, 1, &mine, LOOM_WRITE_COPY)); /* host order, the plain scalar */
  }
  OK(loom_object_close(d));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_open_dataset(root, "be", &d));
  OK(loom_dataset_type(d, &back));
  OK(loom_type_name(back, name, sizeof name, NULL));
  CHECK(strcmp(name, "int32be") == 0);
  if (nranks_ <= 64) {
    loom_selection everything = loom_select_all();
    OK(loom_dataset_read(d, &everything, LOOM_INT32, n, all));
    for (i = 0; i < nranks_; ++i) CHECK(all[i] == 1000 + i);
  }
  OK(loom_type_free(back));
  OK(loom_type_free(be));
  OK(loom_type_free(padded));
  OK(loom_type_free(str));
  OK(loom_object_close(d));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

/* Null dataspaces: a dataset and an attribute with a type and no elements. */
static void test_null(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset* d = NULL;
  loom_type *i16 = NULL, *back = NULL;
  loom_attr_kind kind = LOOM_ATTR_SCALAR;
  loom_datatype type = LOOM_UINT8;
  size_t count = 99;
  int is_null = 0;
  char name[64];
  OK(loom_type_enum(LOOM_INT16, &i16));
  OK(loom_type_enum_insert(i16, "off", 0));
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset_null(root, "nothing", i16, &d));
  OK(loom_dataset_is_null(d, &is_null));
  CHECK(is_null == 1);
  OK(loom_attr_write_typed((loom_object*)d, "none", i16, LOOM_ATTR_EMPTY, 0, NULL));
  CHECK(loom_attr_write_typed((loom_object*)d, "bad", i16, LOOM_ATTR_EMPTY, 2, NULL) == LOOM_ERR_SELECTION);
  OK(loom_object_close(d));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_open_dataset(root, "nothing", &d));
  OK(loom_dataset_is_null(d, &is_null));
  CHECK(is_null == 1);
  OK(loom_attr_info((loom_object*)d, "none", &kind, &type, &count));
  CHECK(kind == LOOM_ATTR_EMPTY && type == LOOM_INT16 && count == 0);
  OK(loom_attr_type((loom_object*)d, "none", &back));
  OK(loom_type_name(back, name, sizeof name, NULL));
  CHECK(strcmp(name, "enum<int16>{off: 0}") == 0);
  OK(loom_type_free(back));
  OK(loom_type_free(i16));
  OK(loom_object_close(d));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

/* Filters: shuffle + deflate kept after reopen, values read back; bad arguments refused. */
static void test_filters(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset* d = NULL;
  loom_type* i32 = NULL;
  const uint64_t n = 64 * (uint64_t)nranks_, start = 64 * (uint64_t)rank_, count = 64, chunk = 32;
  const unsigned level = 5;
  loom_filter filters[2];
  int32_t mine[64], all[64 * 64];
  unsigned id = 0, params[4];
  size_t nfilters = 0, nparams = 4;
  int optional = 1, i;
  filters[0].id = LOOM_FILTER_SHUFFLE, filters[0].nparams = 0, filters[0].params = NULL, filters[0].optional = 0;
  filters[1].id = LOOM_FILTER_DEFLATE, filters[1].nparams = 1, filters[1].params = &level, filters[1].optional = 0;
  OK(loom_type_scalar(LOOM_INT32, &i32));
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  CHECK(loom_group_create_dataset_filtered(root, "bad", i32, 1, &n, NULL, &chunk, 1, NULL, &d) == LOOM_ERR_USAGE);
  OK(loom_group_create_dataset_filtered(root, "z", i32, 1, &n, NULL, &chunk, 2, filters, &d));
  for (i = 0; i < 64; ++i) mine[i] = (rank_ * 64 + i) / 8;
  {
    loom_selection sel = loom_select_box(1, &start, &count);
    OK(loom_dataset_write_typed(d, &sel, i32, 64, mine, LOOM_WRITE_COPY));
  }
  OK(loom_object_close(d));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_open_dataset(root, "z", &d));
  OK(loom_dataset_filter_count(d, &nfilters));
  CHECK(nfilters == 2);
  OK(loom_dataset_filter(d, 1, &id, &optional, params, &nparams));
  CHECK(id == LOOM_FILTER_DEFLATE && optional == 0 && nparams == 1 && params[0] == 5);
  CHECK(loom_dataset_filter(d, 2, &id, NULL, NULL, NULL) == LOOM_ERR_SELECTION);
  if (nranks_ <= 64) {
    loom_selection everything = loom_select_all();
    OK(loom_dataset_read_typed(d, &everything, i32, n, all));
    for (i = 0; i < (int)n; ++i) CHECK(all[i] == i / 8);
  }
  OK(loom_type_free(i32));
  OK(loom_object_close(d));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

/* Dimension names: kept by engines with the group "dimension_names", refused by the others. */
static void test_dim_names(const char* path, const char* engine) {
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset* d = NULL;
  loom_type* f32 = NULL;
  uint64_t shape[2] = {3, 4};
  const char* names[2] = {"y", NULL};
  char name[16];
  size_t needed = 0;
  int keeps = 0;
  OK(loom_engine_supports(engine, "dimension_names", &keeps));
  OK(loom_type_scalar(LOOM_FLOAT32, &f32));
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  CHECK(loom_group_create_dataset_named_dims(root, "none", f32, 2, shape, NULL, NULL, &d) == LOOM_ERR_USAGE);
  if (!keeps) {
    CHECK(loom_group_create_dataset_named_dims(root, "named", f32, 2, shape, NULL, names, &d) == LOOM_ERR_USAGE);
  } else {
    OK(loom_group_create_dataset_named_dims(root, "named", f32, 2, shape, NULL, names, &d));
    OK(loom_object_close(d));
    OK(loom_object_close(root));
    OK(loom_file_close(f));
    OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
    OK(loom_file_root(f, &root));
    OK(loom_group_open_dataset(root, "named", &d));
    OK(loom_dataset_dim_name(d, 0, name, sizeof name, &needed));
    CHECK(strcmp(name, "y") == 0 && needed == 1);
    OK(loom_dataset_dim_name(d, 1, name, sizeof name, &needed));
    CHECK(strcmp(name, "") == 0 && needed == 0);
    CHECK(loom_dataset_dim_name(d, 2, name, sizeof name, &needed) == LOOM_ERR_SELECTION);
    OK(loom_object_close(d));
  }
  OK(loom_type_free(f32));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
}

int main(int argc, char** argv) {
  char path[4096];
  int any = 0, typed = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
  if (argc != 3) {
    if (rank_ == 0) fprintf(stderr, "usage: test_capi_types DIR ENGINE\n");
    MPI_Finalize();
    return 2;
  }
  /* The zarr engine stores numbers only: the typed tests are for engines with the group "datatype". */
  OK(loom_engine_supports(argv[2], "datatype", &typed));
  if (typed) {
    snprintf(path, sizeof path, "%s/capi-types-%s-np%d.h5", argv[1], argv[2], nranks_);
    test_records(path, argv[2]);
    snprintf(path, sizeof path, "%s/capi-arrays-%s-np%d.h5", argv[1], argv[2], nranks_);
    test_arrays(path, argv[2]);
    snprintf(path, sizeof path, "%s/capi-named-%s-np%d.h5", argv[1], argv[2], nranks_);
    test_named_types(path, argv[2]);
    snprintf(path, sizeof path, "%s/capi-half-%s-np%d.h5", argv[1], argv[2], nranks_);
    test_half(path, argv[2]);
    snprintf(path, sizeof path, "%s/capi-opaque-%s-np%d.h5", argv[1], argv[2], nranks_);
    test_opaque(path, argv[2]);
    snprintf(path, sizeof path, "%s/capi-order-%s-np%d.h5", argv[1], argv[2], nranks_);
    test_byte_order_and_padding(path, argv[2]);
    snprintf(path, sizeof path, "%s/capi-null-%s-np%d.h5", argv[1], argv[2], nranks_);
    test_null(path, argv[2]);
  }
  snprintf(path, sizeof path, "%s/capi-filters-%s-np%d.h5", argv[1], argv[2], nranks_);
  test_filters(path, argv[2]);
  snprintf(path, sizeof path, "%s/capi-dims-%s-np%d.h5", argv[1], argv[2], nranks_);
  test_dim_names(path, argv[2]);
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("test_capi_types (%s): %d checks, %d failed on some rank\n", argv[2], checks, any);
  MPI_Finalize();
  return any ? 1 : 0;
}
