// Conformance group "attribute": scalars, arrays and strings on the file, a group
// and a dataset; list, overwrite, reopen, numeric conversion on read.
#include "conformance.hpp"

using namespace h5loom;
using conformance::env;
H5LOOM_CONFORMANCE_GROUP(attribute, "attribute");

TEST_F(attribute, ScalarsArraysAndStringsOnEveryKindOfObject) {
  auto path = file_path();
  {
    auto f = File::create(path, options());
    auto g = f.create_group("fields");
    auto ds = g.create_dataset<double>("rho", {4});
    for (Object* o : std::initializer_list<Object*>{&f, &g, &ds}) {
      o->set_attribute("i8", int8_t(-8));
      o->set_attribute("u64", uint64_t(18446744073709551615ull));
      o->set_attribute("f32", 1.5f);
      o->set_attribute("f64", 2.25);
      o->set_attribute("ints", std::vector<int64_t>{1, -2, 3});
      o->set_attribute("floats", std::vector<double>{0.5, 1e300});
      o->set_attribute("units", std::string("kg/m^3"));
      o->set_attribute("empty", "");
    }
  }
  auto f = File::open(path, Mode::Read, options());
  auto g = f.group("fields");
  auto ds = f.dataset("fields/rho");
  for (const Object* o : std::initializer_list<const Object*>{&f, &g, &ds}) {
    SCOPED_TRACE(o->path());
    EXPECT_EQ(o->attribute("i8").as<int>(), -8);
    EXPECT_EQ(o->attribute("i8").dtype(), Datatype::Int8);
    EXPECT_EQ(o->attribute("u64").as<uint64_t>(), 18446744073709551615ull);
    EXPECT_EQ(o->attribute("f32").as<float>(), 1.5f);
    EXPECT_EQ(o->attribute("f32").dtype(), Datatype::Float32);
    EXPECT_EQ(o->attribute("f64").as<double>(), 2.25);
    EXPECT_EQ(o->attribute("f64").kind(), AttributeValue::Kind::Scalar);
    EXPECT_EQ(o->attribute("ints").as_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3}));
    EXPECT_EQ(o->attribute("ints").kind(), AttributeValue::Kind::Array);
    EXPECT_EQ(o->attribute("floats").as_vector<double>(), (std::vector<double>{0.5, 1e300}));
    EXPECT_EQ(o->attribute("units").as_string(), "kg/m^3");
    EXPECT_EQ(o->attribute("empty").as_string(), "");
    EXPECT_EQ(o->attribute_names(),
              (std::vector<std::string>{"empty", "f32", "f64", "floats", "i8", "ints", "u64", "units"}));
  }
}

TEST_F(attribute, OverwriteWithAnotherTypeAndHasAttribute) {
  auto f = File::create(file_path(), options());
  auto ds = f.create_dataset<int32_t>("d", {1});
  EXPECT_FALSE(ds.has_attribute("time"));
  ds.set_attribute("time", int32_t(3));
  EXPECT_TRUE(ds.has_attribute("time"));
  ds.set_attribute("time", 3.75);
  EXPECT_EQ(ds.attribute("time").dtype(), Datatype::Float64);
  EXPECT_EQ(ds.attribute("time").as<double>(), 3.75);
  ds.set_attribute("time", "late");
  EXPECT_EQ(ds.attribute("time").as_string(), "late");
  EXPECT_EQ(ds.attribute_names(), std::vector<std::string>{"time"});
}

TEST_F(attribute, NumbersConvertOnReadStringsDoNot) {
  auto f = File::create(file_path(), options());
  f.set_attribute("step", int32_t(42));
  f.set_attribute("label", "abc");
  EXPECT_EQ(f.attribute("step").as<double>(), 42.0);
  EXPECT_EQ(f.attribute("step").as<uint8_t>(), 42);
  EXPECT_THROW(f.attribute("label").as<int>(), DatatypeError);
  EXPECT_THROW(f.attribute("step").as_string(), DatatypeError);
  f.set_attribute("pair", std::vector<int32_t>{1, 2});
  EXPECT_THROW(f.attribute("pair").as<int>(), DatatypeError);
}

TEST_F(attribute, EmptyArray) {
  auto path = file_path();
  {
    auto f = File::create(path, options());
    f.set_attribute("none", std::vector<double>{});
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_TRUE(f.attribute("none").as_vector<double>().empty());
}

TEST_F(attribute, StringArrays) {
  auto path = file_path();
  std::vector<std::string> labels = {"z", "y", "x"};
  {
    auto f = File::create(path, options());
    f.create_group("m").set_attribute("axisLabels", labels);
    f.set_attribute("one", std::vector<std::string>{"only"});
    f.set_attribute("blank", std::vector<std::string>{"", "b"});
  }
  auto f = File::open(path, Mode::Read, options());
  auto v = f.group("m").attribute("axisLabels");
  EXPECT_TRUE(v.is_string_array());
  EXPECT_EQ(v.as_strings(), labels);
  EXPECT_EQ(v.size(), 3u);
  EXPECT_EQ(f.attribute("one").as_strings(), std::vector<std::string>{"only"});
  EXPECT_EQ(f.attribute("blank").as_strings(), (std::vector<std::string>{"", "b"}));
  EXPECT_THROW(v.as_string(), DatatypeError);
  EXPECT_THROW(v.as<int>(), DatatypeError);
}
