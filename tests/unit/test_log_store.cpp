// The log engine's storage seam, POSIX implementation: full transfers, a short
// read is corruption, errors as errno values, the writer's lock, and
// transfers staged around slow page-aliased copies (core/memory_copy.hpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/memory_copy.hpp"
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

// Every placement of the caller's memory against the file offset: aliased
// ones (1..63 bytes past in a page) go through the staging buffer, in several
// pieces and a short last one; each must move exactly the caller's bytes.
TEST(LogStore, PageAliasedTransfersMoveTheRightBytes) {
  TempDir dir;
  LogStore& store = posix_store();
  auto o = store.open(dir / "f", LogStore::Access::Create);
  ASSERT_TRUE(o.file) << std::strerror(o.error);
  const std::size_t n = 300 * 1024 + 5;
  std::vector<unsigned char> memory(n + 3 * 4096);
  unsigned char* page = memory.data() + (4096 - reinterpret_cast<std::uintptr_t>(memory.data()) % 4096) % 4096;
  std::vector<unsigned char> want(n), got(n);
  int aliased = 0;
  for (uint64_t file_at : {uint64_t(0), uint64_t(16), uint64_t(8192 + 40)})
    for (std::size_t memory_at : {0, 8, 16, 48, 64, 100}) {
      for (std::size_t i = 0; i < n; ++i) want[i] = static_cast<unsigned char>(i * 7 + file_at + memory_at);
      unsigned char* p = page + memory_at;
      aliased += page_aliased(reinterpret_cast<std::uintptr_t>(p), std::uintptr_t(file_at)) ||
                 page_aliased(std::uintptr_t(file_at), reinterpret_cast<std::uintptr_t>(p));
      std::memcpy(p, want.data(), n);
      o.file->write(p, n, file_at, "writing");
      std::memset(p, 0xEE, n);
      o.file->read(p, n, file_at, "reading");
      ASSERT_EQ(std::memcmp(p, want.data(), n), 0) << "file offset " << file_at << ", memory at page + " << memory_at;
      o.file->read(got.data(), n, file_at, "reading");
      ASSERT_EQ(got, want);
    }
  EXPECT_GE(aliased, 6);  // the staged path was taken
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
