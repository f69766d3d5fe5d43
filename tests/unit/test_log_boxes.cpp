// The log engine's box arithmetic: when one write continues another.
#include <gtest/gtest.h>

#include "engines/log/boxes.hpp"

using namespace h5loom;
using h5loom::logengine::append_box;

TEST(LogBoxes, AppendGrowsAlongTheFirstDimensionThatDiffers) {
  Dims count{1, 32, 3};
  EXPECT_TRUE(append_box({10, 0, 0}, count, {11, 0, 0}, {1, 32, 3}));  // the next row
  EXPECT_EQ(count, (Dims{2, 32, 3}));
  EXPECT_TRUE(append_box({10, 0, 0}, count, {12, 0, 0}, {5, 32, 3}));  // the next five
  EXPECT_EQ(count, (Dims{7, 32, 3}));

  Dims run{3};
  EXPECT_TRUE(append_box({6}, run, {9}, {4}));  // 1-D runs
  EXPECT_EQ(run, (Dims{7}));

  Dims in_row{1, 4};
  EXPECT_TRUE(append_box({2, 0}, in_row, {2, 4}, {1, 6}));  // along a row: earlier extents are 1
  EXPECT_EQ(in_row, (Dims{1, 10}));

  Dims part{1, 2};  // a partial row followed by the same part of the next row is still one box
  EXPECT_TRUE(append_box({0, 3}, part, {1, 3}, {1, 2}));
  EXPECT_EQ(part, (Dims{2, 2}));
}

TEST(LogBoxes, AppendRefusesWhatIsNotOneBoxInRowMajorOrder) {
  Dims c{1, 4};
  EXPECT_FALSE(append_box({0, 0}, c, {2, 0}, {1, 4}));     // a gap
  EXPECT_FALSE(append_box({0, 0}, c, {0, 0}, {1, 4}));     // the same box again
  EXPECT_FALSE(append_box({1, 0}, c, {0, 0}, {1, 4}));     // backwards
  EXPECT_FALSE(append_box({0, 0}, c, {1, 0}, {1, 3}));     // narrower row
  EXPECT_FALSE(append_box({0, 0}, c, {1, 1}, {1, 4}));     // shifted row
  Dims two{2, 4};
  EXPECT_FALSE(append_box({0, 0}, two, {0, 4}, {2, 4}));   // side by side: not row-major contiguous
  EXPECT_FALSE(append_box({0}, c, {1, 0}, {1, 4}));        // ranks differ
  EXPECT_EQ(c, (Dims{1, 4}));
  EXPECT_EQ(two, (Dims{2, 4}));
}
