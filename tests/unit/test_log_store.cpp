// The log engine's storage seam, POSIX implementation: full transfers, a short
// read is corruption, errors as errno values, and the writer's lock.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "engines/log/log_store.hpp"
#include "h5loom/errors.hpp"

using namespace h5loom;
using namespace h5loom::logengine;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("h5loom-store-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

}  // namespace

TEST(LogStore, WritesAndReadsAtOffsets) {
  TempDir dir;
  LogStore& store = posix_store();
  auto o = store.open(dir / "f", LogStore::Access::Create);
  ASSERT_TRUE(o.file) << std::strerror(o.error);
  const std::string a = "header", b = "block";
  o.file->write(a.data(), a.size(), 0, "writing");
  o.file->write(b.data(), b.size(), 4096, "writing");  // leaves a hole
  EXPECT_EQ(o.file->size(), 4096 + b.size());
  EXPECT_EQ(o.file->sync(), 0);
  EXPECT_EQ(o.file->sync(/*with_metadata=*/true), 0);
  o.file->start_write_back(0, 8192);  // a hint, on a range past the end too

  auto r = store.open(dir / "f", LogStore::Access::Read);
  ASSERT_TRUE(r.file);
  std::string got(b.size(), '\0');
  r.file->read(got.data(), got.size(), 4096, "reading");
  EXPECT_EQ(got, b);
  char hole[4] = {1, 1, 1, 1};
  r.file->read(hole, 4, 100, "reading");
  EXPECT_EQ(std::string(hole, 4), std::string(4, '\0'));
  // A file that ends before the bytes a record promised is corruption.
  std::string past(10, '\0');
  EXPECT_THROW(r.file->read(past.data(), past.size(), 4096, "reading"), CorruptionError);
  EXPECT_EQ(r.file->read_some(past.data(), past.size(), 4096), b.size());
  EXPECT_THROW(r.file->write(a.data(), a.size(), 0, "writing a read-only file"), IOError);

  EXPECT_EQ(o.file->truncate(3), 0);
  EXPECT_EQ(r.file->size(), 3u);
}

TEST(LogStore, ReportsFailuresAsErrno) {
  TempDir dir;
  LogStore& store = posix_store();
  auto missing = store.open(dir / "missing", LogStore::Access::Read);
  EXPECT_FALSE(missing.file);
  EXPECT_EQ(missing.error, ENOENT);
  EXPECT_EQ(store.remove(dir / "missing"), ENOENT);
  EXPECT_FALSE(store.exists(dir / "missing"));

  EXPECT_EQ(store.make_directories(dir / "a/b"), 0);
  auto d = store.open(dir / "a/b", LogStore::Access::Directory);
  ASSERT_TRUE(d.file);
  EXPECT_EQ(d.file->sync(/*with_metadata=*/true), 0);
  EXPECT_TRUE(store.open(dir / "a/b/x", LogStore::Access::Create).file);
  EXPECT_EQ(store.rename(dir / "a/b/x", dir / "y"), 0);
  EXPECT_TRUE(store.exists(dir / "y"));
  EXPECT_FALSE(store.exists(dir / "a/b/x"));
  EXPECT_EQ(store.remove(dir / "y"), 0);
  EXPECT_EQ(with_reason("doing it", ENOENT), std::string("doing it: ") + std::strerror(ENOENT));
}

TEST(LogStore, OneLockHolderAtATime) {
  TempDir dir;
  LogStore& store = posix_store();
  auto first = store.lock(dir / "lock");
  ASSERT_TRUE(first.file);
  EXPECT_FALSE(first.held_by_other);
  // Locks belong to open files, not processes: a second open of it sees it held.
  auto second = store.lock(dir / "lock");
  ASSERT_TRUE(second.file);
  EXPECT_TRUE(second.held_by_other);
  second.file.reset();
  first.file.reset();  // closing it lets go
  auto third = store.lock(dir / "lock");
  ASSERT_TRUE(third.file);
  EXPECT_FALSE(third.held_by_other);
  auto nowhere = store.lock(dir / "no/such/dir/lock");
  EXPECT_FALSE(nowhere.file);
  EXPECT_EQ(nowhere.error, ENOENT);
}
