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

// Writes after a shrink and a regrowth are kept where they land, writes before
// it stay hidden outside the smaller shape - also with shrinks one after
// another in one epoch (no durable flush between), a 2-D dataset shrunk along
// both dimensions, and every rank writing before and after.
TEST_F(shrink, WritesAfterShrinkingAreKeptAndEarlierOnesStayHidden) {
  const auto path = file_path();
  const uint64_t n = uint64_t(nranks()), r = uint64_t(rank());
  auto value = [](uint64_t row, uint64_t col, int pass) { return int32_t(1000 * pass + 10 * row + col); };
  {
    auto f = File::create(path, options());
    DatasetSpec spec;
    spec.dtype = Datatype::Int32;
    spec.shape = {2 * n, 4};
    spec.max_shape = {kUnlimited, 4};
    spec.chunks = {1, 4};
    auto d = f.create_dataset("d", spec);
    // Pass 1: every rank writes its two rows, all four columns.
    std::vector<int32_t> rows(8);
    for (uint64_t k = 0; k < 8; ++k) rows[k] = value(2 * r + k / 4, k % 4, 1);
    d.write(Selection::box({2 * r, 0}, {2, 4}), rows.data(), rows.size());
    d.resize({n, 2});      // keeps rows < n, columns < 2 of pass 1
    d.resize({n, 3});      // column 2 comes back as fill (0)
    d.resize({2 * n, 3});  // rows >= n come back as fill
    // Pass 2: each rank writes column 2 of its first row (the regrown column).
    const int32_t mine = value(2 * r, 2, 2);
    d.write(Selection::box({2 * r, 2}, {1, 1}), &mine, 1);
    d.resize({2 * n, 4});  // column 3 comes back as fill
  }
  auto f = File::open(path, Mode::Read, options());
  auto d = f.dataset("d");
  ASSERT_EQ(d.shape(), (Dims{2 * n, 4}));
  auto all = d.read<int32_t>();
  for (uint64_t row = 0; row < 2 * n; ++row)
    for (uint64_t col = 0; col < 4; ++col) {
      int32_t want = 0;
      if (row < n && col < 2) want = value(row, col, 1);
      if (col == 2 && row % 2 == 0) want = value(row, 2, 2);
      EXPECT_EQ(all[row * 4 + col], want) << "row " << row << " column " << col;
    }
}
