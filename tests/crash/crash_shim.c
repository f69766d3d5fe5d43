/* The recorder of the crash-state explorer (tests/crash/README.md): an
 * LD_PRELOAD shim that records every write-like system call a process makes on
 * files under $CRASH_DIR, in one global order across all the processes of a
 * run, so that crash_explore can rebuild the disk images a power loss could
 * leave.
 *
 *   CRASH_DIR=/abs/dir     record operations on this directory and below
 *   CRASH_TRACE=/abs/dir   where the trace goes (must exist; not under CRASH_DIR):
 *     seq          8 bytes, mmap'ed by every process: the global sequence number
 *     ops.<pid>    one text line per operation (format below)
 *     data.<pid>   the bytes written, back to back
 *
 * A line is "seq start kind id a b dataoff path [path2]":
 *   seq     the global number, taken once the call has returned (so an
 *           operation that returned before another started has a smaller one)
 *   start   for fsync/fdatasync/sync: the number taken before the call (the
 *           sync covers what returned before it); else equal to seq
 *   kind    mkdir create trunc write sfr fsync fdatasync rename unlink rmdir
 *           sync mark other
 *   id      st_ino of the file (or directory) the operation is on, 0 if none
 *   a, b    write: file offset and length; trunc: new length; sfr: offset, length
 *   dataoff write: where its bytes start in data.<pid>
 *   path    relative to CRASH_DIR ("." for CRASH_DIR itself); rename: "from to";
 *           mark: the text given to crash_shim_mark (no newline)
 * Read-only calls are not recorded. Everything is done with the real calls,
 * found with dlsym(RTLD_NEXT).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FDS 65536

static char g_dir[PATH_MAX];   /* CRASH_DIR, no trailing slash */
static size_t g_dir_len;
static int g_on;               /* recording */
static volatile uint64_t* g_seq;
static int g_ops_fd = -1, g_data_fd = -1;
static uint64_t g_data_off;
static pid_t g_pid;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* fd -> (inode, relative path) for files under CRASH_DIR. */
static struct {
  uint64_t ino;
  char* rel;
} g_fds[MAX_FDS];

/* The real functions. */
static int (*r_open)(const char*, int, ...);
static int (*r_open64)(const char*, int, ...);
static int (*r_openat)(int, const char*, int, ...);
static int (*r_openat64)(int, const char*, int, ...);
static int (*r_creat)(const char*, mode_t);
static int (*r_creat64)(const char*, mode_t);
static int (*r_close)(int);
static ssize_t (*r_write)(int, const void*, size_t);
static ssize_t (*r_pwrite)(int, const void*, size_t, off_t);
static ssize_t (*r_pwrite64)(int, const void*, size_t, off_t);
static ssize_t (*r_writev)(int, const struct iovec*, int);
static ssize_t (*r_pwritev)(int, const struct iovec*, int, off_t);
static ssize_t (*r_pwritev64)(int, const struct iovec*, int, off_t);
static ssize_t (*r_pwritev2)(int, const struct iovec*, int, off_t, int);
static int (*r_fsync)(int);
static int (*r_fdatasync)(int);
static int (*r_sync_file_range)(int, off64_t, off64_t, unsigned int);
static int (*r_ftruncate)(int, off_t);
static int (*r_ftruncate64)(int, off_t);
static int (*r_truncate)(const char*, off_t);
static int (*r_truncate64)(const char*, off_t);
static int (*r_rename)(const char*, const char*);
static int (*r_renameat)(int, const char*, int, const char*);
static int (*r_renameat2)(int, const char*, int, const char*, unsigned int);
static int (*r_unlink)(const char*);
static int (*r_unlinkat)(int, const char*, int);
static int (*r_rmdir)(const char*);
static int (*r_mkdir)(const char*, mode_t);
static int (*r_mkdirat)(int, const char*, mode_t);
static int (*r_fallocate)(int, int, off_t, off_t);
static int (*r_fallocate64)(int, int, off_t, off_t);
static int (*r_posix_fallocate)(int, off_t, off_t);
static int (*r_syncfs)(int);
static void (*r_sync)(void);

