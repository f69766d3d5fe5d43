/* A plain parallel HDF5 program (no h5loom in it), run through h5loom's VOL
 * connector by tests/vol/run_vol_app.sh:
 *
 *   HDF5_PLUGIN_PATH=<build>/vol-plugin HDF5_VOL_CONNECTOR="h5loom <engine>" mpirun -n N vol_app FILE
 *
 * Writes with the MPI-IO file access properties (groups, a 2-D dataset of
 * which every rank writes its rows as a hyperslab, a dataset written through
 * a type conversion, an extendable dataset grown with H5Dset_extent, points,
 * attributes, a soft link), closes, opens the file again read-only and checks
 * every value it reads back, on every rank. Prints "vol_app: OK" on rank 0.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define CHECK(cond, ...)                                                        \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "vol_app rank %d, line %d: ", rank, __LINE__);            \
      fprintf(stderr, __VA_ARGS__);                                             \
      fprintf(stderr, "\n");                                                    \
      MPI_Abort(MPI_COMM_WORLD, 1);                                             \
    }                                                                           \
  } while (0)
#define OK(call) CHECK((call) >= 0, "%s failed", #call)

enum { ROWS = 4, COLS = 3, GROW = 5 };

static double rho_value(int row, int col) { return 100.0 * row + col + 0.5; }

static hid_t mpio_fapl(void) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  OK(fapl);
  OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
  return fapl;
}

static hid_t collective(void) {
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  OK(dxpl);
  OK(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
  return dxpl;
}

static void write_file(const char* name) {
  hid_t fapl = mpio_fapl(), dxpl = collective();
  hid_t file = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  CHECK(file >= 0, "H5Fcreate('%s') failed", name);

  /* Groups, one below another. */
  hid_t fields = H5Gcreate2(file, "fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  OK(fields);
  hid_t deep = H5Gcreate2(fields, "deep", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  OK(deep);
  OK(H5Gclose(deep));

  /* rho: [ROWS * size, COLS] doubles, each rank its ROWS rows (a hyperslab). */
  hsize_t dims[2] = {(hsize_t)ROWS * size, COLS};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t rho = H5Dcreate2(fields, "rho", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  OK(rho);
  double mine[ROWS][COLS];
  for (int r = 0; r < ROWS; ++r)
    for (int c = 0; c < COLS; ++c) mine[r][c] = rho_value(ROWS * rank + r, c);
  hsize_t start[2] = {(hsize_t)ROWS * rank, 0}, count[2] = {ROWS, COLS};
  OK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
  hid_t mem = H5Screate_simple(2, count, NULL);
  OK(H5Dwrite(rho, H5T_NATIVE_DOUBLE, mem, space, dxpl, mine));
  memset(mine, 0, sizeof mine); /* HDF5 lets the buffer go at once */
  OK(H5Sclose(mem));
  OK(H5Sclose(space));

  /* Attributes: a string on rho, a scalar and an array on the root group. */
  hid_t str = H5Tcopy(H5T_C_S1);
  OK(H5Tset_size(str, 7));
  hid_t scalar = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(rho, "units", str, scalar, H5P_DEFAULT, H5P_DEFAULT);
  OK(a);
  OK(H5Awrite(a, str, "kg/m^3"));
  OK(H5Aclose(a));
  int step = 42;
  a = H5Acreate2(file, "step", H5T_STD_I32LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
  OK(H5Awrite(a, H5T_NATIVE_INT, &step));
  OK(H5Aclose(a));
  hsize_t three = 3;
  hid_t vec = H5Screate_simple(1, &three, NULL);
  double origin[3] = {0.25, -1.5, 1e10};
  a = H5Acreate2(file, "origin", H5T_IEEE_F64LE, vec, H5P_DEFAULT, H5P_DEFAULT);
  OK(H5Awrite(a, H5T_NATIVE_DOUBLE, origin));
  OK(H5Aclose(a));
  OK(H5Sclose(vec));

  /* ids: int64 in the file, written from ints (a conversion). */
  hsize_t n = (hsize_t)size * 2;
  space = H5Screate_simple(1, &n, NULL);
  hid_t ids = H5Dcreate2(file, "ids", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  OK(ids);
  int my_ids[2] = {1000 + 2 * rank, 1001 + 2 * rank};
  hsize_t s1 = 2 * (hsize_t)rank, c1 = 2;
  OK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &s1, NULL, &c1, NULL));
  mem = H5Screate_simple(1, &c1, NULL);
  OK(H5Dwrite(ids, H5T_NATIVE_INT, mem, space, dxpl, my_ids));
  OK(H5Sclose(mem));
  OK(H5Sclose(space));
  OK(H5Dclose(ids));

  /* points: every rank writes two single elements (a point selection). A
     fill value makes the elements between them 0: without one, HDF5 leaves
     never-written elements of a contiguous dataset as whatever the file held. */
  n = (hsize_t)size * 4;
  space = H5Screate_simple(1, &n, NULL);
  hid_t filled = H5Pcreate(H5P_DATASET_CREATE);
  int zero = 0;
  OK(H5Pset_fill_value(filled, H5T_NATIVE_INT, &zero));
  hid_t points = H5Dcreate2(file, "points", H5T_NATIVE_INT, space, H5P_DEFAULT, filled, H5P_DEFAULT);
  OK(points);
  OK(H5Pclose(filled));
  hsize_t coords[2] = {4 * (hsize_t)rank + 3, 4 * (hsize_t)rank};
  OK(H5Sselect_elements(space, H5S_SELECT_SET, 2, coords));
  int pv[2] = {30 + rank, 10 + rank}; /* element 4r+3 gets 30+r, element 4r gets 10+r */
  hsize_t two = 2;
  mem = H5Screate_simple(1, &two, NULL);
  OK(H5Dwrite(points, H5T_NATIVE_INT, mem, space, dxpl, pv));
  OK(H5Sclose(mem));
  OK(H5Sclose(space));
  /* As HDF5: H5Dset_extent refuses a contiguous dataset, even to its own extent. */
  H5E_BEGIN_TRY { CHECK(H5Dset_extent(points, &n) < 0, "H5Dset_extent of a contiguous dataset succeeded"); }
  H5E_END_TRY
  OK(H5Dclose(points));

  /* steps: extendable (chunked), grown once, each rank writes a value per row. */
  hsize_t cur[2] = {2, (hsize_t)size}, maxd[2] = {H5S_UNLIMITED, (hsize_t)size}, chunk[2] = {2, 1};
  space = H5Screate_simple(2, cur, maxd);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  OK(H5Pset_chunk(dcpl, 2, chunk));
  hid_t steps = H5Dcreate2(file, "steps", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  OK(steps);
  OK(H5Pclose(dcpl));
  OK(H5Sclose(space));
  hsize_t grown[2] = {GROW, (hsize_t)size};
  OK(H5Dset_extent(steps, grown));
  space = H5Dget_space(steps);
  hsize_t s2[2] = {0, (hsize_t)rank}, c2[2] = {GROW, 1};
  OK(H5Sselect_hyperslab(space, H5S_SELECT_SET, s2, NULL, c2, NULL));
  float col[GROW];
  for (int i = 0; i < GROW; ++i) col[i] = (float)(i * 10 + rank);
  hsize_t g = GROW;
  mem = H5Screate_simple(1, &g, NULL);
  OK(H5Dwrite(steps, H5T_NATIVE_FLOAT, mem, space, dxpl, col));
  OK(H5Sclose(mem));
  OK(H5Sclose(space));
  OK(H5Dclose(steps));

  /* A soft link to rho. */
  OK(H5Lcreate_soft("/fields/rho", file, "latest", H5P_DEFAULT, H5P_DEFAULT));
  /* An external-class value that is not an external link (not version 0):
     HDF5 keeps it as given but cannot describe it - it only exists, and
     h5dump fails on a file holding it, so it goes again. */
  OK(H5Lcreate_ud(file, "/fields/opaque", H5L_TYPE_EXTERNAL, "udata", 5, H5P_DEFAULT, H5P_DEFAULT));
  CHECK(H5Lexists(file, "fields/opaque", H5P_DEFAULT) > 0, "fields/opaque exists");
  H5L_info2_t opaque;
  H5E_BEGIN_TRY { CHECK(H5Lget_info2(file, "fields/opaque", &opaque, H5P_DEFAULT) < 0, "HDF5 described fields/opaque"); }
  H5E_END_TRY
  OK(H5Ldelete(file, "fields/opaque", H5P_DEFAULT));

  OK(H5Sclose(scalar));
  OK(H5Tclose(str));
  OK(H5Dclose(rho));
  OK(H5Gclose(fields));
  OK(H5Pclose(dxpl));
  OK(H5Pclose(fapl));
  OK(H5Fclose(file));
}

static herr_t count_link(hid_t g, const char* name, const H5L_info2_t* info, void* data) {
  (void)g, (void)name, (void)info;
  ++*(int*)data;
  return 0;
}

static herr_t count_attr(hid_t loc, const char* name, const H5A_info_t* info, void* data) {
  (void)loc, (void)name, (void)info;
  ++*(int*)data;
  return 0;
}

static void read_file(const char* name) {
  hid_t fapl = mpio_fapl(), dxpl = collective();
  hid_t file = H5Fopen(name, H5F_ACC_RDONLY, fapl);
  CHECK(file >= 0, "H5Fopen('%s') failed", name);
  unsigned intent = 0;
  OK(H5Fget_intent(file, &intent));
  CHECK(intent == H5F_ACC_RDONLY, "intent %u", intent);

  /* rho, whole, through the soft link. */
  hid_t rho = H5Dopen2(file, "latest", H5P_DEFAULT);
  OK(rho);
  hid_t space = H5Dget_space(rho);
  hsize_t dims[2];
  CHECK(H5Sget_simple_extent_dims(space, dims, NULL) == 2, "rank of rho");
  CHECK(dims[0] == (hsize_t)ROWS * size && dims[1] == COLS, "shape of rho");
  OK(H5Sclose(space));
  hid_t type = H5Dget_type(rho);
  CHECK(H5Tget_class(type) == H5T_FLOAT && H5Tget_size(type) == 8, "type of rho");
  OK(H5Tclose(type));
  double* all = malloc(sizeof(double) * ROWS * size * COLS);
  OK(H5Dread(rho, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl, all));
  for (int r = 0; r < ROWS * size; ++r)
    for (int c = 0; c < COLS; ++c)
      CHECK(all[r * COLS + c] == rho_value(r, c), "rho[%d][%d] = %g, not %g", r, c, all[r * COLS + c], rho_value(r, c));
  free(all);

  /* One column of this rank's rows, as floats (a hyperslab and a conversion). */
  space = H5Dget_space(rho);
  hsize_t start[2] = {(hsize_t)ROWS * rank, 1}, count[2] = {ROWS, 1};
  OK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
  float colv[ROWS];
  hsize_t rows = ROWS;
  hid_t mem = H5Screate_simple(1, &rows, NULL);
  OK(H5Dread(rho, H5T_NATIVE_FLOAT, mem, space, dxpl, colv));
  for (int r = 0; r < ROWS; ++r) CHECK(colv[r] == (float)rho_value(ROWS * rank + r, 1), "column value %d", r);
  OK(H5Sclose(mem));
  OK(H5Sclose(space));

  /* Attributes. */
  char units[8] = {0};
  hid_t str = H5Tcopy(H5T_C_S1);
  OK(H5Tset_size(str, 7));
  hid_t a = H5Aopen(rho, "units", H5P_DEFAULT);
  OK(a);
  OK(H5Aread(a, str, units));
  CHECK(strcmp(units, "kg/m^3") == 0, "units '%s'", units);
  OK(H5Aclose(a));
  OK(H5Tclose(str));
  int step = 0;
  a = H5Aopen(file, "step", H5P_DEFAULT);
  OK(H5Aread(a, H5T_NATIVE_INT, &step));
  CHECK(step == 42, "step %d", step);
  OK(H5Aclose(a));
  double origin[3];
  a = H5Aopen(file, "origin", H5P_DEFAULT);
  OK(H5Aread(a, H5T_NATIVE_DOUBLE, origin));
  CHECK(origin[0] == 0.25 && origin[1] == -1.5 && origin[2] == 1e10, "origin");
  OK(H5Aclose(a));
  CHECK(H5Aexists(file, "step") > 0 && H5Aexists(file, "nothing") == 0, "H5Aexists");
  int nattrs = 0;
  OK(H5Aiterate2(file, H5_INDEX_NAME, H5_ITER_INC, NULL, count_attr, &nattrs));
  CHECK(nattrs == 2, "%d attributes on the root group", nattrs);
  OK(H5Dclose(rho));

  /* ids (int64 in the file) read as ints. */
  hid_t ids = H5Dopen2(file, "ids", H5P_DEFAULT);
  int* iv = malloc(sizeof(int) * 2 * size);
  OK(H5Dread(ids, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, dxpl, iv));
  for (int i = 0; i < 2 * size; ++i) CHECK(iv[i] == 1000 + i, "ids[%d] = %d", i, iv[i]);
  free(iv);
  OK(H5Dclose(ids));

  /* points: the written elements, and zeros between. */
  hid_t points = H5Dopen2(file, "points", H5P_DEFAULT);
  int* pv = malloc(sizeof(int) * 4 * size);
  OK(H5Dread(points, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, dxpl, pv));
  for (int r = 0; r < size; ++r) {
    CHECK(pv[4 * r] == 10 + r && pv[4 * r + 3] == 30 + r, "points of rank %d: %d %d", r, pv[4 * r], pv[4 * r + 3]);
    CHECK(pv[4 * r + 1] == 0 && pv[4 * r + 2] == 0, "points between");
  }
  free(pv);
  /* Read back this rank's two points by a point selection too. */
  space = H5Dget_space(points);
  hsize_t coords[2] = {4 * (hsize_t)rank + 3, 4 * (hsize_t)rank};
  OK(H5Sselect_elements(space, H5S_SELECT_SET, 2, coords));
  int two[2];
  hsize_t n2 = 2;
  mem = H5Screate_simple(1, &n2, NULL);
  OK(H5Dread(points, H5T_NATIVE_INT, mem, space, dxpl, two));
  CHECK(two[0] == 30 + rank && two[1] == 10 + rank, "point read %d %d", two[0], two[1]);
  OK(H5Sclose(mem));
  OK(H5Sclose(space));
  OK(H5Dclose(points));

  /* steps: grown to GROW rows, column r from rank r. */
  hid_t steps = H5Dopen2(file, "steps", H5P_DEFAULT);
  space = H5Dget_space(steps);
  hsize_t sd[2], smax[2];
  OK(H5Sget_simple_extent_dims(space, sd, smax));
  CHECK(sd[0] == GROW && sd[1] == (hsize_t)size && smax[0] == H5S_UNLIMITED, "shape of steps");
  OK(H5Sclose(space));
  float* sv = malloc(sizeof(float) * GROW * size);
  OK(H5Dread(steps, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, dxpl, sv));
  for (int i = 0; i < GROW; ++i)
    for (int r = 0; r < size; ++r) CHECK(sv[i * size + r] == (float)(i * 10 + r), "steps[%d][%d]", i, r);
  free(sv);
  hid_t dcpl = H5Dget_create_plist(steps);
  CHECK(H5Pget_layout(dcpl) == H5D_CHUNKED, "steps is chunked");
  OK(H5Pclose(dcpl));
  OK(H5Dclose(steps));

  /* Links and objects. */
  CHECK(H5Lexists(file, "fields", H5P_DEFAULT) > 0 && H5Lexists(file, "nothing", H5P_DEFAULT) == 0, "H5Lexists");
  H5L_info2_t linfo;
  OK(H5Lget_info2(file, "latest", &linfo, H5P_DEFAULT));
  CHECK(linfo.type == H5L_TYPE_SOFT, "latest is a soft link");
  char target[32];
  OK(H5Lget_val(file, "latest", target, sizeof target, H5P_DEFAULT));
  CHECK(strcmp(target, "/fields/rho") == 0, "soft link target '%s'", target);
  int nlinks = 0;
  OK(H5Literate2(file, H5_INDEX_NAME, H5_ITER_INC, NULL, count_link, &nlinks));
  CHECK(nlinks == 5, "%d links in the root group (fields, ids, latest, points, steps)", nlinks);
  H5G_info_t ginfo;
  OK(H5Gget_info_by_name(file, "fields", &ginfo, H5P_DEFAULT));
  CHECK(ginfo.nlinks == 2, "%llu links in /fields", (unsigned long long)ginfo.nlinks);
  H5O_info2_t oinfo;
  OK(H5Oget_info_by_name3(file, "fields/rho", &oinfo, H5O_INFO_BASIC | H5O_INFO_NUM_ATTRS, H5P_DEFAULT));
  CHECK(oinfo.type == H5O_TYPE_DATASET && oinfo.num_attrs == 1, "object info of rho");
  hid_t deep = H5Oopen(file, "fields/deep", H5P_DEFAULT);
  CHECK(deep >= 0 && H5Iget_type(deep) == H5I_GROUP, "H5Oopen of a group");
  OK(H5Oclose(deep));

  OK(H5Pclose(dxpl));
  OK(H5Pclose(fapl));
  OK(H5Fclose(file));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2) {
    if (rank == 0) fprintf(stderr, "usage: vol_app FILE\n");
    MPI_Finalize();
    return 2;
  }
  write_file(argv[1]);
  read_file(argv[1]);
  if (rank == 0) printf("vol_app: OK (%d ranks)\n", size);
  MPI_Finalize();
  return 0;
}
