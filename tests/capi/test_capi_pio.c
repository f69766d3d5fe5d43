/* PIO's write_darray / read_darray from plain C99: the project's F-case map
 * (bench/e3sm, 72 x 866 with holes) through the box and subset rearrangers
 * onto two frames of a dataset, read back element by element; a 1-based map
 * with holes; bad arguments refused on every rank.
 *   test_capi_pio DIR SOURCE_DIR ENGINE   (any number of ranks) */
#include <h5loom/h5loom.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static double value_of(int64_t offset, uint64_t frame) { return (double)offset * 0.5 + (double)frame * 1e6; }

static void test_fcase(const char* dir, const char* source, const char* engine, loom_rearranger kind) {
  char path[4096], map_path[4096];
  loom_decomposition* d = NULL;
  loom_rearrangement* r = NULL;
  loom_file* f = NULL;
  loom_group* root = NULL;
  loom_dataset* ds = NULL;
  loom_type* f64 = NULL;
  uint64_t shape[3] = {2, 72, 866};
  const double fill = -5.0;
  size_t n = 0, i;
  int64_t* map;
  double *local, *back;
  uint64_t frame;
  snprintf(map_path, sizeof map_path, "%s/bench/e3sm/f_case_866x72_16p.dat", source);
  snprintf(path, sizeof path, "%s/capi-pio-%s-%d-np%d.h5", dir, engine, (int)kind, nranks_);
  OK(loom_decomposition_from_file(MPI_COMM_WORLD, map_path, &d));
  OK(loom_decomposition_local(d, &n, NULL));
  map = malloc((n ? n : 1) * sizeof *map);
  local = malloc((n ? n : 1) * sizeof *local);
  back = malloc((n ? n : 1) * sizeof *back);
  OK(loom_decomposition_local(d, &n, map));
  OK(loom_rearrangement_create(d, nranks_ > 1 ? nranks_ / 2 : 1, nranks_ > 1 ? 2 : 1, 0, kind, &r));
  OK(loom_type_scalar(LOOM_FLOAT64, &f64));
  OK(loom_file_create(path, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_create_dataset_typed(root, "T", f64, 3, shape, NULL, &fill, &ds));
  for (frame = 0; frame < 2; ++frame) {
    for (i = 0; i < n; ++i) local[i] = map[i] < 0 ? 1e99 : value_of(map[i], frame);
    OK(loom_darray_write(r, ds, frame, f64, n, local));
  }
  OK(loom_object_close(ds));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
  OK(loom_file_open(path, LOOM_MODE_READ, MPI_COMM_WORLD, engine, &f));
  OK(loom_file_root(f, &root));
  OK(loom_group_open_dataset(root, "T", &ds));
  for (frame = 0; frame < 2; ++frame) {
    OK(loom_darray_read(r, ds, frame, f64, n, back));
    for (i = 0; i < n; ++i) CHECK(back[i] == (map[i] < 0 ? fill : value_of(map[i], frame)));
  }
  OK(loom_object_close(ds));
  OK(loom_object_close(root));
  OK(loom_file_close(f));
  OK(loom_type_free(f64));
  OK(loom_rearrangement_free(r));
  OK(loom_decomposition_free(d));
  free(map), free(local), free(back);
}

static void test_errors(void) {
  loom_decomposition* d = NULL;
  loom_rearrangement* r = NULL;
  uint64_t shape[1] = {10};
  int64_t one_based[3] = {0, 0, 0};  /* holes, then this rank's element (1-based) */
  int64_t got[3];
  size_t n = 0;
  one_based[1] = rank_ + 1;
  OK(loom_decomposition_from_map(MPI_COMM_WORLD, 1, shape, 3, one_based, 1, &d));
  OK(loom_decomposition_local(d, &n, got));
  CHECK(n == 3 && got[0] == -1 && got[1] == rank_ && got[2] == -1);
  CHECK(loom_rearrangement_create(d, 1, 1, 0, (loom_rearranger)7, &r) == LOOM_ERR_USAGE && r == NULL);
  CHECK(loom_rearrangement_create(d, nranks_ + 1, 1, 0, LOOM_REARRANGER_BOX, &r) == LOOM_ERR_USAGE);
  OK(loom_decomposition_free(d));
  one_based[1] = 11;  /* outside the array: refused on every rank */
  CHECK(loom_decomposition_from_map(MPI_COMM_WORLD, 1, shape, 3, one_based, 1, &d) == LOOM_ERR_SELECTION && d == NULL);
  CHECK(loom_decomposition_from_file(MPI_COMM_WORLD, "/no/such/map.dat", &d) == LOOM_ERR_NOT_FOUND);
}

int main(int argc, char** argv) {
  int any = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
  if (argc != 4) {
    if (rank_ == 0) fprintf(stderr, "usage: test_capi_pio DIR SOURCE_DIR ENGINE\n");
    MPI_Finalize();
    return 2;
  }
  test_fcase(argv[1], argv[2], argv[3], LOOM_REARRANGER_BOX);
  test_fcase(argv[1], argv[2], argv[3], LOOM_REARRANGER_SUBSET);
  test_errors();
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("test_capi_pio (%s): %d checks, %d failed on some rank\n", argv[3], checks, any);
  MPI_Finalize();
  return any ? 1 : 0;
}