#define RESOLVE(name) r_##name = dlsym(RTLD_NEXT, #name)

static void resolve_all(void) {
  RESOLVE(open); RESOLVE(open64); RESOLVE(openat); RESOLVE(openat64); RESOLVE(creat); RESOLVE(creat64);
  RESOLVE(close); RESOLVE(write); RESOLVE(pwrite); RESOLVE(pwrite64); RESOLVE(writev); RESOLVE(pwritev);
  RESOLVE(pwritev64); RESOLVE(pwritev2); RESOLVE(fsync); RESOLVE(fdatasync); RESOLVE(sync_file_range);
  RESOLVE(ftruncate); RESOLVE(ftruncate64); RESOLVE(truncate); RESOLVE(truncate64); RESOLVE(rename);
  RESOLVE(renameat); RESOLVE(renameat2); RESOLVE(unlink); RESOLVE(unlinkat); RESOLVE(rmdir); RESOLVE(mkdir);
  RESOLVE(mkdirat); RESOLVE(fallocate); RESOLVE(fallocate64); RESOLVE(posix_fallocate); RESOLVE(syncfs);
  RESOLVE(sync);
}

static void die(const char* what) {
  char msg[512];
  int n = snprintf(msg, sizeof msg, "crash_shim[%d]: %s: %s\n", (int)getpid(), what, strerror(errno));
  if (n > 0) (void)!syscall(SYS_write, 2, msg, (size_t)n);
  _exit(99);
}

static void raw_write_all(int fd, const void* p, size_t n) {
  const char* c = p;
  while (n > 0) {
    ssize_t k = syscall(SYS_write, fd, c, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      die("writing the trace");
    }
    c += k, n -= (size_t)k;
  }
}

/* Opens this process's trace files (again after a fork). */
static void open_trace(void) {
  const char* tr = getenv("CRASH_TRACE");
  char p[PATH_MAX];
  g_pid = getpid();
  snprintf(p, sizeof p, "%s/ops.%d", tr, (int)g_pid);
  g_ops_fd = (int)syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (g_ops_fd < 0) die(p);
  snprintf(p, sizeof p, "%s/data.%d", tr, (int)g_pid);
  g_data_fd = (int)syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (g_data_fd < 0) die(p);
  g_data_off = 0;
}

__attribute__((constructor)) static void shim_init(void) {
  resolve_all();
  const char* dir = getenv("CRASH_DIR");
  const char* tr = getenv("CRASH_TRACE");
  if (!dir || !*dir || !tr || !*tr) return;
  if (dir[0] != '/' || tr[0] != '/') {
    errno = EINVAL;
    die("CRASH_DIR and CRASH_TRACE must be absolute paths");
  }
  g_dir_len = strlen(dir);
  while (g_dir_len > 1 && dir[g_dir_len - 1] == '/') --g_dir_len;
  if (g_dir_len >= sizeof g_dir) return;
  memcpy(g_dir, dir, g_dir_len);
  g_dir[g_dir_len] = 0;
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s/seq", tr);
  int fd = (int)syscall(SYS_openat, AT_FDCWD, p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) die(p);
  if (syscall(SYS_ftruncate, fd, 4096) != 0) die("sizing the sequence file");
  void* m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) die("mapping the sequence file");
  syscall(SYS_close, fd);
  g_seq = (volatile uint64_t*)m;
  open_trace();
  g_on = 1;
}

static uint64_t next_seq(void) { return __atomic_fetch_add(g_seq, 1, __ATOMIC_SEQ_CST); }

/* The path relative to CRASH_DIR of `path` (relative to dirfd), or NULL if it
 * is not under CRASH_DIR. Lexical only ("." and ".." components are folded);
 * the writer passes absolute paths without symbolic links. */
