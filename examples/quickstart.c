/* The C quick start: each rank writes its rows of a 2-D field; rank 0 reports.
 * Runs as one rank without mpirun, or under mpirun -n N. */
#include <h5loom/h5loom.h>
#include <stdio.h>

#define TRY(call) do { if ((call) != LOOM_OK) { fprintf(stderr, "%s\n", loom_last_error_message()); return 1; } } while (0)

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "quickstart_c.h5";
  loom_file* f;
  loom_group* root;
  loom_dataset* rho;
  int rank, size;
  TRY(loom_file_create(path, MPI_COMM_NULL, NULL, &f)); /* MPI_COMM_WORLD, engine from $H5LOOM_ENGINE or hdf5 */
  TRY(loom_file_rank(f, &rank, &size));
  TRY(loom_file_root(f, &root));
  uint64_t shape[2] = {4 * (uint64_t)size, 3}, start[2] = {4 * (uint64_t)rank, 0}, count[2] = {4, 3};
  TRY(loom_group_create_dataset(root, "fields/rho", LOOM_FLOAT64, 2, shape, NULL, NULL, &rho));
  double mine[12];
  for (int i = 0; i < 12; ++i) mine[i] = rank;
  loom_selection sel = loom_select_box(2, start, count);
  TRY(loom_dataset_write(rho, &sel, LOOM_FLOAT64, 12, mine, LOOM_WRITE_DEFERRED)); /* keep `mine` until close */
  TRY(loom_attr_write_string(rho, "units", "kg/m^3"));
  loom_object_close(rho);
  loom_object_close(root);
  TRY(loom_file_close(f)); /* flush point: the data moves here */
  if (rank == 0) printf("%s: wrote fields/rho [%d, 3] from %d rank(s)\n", path, 4 * size, size);
  return 0;
}
