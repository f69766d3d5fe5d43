// Conformance group "extend": unlimited and bounded dimensions grown step by step.
#include <numeric>

#include "conformance.hpp"

using namespace h5loom;
using conformance::env;
H5LOOM_CONFORMANCE_GROUP(extend, "extend");

TEST_F(extend, AppendStepByStepAlongAnUnlimitedDimension) {
  auto path = file_path();
  const uint64_t per_rank = 5, steps = 4;
  {
    auto f = File::create(path, options());
    auto ds = f.create_dataset<int32_t>("series", {0}, {kUnlimited});
    EXPECT_EQ(ds.layout(), Layout::Chunked);
    for (uint64_t s = 0; s < steps; ++s) {
      uint64_t base = ds.shape()[0];
      ds.extend({base + per_rank * nranks()});
      std::vector<int32_t> mine(per_rank);
      std::iota(mine.begin(), mine.end(), int32_t(base + per_rank * rank()));
      ds.write_copy(Selection::box({base + per_rank * rank()}, {per_rank}), mine);
    }
  }
  auto f = File::open(path, Mode::Read, options());
  auto ds = f.dataset("series");
  EXPECT_EQ(ds.shape(), Dims{steps * per_rank * nranks()});
  EXPECT_EQ(ds.max_shape(), Dims{kUnlimited});
  auto all = ds.read<int32_t>();
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], int32_t(i));
}

TEST_F(extend, GrowOneDimensionOfA2DDataset) {
  auto f = File::create(file_path(), options());
  auto ds = f.create_dataset<double>("table", {uint64_t(nranks()), 0}, {uint64_t(nranks()), kUnlimited});
  for (uint64_t col = 0; col < 3; ++col) {
    ds.extend({uint64_t(nranks()), col + 1});
    double v = rank() * 10.0 + col;
    ds.write_copy(Selection::box({uint64_t(rank()), col}, {1, 1}), &v, 1);
  }
  auto all = ds.read<double>();
  ASSERT_EQ(all.size(), size_t(nranks()) * 3);
  for (int r = 0; r < nranks(); ++r)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(all[r * 3 + c], r * 10.0 + c);
}

TEST_F(extend, BoundedMaximumAndNoShrinking) {
  auto f = File::create(file_path(), options());
  auto ds = f.create_dataset<int8_t>("bounded", {4}, {10});
  ds.extend({10});
  EXPECT_EQ(ds.shape(), Dims{10});
  try {
    ds.extend({11});
    FAIL() << "extending past max_shape must fail";
  } catch (const SelectionError& e) {
    EXPECT_NE(std::string(e.what()).find("/bounded"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[10]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ds.extend({9}), SelectionError);
  EXPECT_EQ(ds.shape(), Dims{10});
  // resize shrinks only where the engine declares "shrink"; elsewhere it says so and changes nothing.
  if (f.supports("shrink")) {
    ds.resize({9});
    EXPECT_EQ(ds.shape(), Dims{9});
  } else {
    try {
      ds.resize({9});
      FAIL() << "shrinking without the group 'shrink' must fail";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("'shrink'"), std::string::npos) << e.what();
    }
    EXPECT_EQ(ds.shape(), Dims{10});
  }
}

// As in HDF5, a contiguous dataset keeps its shape: resize refuses on every
// engine, naming the dataset and its layout, and changes nothing.
TEST_F(extend, ContiguousDatasetsKeepTheirShape) {
  auto f = File::create(file_path(), options());
  DatasetSpec spec;
  spec.dtype = Datatype::Float32;
  spec.shape = {8};
  spec.layout = Layout::Contiguous;
  spec.layout_auto = false;
  auto ds = f.create_dataset("flat", spec);
  try {
    ds.resize({4});
    FAIL() << "resizing a contiguous dataset must fail";
  } catch (const SelectionError& e) {
    EXPECT_NE(std::string(e.what()).find("/flat"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("contiguous"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ds.shape(), Dims{8});
}

TEST_F(extend, PendingWritesAreFlushedBeforeExtending) {
  auto f = File::create(file_path(), options());
  auto ds = f.create_dataset<int64_t>("p", {uint64_t(nranks())}, {kUnlimited});
  int64_t v = rank() + 1;
  ds.write(Selection::box({uint64_t(rank())}, {1}), &v, 1);
  ds.extend({2 * uint64_t(nranks())});
  EXPECT_EQ(f.pending_writes(), 0u);
  auto all = ds.read<int64_t>(Selection::box({0}, {uint64_t(nranks())}));
  for (int r = 0; r < nranks(); ++r) EXPECT_EQ(all[r], r + 1);
}