static char* relative(int dirfd, const char* path, char* buf, size_t cap) {
  char full[PATH_MAX * 2];
  if (!path) return NULL;
  if (path[0] == '/') {
    snprintf(full, sizeof full, "%s", path);
  } else {
    char base[PATH_MAX];
    if (dirfd == AT_FDCWD) {
      if (!getcwd(base, sizeof base)) return NULL;
    } else {
      char link[64];
      snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
      ssize_t n = readlink(link, base, sizeof base - 1);
      if (n < 0) return NULL;
      base[n] = 0;
    }
    snprintf(full, sizeof full, "%s/%s", base, path);
  }
  /* fold "//", "/./" and "/x/../" */
  char norm[PATH_MAX * 2];
  size_t n = 0;
  const char* s = full;
  while (*s) {
    while (*s == '/') ++s;
    if (!*s) break;
    const char* e = s;
    while (*e && *e != '/') ++e;
    size_t len = (size_t)(e - s);
    if (len == 1 && s[0] == '.') {
    } else if (len == 2 && s[0] == '.' && s[1] == '.') {
      while (n > 0 && norm[n - 1] != '/') --n;
      if (n > 0) --n;
    } else {
      if (n + len + 2 >= sizeof norm) return NULL;
      norm[n++] = '/';
      memcpy(norm + n, s, len);
      n += len;
    }
    s = e;
  }
  norm[n] = 0;
  if (n == 0) norm[0] = '/', norm[1] = 0, n = 1;
  if (strncmp(norm, g_dir, g_dir_len) != 0) return NULL;
  if (norm[g_dir_len] == 0) {
    snprintf(buf, cap, ".");
    return buf;
  }
  if (norm[g_dir_len] != '/') return NULL;
  snprintf(buf, cap, "%s", norm + g_dir_len + 1);
  return buf;
}

static void emit(uint64_t seq, uint64_t start, const char* kind, uint64_t id, uint64_t a, uint64_t b,
                 uint64_t dataoff, const char* path, const char* path2) {
  char line[PATH_MAX * 2 + 256];
  int n = snprintf(line, sizeof line, "%llu %llu %s %llu %llu %llu %llu %s%s%s\n", (unsigned long long)seq,
                   (unsigned long long)start, kind, (unsigned long long)id, (unsigned long long)a,
                   (unsigned long long)b, (unsigned long long)dataoff, path ? path : "-", path2 ? " " : "",
                   path2 ? path2 : "");
  if (n < 0 || (size_t)n >= sizeof line) {
    errno = ENAMETOOLONG;
    die("a trace line");
  }
  raw_write_all(g_ops_fd, line, (size_t)n);
}

/* Called with g_lock held. */
static void check_fork(void) {
  if (getpid() != g_pid) open_trace();
}

static uint64_t ino_of_fd(int fd) {
  struct stat sb;
  return syscall(SYS_fstat, fd, &sb) == 0 ? (uint64_t)sb.st_ino : 0;
}

static uint64_t ino_of_path(const char* p) {
  struct stat sb;
  return syscall(SYS_newfstatat, AT_FDCWD, p, &sb, AT_SYMLINK_NOFOLLOW) == 0 ? (uint64_t)sb.st_ino : 0;
}

static int tracked(int fd) { return g_on && fd >= 0 && fd < MAX_FDS && g_fds[fd].rel; }

/* Records the writes of [iov, iovcnt) up to `done` bytes at file offset `off`. */
static void record_write(int fd, const struct iovec* iov, int iovcnt, uint64_t off, size_t done) {
  if (done == 0) return;
  pthread_mutex_lock(&g_lock);
  check_fork();
  uint64_t at = g_data_off;
  size_t left = done;
  for (int i = 0; i < iovcnt && left > 0; ++i) {
    size_t k = iov[i].iov_len < left ? iov[i].iov_len : left;
    raw_write_all(g_data_fd, iov[i].iov_base, k);
    left -= k;
  }
  g_data_off += done;
  uint64_t s = next_seq();
  emit(s, s, "write", g_fds[fd].ino, off, done, at, g_fds[fd].rel, NULL);
  pthread_mutex_unlock(&g_lock);
}

