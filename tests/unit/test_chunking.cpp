#include <gtest/gtest.h>

#include "hdf5lib/chunking.hpp"

using namespace h5loom;
using h5loom::hdf5lib::auto_chunk_dims;

TEST(AutoChunk, CutsTheSlowestDimensionFirst) {
  // 1000 x 1000 float64 = 8 MB: whole rows, 131 of them (~1 MiB)
  auto c = auto_chunk_dims({1000, 1000}, {}, 8, 1 << 20);
  EXPECT_EQ(c, (Dims{131, 1000}));
  EXPECT_LE(product(c) * 8, 1u << 20);
}

TEST(AutoChunk, SmallDatasetsAreOneChunk) {
  EXPECT_EQ(auto_chunk_dims({10, 10}, {}, 8, 1 << 20), (Dims{10, 10}));
}

TEST(AutoChunk, RowsLargerThanTheTargetCutTheNextDimension) {
  // one 2-D slice of 512x512 float64 is 2 MiB: dimension 0 goes to 1, dimension 1 is halved
  auto c = auto_chunk_dims({64, 512, 512}, {}, 8, 1 << 20);
  EXPECT_EQ(c, (Dims{1, 256, 512}));
}

TEST(AutoChunk, ExtendableDimensionsAreOpenEnded) {
  // particles appended from zero: chunks of 1 MiB of float32, not of 1 element
  EXPECT_EQ(auto_chunk_dims({0}, {kUnlimited}, 4, 1 << 20), (Dims{262144}));
  EXPECT_EQ(auto_chunk_dims({0, 3}, {kUnlimited, 3}, 8, 1 << 20), (Dims{43690, 3}));
}
