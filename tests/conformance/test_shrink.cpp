// Conformance group "shrink": Dataset::resize to a smaller shape discards the
// elements outside it (growing again shows the fill value there), after a
// flush, a reopen and with writes deferred before it; engines without the
// group refuse shrinking with a UsageError naming it, changing nothing.
#include "conformance.hpp"

using namespace h5loom;
H5LOOM_CONFORMANCE_GROUP(shrink, "shrink");

TEST_F(shrink, ShrinkThenGrowShowsFillValues) {
  const auto path = file_path();
  const uint64_t n = uint64_t(nranks());
  {
    auto f = File::create(path, options());
    DatasetSpec spec;
    spec.dtype = Datatype::Int32;
    spec.shape = {4 * n, 3};
    spec.max_shape = {kUnlimited, 3};
    spec.chunks = {2, 3};
    const int32_t fill = -1;
    spec.fill.assign(reinterpret_cast<const unsigned char*>(&fill), reinterpret_cast<const unsigned char*>(&fill) + 4);
    auto d = f.create_dataset("d", spec);
    std::vector<int32_t> mine(12);
    for (int k = 0; k < 12; ++k) mine[k] = 100 * rank() + k;
    d.write(Selection::box({4 * uint64_t(rank()), 0}, {4, 3}), mine.data(), 12);  // deferred: lands before the resize
    d.resize({2 * n + 1, 3});  // shrink: rank r's rows beyond 2n+1 go
    EXPECT_EQ(d.shape(), (Dims{2 * n + 1, 3}));
    d.resize({4 * n, 3});  // grow again
  }
  auto f = File::open(path, Mode::Read, options());
  auto d = f.dataset("d");
  ASSERT_EQ(d.shape(), (Dims{4 * n, 3}));
  auto all = d.read<int32_t>();
  for (uint64_t row = 0; row < 4 * n; ++row)
    for (uint64_t c = 0; c < 3; ++c) {
      const int32_t want = row < 2 * n + 1 ? int32_t(100 * (row / 4) + 3 * (row % 4) + c) : -1;
      EXPECT_EQ(all[row * 3 + c], want) << "row " << row << " column " << c;
    }
}

TEST_F(shrink, BeyondMaxShapeAndAnotherRankAreRefused) {
  auto f = File::create(file_path(), options());
  DatasetSpec spec;
  spec.dtype = Datatype::Float64;
  spec.shape = {4};
  spec.max_shape = {8};
  spec.chunks = {2};
  auto d = f.create_dataset("d", spec);
  EXPECT_THROW(d.resize({9}), SelectionError);
  EXPECT_THROW(d.resize({2, 2}), SelectionError);
  d.resize({0});
  EXPECT_EQ(d.shape(), Dims{0});
  d.resize({8});
  EXPECT_EQ(d.read<double>(), std::vector<double>(8, 0.0));
}