static void record_simple(const char* kind, uint64_t id, uint64_t a, uint64_t b, const char* path,
                          const char* path2) {
  pthread_mutex_lock(&g_lock);
  check_fork();
  uint64_t s = next_seq();
  emit(s, s, kind, id, a, b, 0, path, path2);
  pthread_mutex_unlock(&g_lock);
}

/* For a shim-initiated lseek/fcntl. */
static uint64_t current_offset(int fd, size_t n) {
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0 && (fl & O_APPEND)) {
    struct stat sb;
    if (syscall(SYS_fstat, fd, &sb) == 0) return (uint64_t)sb.st_size;
  }
  (void)n;
  off_t o = lseek(fd, 0, SEEK_CUR);
  return o < 0 ? 0 : (uint64_t)o;
}

/* ---- open ---- */

static int after_open(int fd, int dirfd, const char* path, int flags, int existed, const char* rel) {
  if (fd < 0 || !rel) return fd;
  if (fd >= MAX_FDS) return fd;
  uint64_t ino = ino_of_fd(fd);
  free(g_fds[fd].rel);
  g_fds[fd].rel = strdup(rel);
  g_fds[fd].ino = ino;
  (void)dirfd, (void)path;
  if ((flags & O_CREAT) && !existed)
    record_simple("create", ino, 0, 0, rel, NULL);
  else if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY)
    record_simple("trunc", ino, 0, 0, rel, NULL);
  return fd;
}

static int do_open(int dirfd, const char* path, int flags, mode_t mode, int (*real)(int, const char*, int, ...)) {
  char buf[PATH_MAX];
  const char* rel = g_on ? relative(dirfd, path, buf, sizeof buf) : NULL;
  int existed = 1;
  if (rel && (flags & O_CREAT)) {
    struct stat sb;
    existed = syscall(SYS_newfstatat, dirfd, path, &sb, 0) == 0;
  }
  int fd = real(dirfd, path, flags, mode);
  int e = errno;
  after_open(fd, dirfd, path, flags, existed, rel);
  errno = e;
  return fd;
}

static mode_t mode_arg(int flags, va_list ap) {
  return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

static int via_open(int dirfd, const char* p, int f, ...) {
  va_list ap;
  va_start(ap, f);
  mode_t m = mode_arg(f, ap);
  va_end(ap);
  (void)dirfd;
  return r_open(p, f, m);
}
static int via_open64(int dirfd, const char* p, int f, ...) {
  va_list ap;
  va_start(ap, f);
  mode_t m = mode_arg(f, ap);
  va_end(ap);
  (void)dirfd;
  return r_open64 ? r_open64(p, f, m) : r_open(p, f, m);
}
static int via_openat(int dirfd, const char* p, int f, ...) {
  va_list ap;
  va_start(ap, f);
  mode_t m = mode_arg(f, ap);
  va_end(ap);
  return r_openat(dirfd, p, f, m);
}
static int via_openat64(int dirfd, const char* p, int f, ...) {
  va_list ap;
  va_start(ap, f);
  mode_t m = mode_arg(f, ap);
  va_end(ap);
  return r_openat64 ? r_openat64(dirfd, p, f, m) : r_openat(dirfd, p, f, m);
}

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  if (!r_open) resolve_all();
  return do_open(AT_FDCWD, path, flags, m, via_open);
}
int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  if (!r_open) resolve_all();
  return do_open(AT_FDCWD, path, flags, m, via_open64);
}
int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  if (!r_open) resolve_all();
  return do_open(dirfd, path, flags, m, via_openat);
}
int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  if (!r_open) resolve_all();
  return do_open(dirfd, path, flags, m, via_openat64);
}
int creat(const char* path, mode_t mode) { return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode); }
int creat64(const char* path, mode_t mode) { return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode); }

int close(int fd) {
  if (!r_close) resolve_all();
  if (fd >= 0 && fd < MAX_FDS && g_fds[fd].rel) {
    pthread_mutex_lock(&g_lock);
    free(g_fds[fd].rel);
    g_fds[fd].rel = NULL;
    pthread_mutex_unlock(&g_lock);
  }
  return r_close(fd);
}

/* ---- writes ---- */

