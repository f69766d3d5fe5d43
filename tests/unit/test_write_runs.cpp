// The hdf5 engine's runs (src/engines/hdf5/write_runs.*): which box selections
// are one run of a dataset's row-major order, and the boxes that cover a run -
// exactly its elements, in order, for every run of several shapes.
#include <gtest/gtest.h>

#include <random>

#include "engines/hdf5/write_runs.hpp"

using namespace h5loom;
using h5loom::hdf5::boxes_of;
using RunOfElements = h5loom::hdf5::Run;  // (gtest's Test has a Run() of its own)
using h5loom::hdf5::run_of;

TEST(WriteRuns, BoxesThatAreRunsAndBoxesThatAreNot) {
  const Dims shape{4, 5, 6};
  RunOfElements r;
  ASSERT_TRUE(run_of(Selection::box({1, 2, 1}, {1, 1, 4}), shape, r));  // a piece of a row
  EXPECT_EQ(r.begin, 1u * 30 + 2 * 6 + 1);
  EXPECT_EQ(r.end, r.begin + 4);
  ASSERT_TRUE(run_of(Selection::box({1, 2, 0}, {1, 3, 6}), shape, r));  // whole rows of one plane
  EXPECT_EQ(r.end - r.begin, 18u);
  ASSERT_TRUE(run_of(Selection::box({1, 0, 0}, {2, 5, 6}), shape, r));  // whole planes
  EXPECT_EQ(r.begin, 30u);
  EXPECT_FALSE(run_of(Selection::box({0, 0, 1}, {1, 2, 4}), shape, r));  // two pieces of rows: a tile
  EXPECT_FALSE(run_of(Selection::box({0, 1, 0}, {2, 1, 6}), shape, r));  // a row of two planes
  EXPECT_FALSE(run_of(Selection::hyperslab({0, 0, 0}, {1, 1, 3}, {1, 1, 2}), shape, r));  // strided
  EXPECT_FALSE(run_of(Selection::all(), shape, r));
}

TEST(WriteRuns, TheBoxesOfARunCoverExactlyItsElementsInOrder) {
  std::mt19937_64 rng(7);
  for (const Dims& shape : {Dims{17}, Dims{3, 7}, Dims{4, 5, 6}, Dims{2, 3, 1, 5}}) {
    const uint64_t total = product(shape);
    for (int trial = 0; trial < 300; ++trial) {
      uint64_t a = rng() % (total + 1), b = rng() % (total + 1);
      if (a > b) std::swap(a, b);
      std::vector<uint64_t> covered;
      for (const auto& [start, count] : boxes_of({a, b}, shape)) {
        RunOfElements piece;
        ASSERT_TRUE(run_of(Selection::box(start, count), shape, piece)) << dims_to_string(start);
        for (uint64_t x = piece.begin; x < piece.end; ++x) covered.push_back(x);
      }
      std::vector<uint64_t> want(b - a);
      for (uint64_t x = a; x < b; ++x) want[x - a] = x;
      ASSERT_EQ(covered, want) << dims_to_string(shape) << " [" << a << ", " << b << ")";
      EXPECT_LE(boxes_of({a, b}, shape).size(), 2 * shape.size() - 1);
    }
  }
}
