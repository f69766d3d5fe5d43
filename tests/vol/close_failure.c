/* A failed close through the connector (the log engine cannot build its front
 * file: a directory is in the way) is reported by H5Fclose, and neither loses
 * data nor crashes the program later (HDF5 keeps an identifier whose close
 * failed and closes it again at exit). Then the file reopens through the
 * connector with every value. Serial: run it with
 * HDF5_VOL_CONNECTOR="h5loom log" HDF5_PLUGIN_PATH=... close_failure FILE */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const char* name = argv[1];
  char obstacle[4096], inside[4096];
  snprintf(obstacle, sizeof obstacle, "%s.loom/front.tmp", name);
  snprintf(inside, sizeof inside, "%s/x", obstacle);
  hsize_t n = 4;
  double v[4] = {1, 2, 3, 4}, back[4] = {0};
  hid_t f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t s = H5Screate_simple(1, &n, NULL);
  hid_t d = H5Dcreate2(f, "d", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0 || d < 0 || H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) return 1;
  H5Dclose(d);
  H5Sclose(s);
  if (mkdir(obstacle, 0755) != 0 || mkdir(inside, 0755) != 0) return 1;
  herr_t closed = -1;
  H5E_BEGIN_TRY { closed = H5Fclose(f); }
  H5E_END_TRY;
  if (closed >= 0) {
    fprintf(stderr, "H5Fclose succeeded although the front file could not be written\n");
    return 1;
  }
  rmdir(inside);
  rmdir(obstacle);
  f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT);
  d = f < 0 ? -1 : H5Dopen2(f, "d", H5P_DEFAULT);
  if (d < 0 || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0) return 1;
  H5Dclose(d);
  if (H5Fclose(f) < 0 || memcmp(v, back, sizeof v) != 0) {
    fprintf(stderr, "the values written before the failed close did not come back\n");
    return 1;
  }
  printf("a failed close was reported and lost nothing\n");
  return 0;
}