ssize_t write(int fd, const void* buf, size_t n) {
  if (!r_write) resolve_all();
  if (!tracked(fd)) return r_write(fd, buf, n);
  uint64_t off = current_offset(fd, n);
  ssize_t k = r_write(fd, buf, n);
  int e = errno;
  if (k > 0) {
    struct iovec v = {(void*)buf, (size_t)k};
    record_write(fd, &v, 1, off, (size_t)k);
  }
  errno = e;
  return k;
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  ssize_t k = r_pwrite(fd, buf, n, off);
  if (k > 0 && tracked(fd)) {
    int e = errno;
    struct iovec v = {(void*)buf, (size_t)k};
    record_write(fd, &v, 1, (uint64_t)off, (size_t)k);
    errno = e;
  }
  return k;
}
ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
  ssize_t k = (r_pwrite64 ? r_pwrite64 : r_pwrite)(fd, buf, n, off);
  if (k > 0 && tracked(fd)) {
    int e = errno;
    struct iovec v = {(void*)buf, (size_t)k};
    record_write(fd, &v, 1, (uint64_t)off, (size_t)k);
    errno = e;
  }
  return k;
}

ssize_t writev(int fd, const struct iovec* iov, int cnt) {
  if (!tracked(fd)) return r_writev(fd, iov, cnt);
  uint64_t off = current_offset(fd, 0);
  ssize_t k = r_writev(fd, iov, cnt);
  int e = errno;
  if (k > 0) record_write(fd, iov, cnt, off, (size_t)k);
  errno = e;
  return k;
}
ssize_t pwritev(int fd, const struct iovec* iov, int cnt, off_t off) {
  ssize_t k = r_pwritev(fd, iov, cnt, off);
  if (k > 0 && tracked(fd)) {
    int e = errno;
    record_write(fd, iov, cnt, (uint64_t)off, (size_t)k);
    errno = e;
  }
  return k;
}
ssize_t pwritev64(int fd, const struct iovec* iov, int cnt, off_t off) {
  ssize_t k = (r_pwritev64 ? r_pwritev64 : r_pwritev)(fd, iov, cnt, off);
  if (k > 0 && tracked(fd)) {
    int e = errno;
    record_write(fd, iov, cnt, (uint64_t)off, (size_t)k);
    errno = e;
  }
  return k;
}
ssize_t pwritev2(int fd, const struct iovec* iov, int cnt, off_t off, int flags) {
  uint64_t at = off == -1 && tracked(fd) ? current_offset(fd, 0) : (uint64_t)off;
  ssize_t k = r_pwritev2(fd, iov, cnt, off, flags);
  if (k > 0 && tracked(fd)) {
    int e = errno;
    record_write(fd, iov, cnt, at, (size_t)k);
    errno = e;
  }
  return k;
}

/* ---- syncs ---- */

static int do_sync(int fd, const char* kind, int (*real)(int)) {
  if (!tracked(fd)) return real(fd);
  uint64_t start = next_seq();
  int rc = real(fd);
  int e = errno;
  if (rc == 0) {
    pthread_mutex_lock(&g_lock);
    check_fork();
    uint64_t s = next_seq();
    emit(s, start, kind, g_fds[fd].ino, 0, 0, 0, g_fds[fd].rel, NULL);
    pthread_mutex_unlock(&g_lock);
  }
  errno = e;
  return rc;
}
int fsync(int fd) { return do_sync(fd, "fsync", r_fsync); }
int fdatasync(int fd) { return do_sync(fd, "fdatasync", r_fdatasync); }
int syncfs(int fd) {
  if (!g_on) return r_syncfs(fd);
  uint64_t start = next_seq();
  int rc = r_syncfs(fd);
  if (rc == 0) {
    pthread_mutex_lock(&g_lock);
    check_fork();
    uint64_t s = next_seq();
    emit(s, start, "sync", 0, 0, 0, 0, ".", NULL);
    pthread_mutex_unlock(&g_lock);
  }
  return rc;
}
void sync(void) {
  if (!g_on) {
    r_sync();
    return;
  }
  uint64_t start = next_seq();
  r_sync();
  pthread_mutex_lock(&g_lock);
  check_fork();
  uint64_t s = next_seq();
  emit(s, start, "sync", 0, 0, 0, 0, ".", NULL);
  pthread_mutex_unlock(&g_lock);
}

