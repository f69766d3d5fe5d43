/* The series part of the C API in plain C99: steps, particles (a rank with none),
 * a field with ghosts and a halo read, in both layouts. Run at 1 and 2 ranks. */
#include <h5loom/h5loom.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank_ = 0, nranks_ = 1, checks = 0, failures = 0;
#define CHECK(cond)                                                                                          \
  do {                                                                                                       \
    ++checks;                                                                                                \
    if (!(cond)) {                                                                                           \
      ++failures;                                                                                            \
      fprintf(stderr, "rank %d: %s:%d: CHECK failed: %s (%s)\n", rank_, __FILE__, __LINE__, #cond,            \
              loom_last_error_message());                                                                    \
    }                                                                                                        \
  } while (0)
#define OK(call) CHECK((call) == LOOM_OK)

static void run(const char* path, loom_series_layout layout) {
  loom_series* s = NULL;
  loom_step* st = NULL;
  loom_particles* p = NULL;
  loom_field* f = NULL;
  uint64_t mine = rank_ == 1 ? 0 : 3, offset = 99, global = 0, step;
  uint64_t nx = 4 * (uint64_t)nranks_, shape[2] = {3, 4 * (uint64_t)nranks_};
  double x[3], local[5 * 6];
  int i, j;

  OK(loom_series_create(path, MPI_COMM_WORLD, NULL, layout, &s));
  for (step = 0; step < 2; ++step) {
    OK(loom_series_write_step(s, step, 0.5 * (double)step, 0.5, &st));
    OK(loom_step_particles(st, "electrons", &p));
    OK(loom_particles_set_local_count(p, mine, &offset, &global));
    CHECK(offset == (rank_ >= 1 ? 3u : 0u));
    CHECK(global == 3 * (uint64_t)(nranks_ > 1 ? nranks_ - 1 : 1));
    for (i = 0; i < 3; ++i) x[i] = (double)(offset + (uint64_t)i) + 100.0 * (double)step;
    OK(loom_particles_write(p, "x", LOOM_FLOAT64, x));
    OK(loom_particles_free(p));
    /* a 2-D field, each rank a 3 x 4 box of columns, one ghost cell around it */
    OK(loom_step_create_field(st, "rho", 2, shape, 1, LOOM_FLOAT64, NULL, NULL, &f));
    for (i = 0; i < 5; ++i)
      for (j = 0; j < 6; ++j)
        local[i * 6 + j] = (i == 0 || i == 4 || j == 0 || j == 5) ? -1.0 : (i - 1) * 100.0 + (4.0 * rank_ + j - 1);
    {
      uint64_t lshape[2] = {5, 6}, at[2] = {0, 4 * (uint64_t)rank_};
      OK(loom_field_write(f, 0, LOOM_FLOAT64, local, lshape, at, 1));
    }
    OK(loom_field_free(f));
    OK(loom_step_end(st)); /* x and local are read here */
    OK(loom_step_free(st));
  }
  OK(loom_series_close(s));

  OK(loom_series_open(path, MPI_COMM_WORLD, NULL, &s));
  {
    loom_series_layout l;
    size_t n = 0;
    uint64_t number = 0, b = 0, e = 0, total = 0;
    double t = 0, dt = 0, back[16], halo[5 * 6], fill = -7.0;
    uint64_t idx[2] = {0, 2};
    int ndim = 0, comps = 0;
    uint64_t fshape[LOOM_MAX_RANK];
    OK(loom_series_layout_of(s, &l));
    CHECK(l == layout);
    OK(loom_series_step_count(s, &n));
    CHECK(n == 2);
    OK(loom_series_step_number(s, 1, &number));
    CHECK(number == 1);
    OK(loom_series_step(s, 1, &st));
    OK(loom_step_time(st, &t, &dt));
    CHECK(t == 0.5 && dt == 0.5);
    OK(loom_step_particles(st, "electrons", &p));
    OK(loom_particles_global_count(p, &total));
    CHECK(total == global);
    OK(loom_particles_read_range(p, "x", LOOM_FLOAT64, 0, total, back));
    for (i = 0; i < (int)total; ++i) CHECK(back[i] == i + 100.0);
    OK(loom_particles_read_indices(p, "x", LOOM_FLOAT64, 2, idx, back));
    CHECK(back[0] == 100.0 && back[1] == 102.0);
    OK(loom_particles_my_share(p, &b, &e));
    CHECK(e >= b && e <= total);
    CHECK(loom_particles_read_range(p, "nope", LOOM_FLOAT64, 0, 1, back) == LOOM_ERR_NOT_FOUND);
    OK(loom_particles_free(p));
    OK(loom_step_open_field(st, "rho", &f));
    OK(loom_field_info(f, &ndim, fshape, &comps, NULL));
    CHECK(ndim == 2 && fshape[0] == 3 && fshape[1] == nx && comps == 1);
    {
      uint64_t lo[2] = {0, 4 * (uint64_t)rank_}, count[2] = {3, 4};
      OK(loom_field_read(f, 0, LOOM_FLOAT64, lo, count, 1, &fill, halo));
      for (i = 0; i < 5; ++i)
        for (j = 0; j < 6; ++j) {
          long gz = i - 1, gx = 4L * rank_ + j - 1;
          double want = (gz < 0 || gz >= 3 || gx < 0 || gx >= (long)nx) ? -7.0 : gz * 100.0 + gx;
          CHECK(halo[i * 6 + j] == want);
        }
    }
    OK(loom_field_free(f));
    OK(loom_step_free(st));
    CHECK(loom_series_step(s, 9, &st) == LOOM_ERR_NOT_FOUND);
    CHECK(strstr(loom_last_error_message(), "step 9") != NULL);
  }
  OK(loom_series_close(s));
}

int main(int argc, char** argv) {
  char path[600];
  int total = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
  snprintf(path, sizeof path, "%s/capi-series-openpmd-np%d.h5", argc > 1 ? argv[1] : ".", nranks_);
  run(path, LOOM_SERIES_OPENPMD);
  snprintf(path, sizeof path, "%s/capi-series-h5part-np%d.h5", argc > 1 ? argv[1] : ".", nranks_);
  run(path, LOOM_SERIES_H5PART);
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("C series API tests at %d rank(s): %d checks per rank, %d failed in all\n", nranks_, checks, total);
  MPI_Finalize();
  return total ? 1 : 0;
}
