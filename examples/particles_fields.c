/* Steps with particles and a 2-D block field through the C API (plain C99).
 *   particles_fields_c FILE [openpmd|h5part]                                 */
#include <h5loom/h5loom.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define TRY(call)                                                       \
  do {                                                                  \
    if ((call) != LOOM_OK) {                                            \
      fprintf(stderr, "particles_fields: %s\n", loom_last_error_message()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                     \
    }                                                                   \
  } while (0)

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "particles_fields_c.h5";
  loom_series_layout layout = argc > 2 && strcmp(argv[2], "h5part") == 0 ? LOOM_SERIES_H5PART : LOOM_SERIES_OPENPMD;
  int rank, nranks;
  uint64_t step, offset, global, ny = 4, nx = 6;
  double x[100], local[6 * 8], back[4 * 6];
  loom_series* s;
  loom_step* st;
  loom_particles* p;
  loom_field* f;
  size_t i;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  TRY(loom_series_create(path, MPI_COMM_WORLD, NULL, layout, &s));
  for (step = 0; step < 2; ++step) {
    uint64_t shape[2] = {ny * (uint64_t)nranks, nx}; /* each rank a band of 4 rows */
    uint64_t local_shape[2] = {ny + 2, nx + 2}, at[2] = {ny * (uint64_t)rank, 0};
    TRY(loom_series_write_step(s, step, 0.1 * (double)step, 0.1, &st));
    TRY(loom_step_particles(st, "electrons", &p));
    TRY(loom_particles_set_local_count(p, 100, &offset, &global));
    for (i = 0; i < 100; ++i) x[i] = (double)(offset + i);
    TRY(loom_particles_write(p, "x", LOOM_FLOAT64, x));
    TRY(loom_particles_free(p));
    TRY(loom_step_create_field(st, "rho", 2, shape, 1, LOOM_FLOAT64, NULL, NULL, &f));
    for (i = 0; i < (ny + 2) * (nx + 2); ++i) local[i] = (double)rank; /* ghosts included, dropped on write */
    TRY(loom_field_write(f, 0, LOOM_FLOAT64, local, local_shape, at, 1));
    TRY(loom_field_free(f));
    TRY(loom_step_end(st)); /* flush point: x and local are used here */
    TRY(loom_step_free(st));
  }
  TRY(loom_series_close(s));

  TRY(loom_series_open(path, MPI_COMM_WORLD, NULL, &s));
  TRY(loom_series_step(s, 1, &st));
  TRY(loom_step_open_field(st, "rho", &f));
  {
    uint64_t lo[2] = {ny * (uint64_t)rank, 0}, count[2] = {ny, nx};
    TRY(loom_field_read(f, 0, LOOM_FLOAT64, lo, count, 0, NULL, back));
    for (i = 0; i < ny * nx; ++i)
      if (back[i] != (double)rank) {
        fprintf(stderr, "rank %d: wrong value %g\n", rank, back[i]);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
  }
  TRY(loom_field_free(f));
  TRY(loom_step_free(st));
  TRY(loom_series_close(s));
  if (rank == 0) printf("%s: 2 steps, %llu particles per step, field verified\n", path, (unsigned long long)global);
  MPI_Finalize();
  return 0;
}
