// Conformance group "selection": hyperslabs with stride and block, the whole
// dataset, the empty selection, overlapping writes in order.
#include <numeric>

#include "conformance.hpp"

using namespace h5loom;
using conformance::env;
H5LOOM_CONFORMANCE_GROUP(selection, "selection");

// A 2-D dataset, 8 rows per rank x 12 columns, first filled with -1 by slabs,
// then each rank writes a strided pattern into its own rows:
// rows r*8 + {0,2,4,6}, columns {0,1, 4,5, 8,9} (stride 4, block 2).
TEST_F(selection, StridedBlocksIn2D) {
  auto f = File::create(file_path(), options());
  const uint64_t R = 8, C = 12;
  auto ds = f.create_dataset<int32_t>("grid", {R * nranks(), C});
  std::vector<int32_t> fill(R * C, -1);
  ds.write(Selection::box({R * rank(), 0}, {R, C}), fill);
  f.flush();
  auto sel = Selection::hyperslab({R * rank(), 0}, {4, 3}, {2, 4}, {1, 2});
  EXPECT_EQ(sel.num_elements(ds.shape()), 4u * 6u);
  std::vector<int32_t> vals(24);
  std::iota(vals.begin(), vals.end(), 1000 * rank());
  ds.write(sel, vals);
  auto all = ds.read<int32_t>();
  for (int r = 0; r < nranks(); ++r) {
    int k = 0;
    for (uint64_t i = 0; i < R; ++i)
      for (uint64_t j = 0; j < C; ++j) {
        bool selected = i % 2 == 0 && (j % 4) < 2;
        int32_t want = selected ? 1000 * r + k++ : -1;
        ASSERT_EQ(all[(r * R + i) * C + j], want) << "rank " << r << " row " << i << " col " << j;
      }
  }
}

TEST_F(selection, ReadAStridedSubset) {
  auto f = File::create(file_path(), options());
  auto ds = f.create_dataset<double>("v", {100});
  std::vector<double> data(100);
  std::iota(data.begin(), data.end(), 0.0);
  if (rank() == 0) ds.write(Selection::all(), data);
  // every rank reads a different strided subset: start at rank, every 10th, blocks of 2
  auto sel = Selection::hyperslab({uint64_t(rank())}, {5}, {10}, {2});
  auto got = ds.read<double>(sel);
  std::vector<double> want;
  for (int b = 0; b < 5; ++b)
    for (int e = 0; e < 2; ++e) want.push_back(rank() + b * 10 + e);
  EXPECT_EQ(got, want);
}

// Selections of many pieces (the log engine reads them as their bounding box
// and picks them out): in 1, 2 and 3 dimensions, with blocks, and with a whole
// run along the last dimension. Each rank reads a different one.
TEST_F(selection, ReadManyStridedPieces) {
  auto f = File::create(file_path(), options());
  const Dims shape{6, 30, 40};
  auto ds = f.create_dataset<int32_t>("cube", shape);
  std::vector<int32_t> data(product(shape));
  std::iota(data.begin(), data.end(), 0);
  if (rank() == 0) ds.write(Selection::all(), data);
  auto line = f.create_dataset<int32_t>("line", {1000});
  std::vector<int32_t> ldata(1000);
  std::iota(ldata.begin(), ldata.end(), 7);
  if (rank() == 0) line.write(Selection::all(), ldata);
  f.flush();
  const uint64_t r = uint64_t(rank());
  struct Case { Dims start, count, stride, block; };
  const Case cases[] = {
      {{1, 2 + r, 3}, {2, 5, 9}, {2, 5, 4}, {1, 2, 3}},  // 90 pieces, blocks in every dimension
      {{0, r % 2, 5}, {6, 1, 1}, {1, 1, 1}, {1, 28, 30}}, // one piece: a box
      {{r % 2, 0, 2}, {3, 15, 1}, {2, 2, 1}, {1, 1, 35}}, // 45 rows, each a whole run
      {{0, 0, r}, {6, 30, 13}, {1, 1, 3}, {1, 1, 1}},     // every third column of every row
  };
  for (const auto& c : cases) {
    auto sel = Selection::hyperslab(c.start, c.count, c.stride, c.block);
    std::vector<int32_t> want;
    for (uint64_t i = 0; i < c.count[0]; ++i)
      for (uint64_t bi = 0; bi < c.block[0]; ++bi)
        for (uint64_t j = 0; j < c.count[1]; ++j)
          for (uint64_t bj = 0; bj < c.block[1]; ++bj)
            for (uint64_t k = 0; k < c.count[2]; ++k)
              for (uint64_t bk = 0; bk < c.block[2]; ++bk) {
                const uint64_t x = c.start[0] + i * c.stride[0] + bi, y = c.start[1] + j * c.stride[1] + bj,
                               z = c.start[2] + k * c.stride[2] + bk;
                want.push_back(data[(x * shape[1] + y) * shape[2] + z]);
              }
    EXPECT_EQ(ds.read<int32_t>(sel), want) << sel.to_string();
  }
  // 1-D: every 8th element of this rank's part, and pairs every 5.
  auto every8 = line.read<int32_t>(Selection::hyperslab({r}, {120}, {8}));
  ASSERT_EQ(every8.size(), 120u);
  for (uint64_t i = 0; i < 120; ++i) ASSERT_EQ(every8[i], int32_t(7 + r + 8 * i)) << i;
  auto pairs = line.read<int32_t>(Selection::hyperslab({3}, {199}, {5}, {2}));
  ASSERT_EQ(pairs.size(), 398u);
  for (uint64_t i = 0; i < 398; ++i) ASSERT_EQ(pairs[i], int32_t(7 + 3 + 5 * (i / 2) + i % 2)) << i;
}

