#include <gtest/gtest.h>

#include "h5loom/selection.hpp"

using namespace h5loom;

TEST(Selection, CountsAndShapes) {
  Dims shape{10, 20};
  EXPECT_EQ(Selection::all().num_elements(shape), 200u);
  EXPECT_EQ(Selection::none().num_elements(shape), 0u);
  auto s = Selection::hyperslab({1, 2}, {3, 4}, {3, 5}, {2, 2});
  EXPECT_EQ(s.selected_shape(shape), (Dims{6, 8}));
  EXPECT_EQ(s.num_elements(shape), 48u);
  EXPECT_FALSE(s.is_box());
  EXPECT_TRUE(Selection::box({0, 0}, {2, 2}).is_box());
  EXPECT_NO_THROW(s.validate(shape, "/d"));  // last row 1+2*3+2-1 = 8, last col 2+3*5+2-1 = 18
}

TEST(Selection, ValidationNamesTheDatasetAndDimension) {
  Dims shape{10, 20};
  try {
    Selection::box({5, 0}, {6, 1}).validate(shape, "/grid/rho");
    FAIL();
  } catch (const SelectionError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("/grid/rho"), std::string::npos) << m;
    EXPECT_NE(m.find("index 10"), std::string::npos) << m;
    EXPECT_NE(m.find("dimension 0"), std::string::npos) << m;
    EXPECT_NE(m.find("[10, 20]"), std::string::npos) << m;
  }
  EXPECT_THROW(Selection::box({0}, {1}).validate(shape, "/d"), SelectionError);
  EXPECT_THROW(Selection::hyperslab({0}, {2}, {1}, {2}), SelectionError);  // overlapping blocks
  EXPECT_THROW(Selection::hyperslab({0, 0}, {1}), SelectionError);         // rank differs
  EXPECT_THROW(Selection::hyperslab({~0ull - 1}, {3}).validate({5}, "/d"), SelectionError);  // overflow
  EXPECT_NO_THROW(Selection::hyperslab({100}, {0}).validate({5}, "/d"));  // selects nothing
}

TEST(Selection, ToString) {
  EXPECT_EQ(Selection::all().to_string(), "all");
  EXPECT_EQ(Selection::box({1}, {2}).to_string(), "hyperslab(start=[1], count=[2])");
  EXPECT_EQ(Selection::hyperslab({0}, {2}, {4}, {2}).to_string(), "hyperslab(start=[0], count=[2], stride=[4], block=[2])");
}
