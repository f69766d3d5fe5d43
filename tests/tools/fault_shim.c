/* An LD_PRELOAD shim for the data-safety tests: makes pwrite or fdatasync on
 * one file fail, as a full disk or a failing device would.
 *
 *   H5LOOM_FAULT_CALL   pwrite | fdatasync
 *   H5LOOM_FAULT_PATH   a substring of the path of the file (e.g. ".loom/commits")
 *   H5LOOM_FAULT_SKIP   matching calls that succeed before the first failure (default 0)
 *   H5LOOM_FAULT_TIMES  matching calls that fail after them (default: every one)
 *   H5LOOM_FAULT_ERRNO  the errno to fail with (default EIO)
 *
 * Every matching call after the skipped ones fails, or the first TIMES of them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int fault_here(const char *call, int fd) {
  const char *want = getenv("H5LOOM_FAULT_CALL"), *path = getenv("H5LOOM_FAULT_PATH");
  if (!want || strcmp(want, call) != 0 || !path) return 0;
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  if (!strstr(target, path)) return 0;
  static long seen = 0;
  const char *skip = getenv("H5LOOM_FAULT_SKIP");
  const long skipped = skip ? atol(skip) : 0, index = seen++;
  if (index < skipped) return 0;
  const char *times = getenv("H5LOOM_FAULT_TIMES");
  if (times && index - skipped >= atol(times)) return 0;
  const char *e = getenv("H5LOOM_FAULT_ERRNO");
  errno = e ? atoi(e) : EIO;
  return 1;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t offset) {
  static ssize_t (*real)(int, const void *, size_t, off_t);
  if (!real) real = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  if (fault_here("pwrite", fd)) return -1;
  return real(fd, buf, n, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t offset) { return pwrite(fd, buf, n, offset); }

int fdatasync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  if (fault_here("fdatasync", fd)) return -1;
  return real(fd);
}
