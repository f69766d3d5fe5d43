/* netCDF files from plain C99 (issue 19): define dimensions, variables,
 * attributes and a fill value; each rank puts its rows; PIO's rearranger
 * writes frames of a record variable (the record dimension grows); the file
 * reopens with its ids, names, attributes and values; bad arguments are
 * refused on every rank, naming what is wrong.
 *   test_capi_netcdf DIR ENGINE   (any number of ranks) */
#include <h5loom/h5loom.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { NY = 5, NX = 4 };

static void test_round_trip(const char* dir, const char* engine) {
  char path[4096], name[64], text[64];
  loom_nc_file* f = NULL;
  loom_decomposition* d = NULL;
  loom_rearrangement* r = NULL;
  int t_dim, y_dim, x_dim, grid, series, dimids[3], ndims = 0, nvars = 0, unlimited = -2, id = -1, k;
  uint64_t shape[2] = {NY, NX}, length = 0, i, j, frame;
  int64_t* map;
  size_t n = 0, needed = 0;
  const float fill = -1.0f;
  float row[NX], all[NY * NX];
  double local[NY * NX], back[NY * NX], scale[2] = {0.0, 0.0};
  loom_datatype type;
  snprintf(path, sizeof path, "%s/capi-netcdf-%s-np%d.nc", dir, engine, nranks_);

  OK(loom_nc_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_nc_def_dim(f, "time", LOOM_NC_UNLIMITED, &t_dim));
  OK(loom_nc_def_dim(f, "y", NY, &y_dim));
  OK(loom_nc_def_dim(f, "x", NX, &x_dim));
  CHECK(t_dim == 0 && y_dim == 1 && x_dim == 2);
  dimids[0] = y_dim;
  dimids[1] = x_dim;
  OK(loom_nc_def_var(f, "grid", LOOM_FLOAT32, 2, dimids, &grid));
  OK(loom_nc_def_var_fill(f, grid, LOOM_FLOAT32, &fill));
  OK(loom_nc_def_var_deflate(f, grid, 1, 4));
  OK(loom_nc_put_att_text(f, grid, "units", "K"));
  dimids[0] = t_dim;
  dimids[1] = y_dim;
  dimids[2] = x_dim;
  OK(loom_nc_def_var(f, "series", LOOM_FLOAT64, 3, dimids, &series));
  {
    const float series_fill = -2.5f; /* a float for a double variable: converted */
    OK(loom_nc_def_var_fill(f, series, LOOM_FLOAT32, &series_fill));
  }
  CHECK(grid == 0 && series == 1);
  scale[0] = 0.5;
  scale[1] = 2.0;
  OK(loom_nc_put_att(f, LOOM_NC_GLOBAL, "scale", LOOM_FLOAT64, 2, scale));
  OK(loom_nc_put_att_text(f, LOOM_NC_GLOBAL, "title", "from C"));
  OK(loom_nc_enddef(f));
  for (i = (uint64_t)rank_; i < NY; i += (uint64_t)nranks_) { /* row NY-1 stays fill */
    uint64_t start[2], count[2] = {1, NX};
    if (i == NY - 1) continue;
    start[0] = i;
    start[1] = 0;
    for (j = 0; j < NX; ++j) row[j] = (float)(10 * i + j);
    OK(loom_nc_put_vara(f, grid, 2, start, count, LOOM_FLOAT32, NX, row));
  }
  /* Frames of `series` through the box rearranger: rank r holds the offsets with o % size == r. */
  map = malloc(NY * NX * sizeof *map);
  for (k = 0; k < NY * NX; ++k)
    if (k % nranks_ == rank_) map[n++] = k;
  OK(loom_decomposition_from_map(MPI_COMM_WORLD, 2, shape, n, map, 0, &d));
  OK(loom_rearrangement_create(d, 1, 1, 0, LOOM_REARRANGER_BOX, &r));
  for (frame = 0; frame < 2; ++frame) {
    for (i = 0; i < n; ++i) local[i] = (double)map[i] + 100.0 * (double)frame;
    OK(loom_nc_write_darray(r, f, series, frame, LOOM_FLOAT64, n, local));
  }
  OK(loom_nc_close(f));

  OK(loom_nc_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
  OK(loom_nc_inq(f, &ndims, &nvars, &unlimited));
  CHECK(ndims == 3 && nvars == 2 && unlimited == 0);
  OK(loom_nc_inq_dim(f, 0, name, sizeof name, &needed, &length));
  CHECK(strcmp(name, "time") == 0 && length == 2);
  OK(loom_nc_inq_varid(f, "series", &id));
  CHECK(id == 1);
  OK(loom_nc_inq_var(f, grid, name, sizeof name, &needed, &type, &ndims, dimids));
  CHECK(strcmp(name, "grid") == 0 && type == LOOM_FLOAT32 && ndims == 2 && dimids[0] == 1 && dimids[1] == 2);
  OK(loom_nc_get_att_text(f, grid, "units", text, sizeof text, &needed));
  CHECK(strcmp(text, "K") == 0 && needed == 1);
  OK(loom_nc_get_att(f, LOOM_NC_GLOBAL, "scale", LOOM_FLOAT64, 2, scale));
  CHECK(scale[0] == 0.5 && scale[1] == 2.0);
  OK(loom_nc_get_att(f, series, "_FillValue", LOOM_FLOAT64, 1, scale));
  CHECK(scale[0] == -2.5);
  OK(loom_nc_get_vara(f, grid, 0, NULL, NULL, LOOM_FLOAT32, NY * NX, all));
  for (i = 0; i < NY; ++i)
    for (j = 0; j < NX; ++j) CHECK(all[i * NX + j] == (i == NY - 1 ? fill : (float)(10 * i + j)));
  for (frame = 0; frame < 2; ++frame) {
    OK(loom_nc_read_darray(r, f, series, frame, LOOM_FLOAT64, n, back));
    for (i = 0; i < n; ++i) CHECK(back[i] == (double)map[i] + 100.0 * (double)frame);
  }
  /* Errors, on every rank, naming what is wrong. */
  CHECK(loom_nc_inq_var(f, 7, name, sizeof name, &needed, &type, &ndims, NULL) == LOOM_ERR_USAGE);
  CHECK(strstr(loom_last_error_message(), "varid 7") != NULL);
  CHECK(loom_nc_redef(f) == LOOM_ERR_READ_ONLY);
  CHECK(loom_nc_get_att(f, grid, "units", LOOM_FLOAT64, 1, scale) == LOOM_ERR_DATATYPE);
  CHECK(loom_nc_get_att(f, LOOM_NC_GLOBAL, "scale", LOOM_FLOAT64, 3, scale) == LOOM_ERR_SELECTION);
  CHECK(loom_nc_inq_dimid(f, "nope", &id) == LOOM_ERR_NOT_FOUND);
  OK(loom_nc_close(f));
  OK(loom_rearrangement_free(r));
  OK(loom_decomposition_free(d));
  free(map);
}

static void test_define_errors(const char* dir, const char* engine) {
  char path[4096];
  loom_nc_file* f = NULL;
  int dim = -1, var = -1, bad_dims[1] = {9};
  uint64_t start[1] = {0}, count[1] = {1};
  int32_t one = 1;
  snprintf(path, sizeof path, "%s/capi-netcdf-errors-%s-np%d.nc", dir, engine, nranks_);
  OK(loom_nc_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_nc_def_dim(f, "rec", LOOM_NC_UNLIMITED, &dim));
  CHECK(loom_nc_def_var(f, "v", LOOM_INT32, 1, bad_dims, &var) == LOOM_ERR_USAGE);
  CHECK(strstr(loom_last_error_message(), "dimid 9") != NULL);
  CHECK(loom_nc_def_var(f, "h", LOOM_FLOAT16, 1, &dim, &var) == LOOM_ERR_DATATYPE);
  OK(loom_nc_def_var(f, "v", LOOM_INT32, 1, &dim, &var));
  CHECK(loom_nc_put_vara(f, var, 1, start, count, LOOM_INT32, 1, &one) == LOOM_ERR_USAGE); /* define mode */
  OK(loom_nc_enddef(f));
  CHECK(loom_nc_put_vara(f, var, 1, start, count, LOOM_INT32, 1, &one) == LOOM_ERR_SELECTION); /* no record yet */
  CHECK(strstr(loom_last_error_message(), "set_records(1)") != NULL);
  CHECK(loom_nc_def_dim(f, "late", 3, &dim) == LOOM_ERR_USAGE); /* data mode */
  OK(loom_nc_set_records(f, 1));
  CHECK(loom_nc_put_vara(f, var, 2, start, count, LOOM_INT32, 1, &one) == LOOM_ERR_SELECTION); /* 2 of 1 dims */
  CHECK(strstr(loom_last_error_message(), "ndims 2") != NULL);
  OK(loom_nc_put_vara(f, var, 1, start, count, LOOM_INT32, 1, &one));
  OK(loom_nc_close(f));
  CHECK(loom_nc_open(path, LOOM_MODE_CREATE, MPI_COMM_WORLD, engine, &f) == LOOM_ERR_USAGE);
  CHECK(f == NULL);
}

int main(int argc, char** argv) {
  int any = 0, provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided); /* async+log's background thread */
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
  if (argc != 3) {
    if (rank_ == 0) fprintf(stderr, "usage: test_capi_netcdf DIR ENGINE\n");
    MPI_Finalize();
    return 2;
  }
  test_round_trip(argv[1], argv[2]);
  test_define_errors(argv[1], argv[2]);
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("test_capi_netcdf (%s): %d checks, %d failed on some rank\n", argv[2], checks, any);
  MPI_Finalize();
  return any ? 1 : 0;
}
