// Conformance group "file": create, open, reopen, truncate, flush, communicators.
#include <numeric>

#include "conformance.hpp"

using namespace h5loom;
using conformance::env;
H5LOOM_CONFORMANCE_GROUP(file, "file");

TEST_F(file, CreateWriteCloseReopenRead) {
  auto path = file_path();
  {
    auto f = File::create(path, options());
    EXPECT_TRUE(f.is_open());
    EXPECT_EQ(f.mode(), Mode::Create);
    EXPECT_EQ(f.size(), nranks());
    EXPECT_EQ(f.rank(), rank());
    auto ds = f.create_dataset<int32_t>("values", {uint64_t(nranks()) * 4});
    std::vector<int32_t> mine(4);
    std::iota(mine.begin(), mine.end(), rank() * 4);
    ds.write(Selection::box({uint64_t(rank()) * 4}, {4}), mine);
    f.close();
    EXPECT_FALSE(f.is_open());
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.mode(), Mode::Read);
  auto all = f.dataset("values").read<int32_t>();
  ASSERT_EQ(all.size(), size_t(nranks()) * 4);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], int32_t(i));
}

TEST_F(file, CreateTruncatesAnExistingFile) {
  auto path = file_path();
  {
    auto f = File::create(path, options());
    f.create_group("old");
  }
  auto f = File::create(path, options());
  EXPECT_FALSE(f.exists("old"));
  EXPECT_TRUE(f.list().empty());
}

TEST_F(file, ReadWriteReopenAddsObjects) {
  auto path = file_path();
  {
    auto f = File::create(path, options());
    auto ds = f.create_dataset<double>("first", {4});
    if (rank() == 0) ds.write(Selection::all(), std::vector<double>{1, 2, 3, 4});
  }
  {
    auto f = File::open(path, Mode::ReadWrite, options());
    auto ds = f.create_dataset<double>("second", {2});
    if (rank() == 0) ds.write(Selection::all(), std::vector<double>{5, 6});
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.list(), (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(f.dataset("first").read<double>(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(f.dataset("second").read<double>(), (std::vector<double>{5, 6}));
}

TEST_F(file, FlushExecutesDeferredWrites) {
  auto f = File::create(file_path(), options());
  auto ds = f.create_dataset<int64_t>("x", {uint64_t(nranks())});
  int64_t v = 100 + rank();
  ds.write(Selection::box({uint64_t(rank())}, {1}), &v, 1);
  EXPECT_EQ(f.pending_writes(), 1u);
  f.flush();
  EXPECT_EQ(f.pending_writes(), 0u);
  auto all = ds.read<int64_t>();
  for (int r = 0; r < nranks(); ++r) EXPECT_EQ(all[r], 100 + r);
}

TEST_F(file, HandlesKeepTheFileOpenUntilTheLastOneGoes) {
  auto path = file_path();
  std::vector<float> data(3, 2.5f);
  {
    Dataset ds = [&] {
      auto f = File::create(path, options());
      return f.create_dataset<float>("kept", {3});
    }();  // the File object is gone; the dataset handle still holds the file
    if (rank() == 0) ds.write(Selection::all(), data);
  }  // last handle: closes and flushes
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.dataset("kept").read<float>(), data);
}

TEST_F(file, EachRankItsOwnFileOverCommSelf) {
  auto path = file_path("rank" + std::to_string(rank()));
  FileOptions o = options();
  o.comm = MPI_COMM_SELF;
  {
    auto f = File::create(path, o);
    EXPECT_EQ(f.size(), 1);
    f.create_dataset<int32_t>("r", {1}).write_copy(Selection::all(), std::vector<int32_t>{rank()});
  }
  auto f = File::open(path, Mode::Read, o);
  EXPECT_EQ(f.dataset("r").read<int32_t>(), std::vector<int32_t>{rank()});
}

TEST_F(file, DescribeNamesTheEngine) {
  auto f = File::create(file_path(), options());
  EXPECT_NE(f.describe().find(env().base_engine), std::string::npos) << f.describe();
  EXPECT_NE(f.engine_name().find(env().base_engine), std::string::npos);
}