int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags) {
  int rc = r_sync_file_range(fd, off, n, flags);
  if (rc == 0 && tracked(fd)) {
    int e = errno;
    record_simple("sfr", g_fds[fd].ino, (uint64_t)off, (uint64_t)n, g_fds[fd].rel, NULL);
    errno = e;
  }
  return rc;
}

/* ---- sizes ---- */

static int do_ftruncate(int fd, off_t len, int (*real)(int, off_t)) {
  int rc = real(fd, len);
  if (rc == 0 && tracked(fd)) {
    int e = errno;
    record_simple("trunc", g_fds[fd].ino, (uint64_t)len, 0, g_fds[fd].rel, NULL);
    errno = e;
  }
  return rc;
}
int ftruncate(int fd, off_t len) { return do_ftruncate(fd, len, r_ftruncate); }
int ftruncate64(int fd, off_t len) { return do_ftruncate(fd, len, r_ftruncate64 ? r_ftruncate64 : r_ftruncate); }

static int do_truncate(const char* path, off_t len, int (*real)(const char*, off_t)) {
  char buf[PATH_MAX];
  const char* rel = g_on ? relative(AT_FDCWD, path, buf, sizeof buf) : NULL;
  int rc = real(path, len);
  if (rc == 0 && rel) {
    int e = errno;
    record_simple("trunc", ino_of_path(path), (uint64_t)len, 0, rel, NULL);
    errno = e;
  }
  return rc;
}
int truncate(const char* path, off_t len) { return do_truncate(path, len, r_truncate); }
int truncate64(const char* path, off_t len) { return do_truncate(path, len, r_truncate64 ? r_truncate64 : r_truncate); }

/* Space reservation is not expected from the engine: recorded as "other", which
 * the explorer refuses to model. */
int fallocate(int fd, int mode, off_t off, off_t len) {
  int rc = r_fallocate(fd, mode, off, len);
  if (rc == 0 && tracked(fd)) record_simple("other", g_fds[fd].ino, (uint64_t)off, (uint64_t)len, g_fds[fd].rel, NULL);
  return rc;
}
int fallocate64(int fd, int mode, off_t off, off_t len) {
  int rc = (r_fallocate64 ? r_fallocate64 : r_fallocate)(fd, mode, off, len);
  if (rc == 0 && tracked(fd)) record_simple("other", g_fds[fd].ino, (uint64_t)off, (uint64_t)len, g_fds[fd].rel, NULL);
  return rc;
}
int posix_fallocate(int fd, off_t off, off_t len) {
  int rc = r_posix_fallocate(fd, off, len);
  if (rc == 0 && tracked(fd)) record_simple("other", g_fds[fd].ino, (uint64_t)off, (uint64_t)len, g_fds[fd].rel, NULL);
  return rc;
}

/* ---- names ---- */

static int do_rename(int ofd, const char* from, int nfd, const char* to, int (*call)(void*), void* ctx) {
  char b1[PATH_MAX], b2[PATH_MAX];
  const char* r1 = g_on ? relative(ofd, from, b1, sizeof b1) : NULL;
  const char* r2 = g_on ? relative(nfd, to, b2, sizeof b2) : NULL;
  uint64_t ino = (r1 || r2) ? ino_of_path(from) : 0;
  int rc = call(ctx);
  int e = errno;
  if (rc == 0 && (r1 || r2)) {
    /* A move into or out of the directory is not modelled. */
    record_simple(r1 && r2 ? "rename" : "other", ino, 0, 0, r1 ? r1 : "-", r2 ? r2 : "-");
  }
  errno = e;
  return rc;
}
struct rn { int ofd; const char* from; int nfd; const char* to; unsigned fl; int kind; };
static int rn_call(void* p) {
  struct rn* r = p;
  if (r->kind == 0) return r_rename(r->from, r->to);
  if (r->kind == 1) return r_renameat(r->ofd, r->from, r->nfd, r->to);
  return r_renameat2(r->ofd, r->from, r->nfd, r->to, r->fl);
}
int rename(const char* from, const char* to) {
  struct rn r = {AT_FDCWD, from, AT_FDCWD, to, 0, 0};
  return do_rename(AT_FDCWD, from, AT_FDCWD, to, rn_call, &r);
}
int renameat(int ofd, const char* from, int nfd, const char* to) {
  struct rn r = {ofd, from, nfd, to, 0, 1};
  return do_rename(ofd, from, nfd, to, rn_call, &r);
}
int renameat2(int ofd, const char* from, int nfd, const char* to, unsigned int fl) {
  struct rn r = {ofd, from, nfd, to, fl, 2};
  return do_rename(ofd, from, nfd, to, rn_call, &r);
}

