/* HDF5's event sets through h5loom's VOL connector and the async wrapper
 * (HDF5_VOL_CONNECTOR="h5loom async+log"): a plain HDF5 program, no h5loom in
 * it. H5Dwrite_async returns with the buffer free (it is copied);
 * H5Fflush_async returns at once and H5ESwait completes it, collectively. A
 * flush that fails (the disk "fills": RLIMIT_FSIZE) is reported by H5ESwait on
 * every rank, and H5ESget_err_info names the write that failed; what the
 * first flush made durable stays readable. H5Fclose_async returns at once and
 * H5ESwait completes the close.
 *
 *   mpirun -n N vol_async FILE */
#include <hdf5.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

static int rank_ = 0, failures = 0;
#define CHECK(cond)                                                                    \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      ++failures;                                                                      \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank_, __FILE__, __LINE__, #cond); \
    }                                                                                  \
  } while (0)

static herr_t collect(unsigned n, const H5E_error2_t* e, void* out) {
  (void)n;
  if (e->desc) strncat((char*)out, e->desc, 4000 - strlen((char*)out));
  return 0;
}

/* Writes `count` doubles (value base + i) at this rank's slice of dataset `name`, asynchronously. */
static hid_t write_slice(hid_t file, const char* name, hsize_t count, double base, hid_t es) {
  int nranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  hsize_t shape = count * (hsize_t)nranks, start = count * (hsize_t)rank_;
  hid_t space = H5Screate_simple(1, &shape, NULL);
  hid_t ds = H5Dcreate2(file, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t mem = H5Screate_simple(1, &count, NULL);
  H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &count, NULL);
  static double buf[1 << 19];
  for (hsize_t i = 0; i < count; ++i) buf[i] = base + (double)(start + i);
  CHECK(H5Dwrite_async(ds, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf, es) >= 0);
  for (hsize_t i = 0; i < count; ++i) buf[i] = -1; /* reused at once: the write copied it */
  H5Sclose(mem);
  H5Sclose(space);
  return ds;
}

int main(int argc, char** argv) {
  int provided = 0, nranks = 1, total = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided); /* the async wrapper needs FUNNELED */
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const char* path = argc > 1 ? argv[1] : "vol_async.h5";
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  CHECK(file >= 0);
  hid_t es = H5EScreate();

  /* 1. A write and a flush through the event set. */
  hid_t x = write_slice(file, "x", 8, 0.5, es);
  CHECK(H5Fflush_async(file, H5F_SCOPE_GLOBAL, es) >= 0);
  size_t count = 0, in_progress = 99;
  hbool_t failed = 1;
  CHECK(H5ESget_count(es, &count) >= 0);
  CHECK(count == 1); /* the flush; the write completed in its call */
  CHECK(H5ESwait(es, H5ES_WAIT_FOREVER, &in_progress, &failed) >= 0);
  CHECK(in_progress == 0 && !failed);
  double back[64];
  CHECK(H5Dread(x, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0);
  for (int i = 0; i < 8 * nranks; ++i) CHECK(back[i] == 0.5 + i);
  H5Dclose(x);

  /* 2. The disk fills: the next flush fails on every rank, H5ESget_err_info says why. */
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim;
  getrlimit(RLIMIT_FSIZE, &lim);
  struct rlimit small = {1 << 20, lim.rlim_max};
  setrlimit(RLIMIT_FSIZE, &small);
  hid_t big = write_slice(file, "big", 1 << 19, 7.0, es); /* 4 MiB per rank: past the limit */
  CHECK(H5Fflush_async(file, H5F_SCOPE_GLOBAL, es) >= 0);
  H5E_BEGIN_TRY { CHECK(H5ESwait(es, H5ES_WAIT_FOREVER, &in_progress, &failed) >= 0); }
  H5E_END_TRY
  CHECK(failed);
  size_t nerr = 0;
  CHECK(H5ESget_err_count(es, &nerr) >= 0 && nerr == 1);
  H5ES_err_info_t info;
  size_t cleared = 0;
  if (H5ESget_err_info(es, 1, &info, &cleared) >= 0 && cleared == 1) {
    CHECK(strstr(info.api_name, "H5Fflush") != NULL);
    char messages[4001] = "";
    H5Ewalk2(info.err_stack_id, H5E_WALK_DOWNWARD, collect, messages);
    CHECK(strstr(messages, "big") != NULL || strstr(messages, "log") != NULL);
    if (rank_ == 0) printf("H5ESget_err_info: %s: %s\n", info.api_name, messages);
    H5ESfree_err_info(1, &info);
  } else {
    CHECK(0);
  }
  setrlimit(RLIMIT_FSIZE, &lim);
  H5E_BEGIN_TRY { H5Dclose(big); } /* a flush point of the unusable handle: it fails too */
  H5E_END_TRY
  H5E_BEGIN_TRY { H5Fclose(file); } /* the handle is unusable after the failed flush */
  H5E_END_TRY
  H5ESclose(es);

  /* 3. What the first flush made durable is there. */
  file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  CHECK(file >= 0);
  x = H5Dopen2(file, "x", H5P_DEFAULT);
  CHECK(H5Dread(x, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0);
  for (int i = 0; i < 8 * nranks; ++i) CHECK(back[i] == 0.5 + i);
  H5Dclose(x);
  H5Fclose(file);

  /* 4. A file per checkpoint: H5Fclose_async returns at once (its data moves
   * meanwhile) and H5ESwait completes the close, collectively. */
  char ckpt[1024];
  snprintf(ckpt, sizeof ckpt, "%s.ckpt", path);
  es = H5EScreate();
  file = H5Fcreate(ckpt, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  CHECK(file >= 0);
  x = write_slice(file, "c", 4096, 3.0, es);
  H5Dclose(x); /* the file is the last object: its close is the one that waits */
  CHECK(H5Fclose_async(file, es) >= 0);
  CHECK(H5ESget_count(es, &count) >= 0 && count == 1); /* the close */
  CHECK(H5ESwait(es, H5ES_WAIT_FOREVER, &in_progress, &failed) >= 0);
  CHECK(in_progress == 0 && !failed);
  H5ESclose(es);
  file = H5Fopen(ckpt, H5F_ACC_RDONLY, fapl);
  CHECK(file >= 0);
  x = H5Dopen2(file, "c", H5P_DEFAULT);
  static double c[4096 * 4];
  CHECK(nranks <= 4 && H5Dread(x, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, c) >= 0);
  for (int i = 0; i < 4096 * nranks; ++i) CHECK(c[i] == 3.0 + i);
  H5Dclose(x);
  H5Fclose(file);
  H5Pclose(fapl);
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("vol_async at %d rank(s): %d failed checks\n", nranks, total);
  MPI_Finalize();
  return total ? 1 : 0;
}