TEST_F(selection, EmptySelectionOnSomeRanks) {
  auto f = File::create(file_path(), options());
  auto ds = f.create_dataset<int16_t>("only0", {5});
  std::vector<int16_t> data = {5, 4, 3, 2, 1};
  if (rank() == 0) ds.write(Selection::all(), data);
  else ds.write<int16_t>(Selection::none(), nullptr, 0);
  // ranks other than 0 read nothing; rank 0 reads everything
  auto got = ds.read<int16_t>(rank() == 0 ? Selection::all() : Selection::none());
  if (rank() == 0) EXPECT_EQ(got, data);
  else EXPECT_TRUE(got.empty());
}

TEST_F(selection, ZeroCountHyperslabSelectsNothing) {
  auto f = File::create(file_path(), options());
  auto ds = f.create_dataset<int32_t>("z", {4, 4});
  auto sel = Selection::hyperslab({0, 0}, {0, 4});
  EXPECT_EQ(sel.num_elements(ds.shape()), 0u);
  ds.write<int32_t>(sel, nullptr, 0);
  EXPECT_TRUE(ds.read<int32_t>(sel).empty());
}

TEST_F(selection, LaterWritesOfTheSameRankWin) {
  auto f = File::create(file_path(), options());
  auto ds = f.create_dataset<int32_t>("o", {uint64_t(nranks()) * 4});
  std::vector<int32_t> first(4, 1), second(2, 2);
  ds.write(Selection::box({uint64_t(rank()) * 4}, {4}), first);
  ds.write(Selection::box({uint64_t(rank()) * 4 + 1}, {2}), second);
  auto all = ds.read<int32_t>();
  for (int r = 0; r < nranks(); ++r) EXPECT_EQ(std::vector<int32_t>(all.begin() + r * 4, all.begin() + r * 4 + 4),
                                               (std::vector<int32_t>{1, 2, 2, 1}));
}

TEST_F(selection, ThreeDimensionalBoxPerRank) {
  auto f = File::create(file_path(), options());
  // ranks tile the middle dimension
  const uint64_t nz = 3, ny = 2 * nranks(), nx = 5;
  auto ds = f.create_dataset<float>("cube", {nz, ny, nx});
  std::vector<float> mine(nz * 2 * nx);
  for (uint64_t k = 0; k < nz; ++k)
    for (uint64_t j = 0; j < 2; ++j)
      for (uint64_t i = 0; i < nx; ++i) mine[(k * 2 + j) * nx + i] = float(k * 10000 + (2 * rank() + j) * 100 + i);
  ds.write(Selection::box({0, 2 * uint64_t(rank()), 0}, {nz, 2, nx}), mine);
  auto all = ds.read<float>();
  for (uint64_t k = 0; k < nz; ++k)
    for (uint64_t j = 0; j < ny; ++j)
      for (uint64_t i = 0; i < nx; ++i) ASSERT_EQ(all[(k * ny + j) * nx + i], float(k * 10000 + j * 100 + i));
}