int unlink(const char* path) {
  char buf[PATH_MAX];
  const char* rel = g_on ? relative(AT_FDCWD, path, buf, sizeof buf) : NULL;
  uint64_t ino = rel ? ino_of_path(path) : 0;
  int rc = r_unlink(path);
  int e = errno;
  if (rc == 0 && rel) record_simple("unlink", ino, 0, 0, rel, NULL);
  errno = e;
  return rc;
}
int unlinkat(int dirfd, const char* path, int flags) {
  char buf[PATH_MAX];
  const char* rel = g_on ? relative(dirfd, path, buf, sizeof buf) : NULL;
  struct stat sb;
  uint64_t ino = rel && syscall(SYS_newfstatat, dirfd, path, &sb, AT_SYMLINK_NOFOLLOW) == 0 ? (uint64_t)sb.st_ino : 0;
  int rc = r_unlinkat(dirfd, path, flags);
  int e = errno;
  if (rc == 0 && rel) record_simple((flags & AT_REMOVEDIR) ? "rmdir" : "unlink", ino, 0, 0, rel, NULL);
  errno = e;
  return rc;
}
int rmdir(const char* path) {
  char buf[PATH_MAX];
  const char* rel = g_on ? relative(AT_FDCWD, path, buf, sizeof buf) : NULL;
  uint64_t ino = rel ? ino_of_path(path) : 0;
  int rc = r_rmdir(path);
  int e = errno;
  if (rc == 0 && rel) record_simple("rmdir", ino, 0, 0, rel, NULL);
  errno = e;
  return rc;
}
int mkdir(const char* path, mode_t mode) {
  char buf[PATH_MAX];
  const char* rel = g_on ? relative(AT_FDCWD, path, buf, sizeof buf) : NULL;
  int rc = r_mkdir(path, mode);
  int e = errno;
  if (rc == 0 && rel) record_simple("mkdir", ino_of_path(path), 0, 0, rel, NULL);
  errno = e;
  return rc;
}
int mkdirat(int dirfd, const char* path, mode_t mode) {
  char buf[PATH_MAX];
  const char* rel = g_on ? relative(dirfd, path, buf, sizeof buf) : NULL;
  int rc = r_mkdirat(dirfd, path, mode);
  int e = errno;
  if (rc == 0 && rel) {
    struct stat sb;
    uint64_t ino = syscall(SYS_newfstatat, dirfd, path, &sb, 0) == 0 ? (uint64_t)sb.st_ino : 0;
    record_simple("mkdir", ino, 0, 0, rel, NULL);
  }
  errno = e;
  return rc;
}

/* ---- the writer's markers ---- */

/* Records `text` (e.g. "step 3") at this point of the global order. Found by
 * the writer with dlsym(RTLD_DEFAULT, "crash_shim_mark"). */
__attribute__((visibility("default"))) void crash_shim_mark(const char* text) {
  if (!g_on) return;
  char clean[512];
  size_t i = 0;
  for (; text[i] && i + 1 < sizeof clean; ++i) clean[i] = (text[i] == '\n' || text[i] == ' ') ? '_' : text[i];
  clean[i] = 0;
  record_simple("mark", 0, 0, 0, clean, NULL);
}
