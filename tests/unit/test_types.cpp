#include <gtest/gtest.h>

#include "h5loom/types.hpp"

using namespace h5loom;

TEST(Datatype, NamesAndNumpyCodes) {
  for (Datatype t : kAllDatatypes) EXPECT_EQ(datatype_from_name(datatype_name(t)), t);
  EXPECT_EQ(datatype_from_name("<f8"), Datatype::Float64);
  EXPECT_EQ(datatype_from_name("f4"), Datatype::Float32);
  EXPECT_EQ(datatype_from_name("u1"), Datatype::UInt8);
  EXPECT_EQ(datatype_from_name("INT64"), Datatype::Int64);
  EXPECT_EQ(datatype_size(Datatype::UInt16), 2u);
  EXPECT_EQ(datatype_of<long long>(), Datatype::Int64);
  try {
    datatype_from_name(">f16");
    FAIL();
  } catch (const DatatypeError& e) {
    EXPECT_NE(std::string(e.what()).find("'>f16'"), std::string::npos);
  }
}

TEST(AttributeValue, KindsAndConversions) {
  AttributeValue s(3.5f);
  EXPECT_EQ(s.kind(), AttributeValue::Kind::Scalar);
  EXPECT_EQ(s.dtype(), Datatype::Float32);
  EXPECT_EQ(s.as<int>(), 3);
  AttributeValue a(std::vector<uint8_t>{1, 2, 255});
  EXPECT_EQ(a.kind(), AttributeValue::Kind::Array);
  EXPECT_EQ(a.as_vector<int>(), (std::vector<int>{1, 2, 255}));
  EXPECT_EQ(a.to_string(), "[1, 2, 255]");
  AttributeValue t("hi");
  EXPECT_TRUE(t.is_string());
  EXPECT_EQ(t.to_string(), "\"hi\"");
  EXPECT_THROW(t.as<double>(), DatatypeError);
  EXPECT_EQ(AttributeValue(int64_t(-5)), AttributeValue(int64_t(-5)));
  EXPECT_NE(AttributeValue(int64_t(-5)), AttributeValue(int32_t(-5)));
}

TEST(Dims, Formatting) {
  EXPECT_EQ(dims_to_string({3, kUnlimited}), "[3, inf]");
  EXPECT_EQ(product({2, 3, 4}), 24u);
}

TEST(Datatype, CompoundsRefuseImpossibleOffsets) {
  EXPECT_THROW(Datatype::compound({{"x", ~std::size_t{0} - 3, Datatype::Float64}}, 16), DatatypeError);
  EXPECT_THROW(Datatype::compound({{"x", 12, Datatype::Float64}}, 16), DatatypeError);
  EXPECT_THROW(datatype_from_name("compound[16]{x: float64 @18446744073709551612}"), DatatypeError);
  auto t = Datatype::compound({{"a, b", 0, Datatype::Int32}, {"q\"", 4, Datatype::string(3)}});
  EXPECT_EQ(datatype_from_name(t.name()), t) << t.name();
}
