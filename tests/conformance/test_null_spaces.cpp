// Conformance group "null_spaces": HDF5's null dataspace (h5py's Empty) - a
// dataset or an attribute with a type and no elements, not even a shape. Kept
// through reopen; reads and writes select nothing; it never changes shape;
// specs that give it a shape or chunks are refused.
#include "conformance.hpp"
#include "h5loom/tools.hpp"

using namespace h5loom;

H5LOOM_CONFORMANCE_GROUP(null_spaces, "null_spaces");

namespace {

DatasetSpec null_spec(Datatype dtype) {
  DatasetSpec spec;
  spec.dtype = dtype;
  spec.null_space = true;
  return spec;
}

}  // namespace

TEST_F(null_spaces, DatasetsAndAttributesWithoutElements) {
  const auto path = file_path();
  const Datatype pair = Datatype::compound({{"a", 0, Datatype::Int32}, {"b", 4, Datatype::Float32}});
  {
    auto f = File::create(path, options());
    auto e = f.create_dataset("empty", null_spec(Datatype::Float64));
    EXPECT_TRUE(e.null_space());
    EXPECT_EQ(e.shape(), Dims{0});
    EXPECT_EQ(e.max_shape(), Dims{0});
    e.write_raw(Selection::all(), Datatype::Float64, nullptr, 0, /*copy=*/true);  // nothing, on every rank
    e.set_attribute("units", "m");
    f.create_dataset("records/none", null_spec(pair));
    auto g = f.create_group("meta");
    g.set_attribute("nothing", AttributeValue::empty(Datatype::Int16));
    g.set_attribute("no_text", AttributeValue::empty(Datatype::string(8)));
    g.set_attribute("no_strings", AttributeValue::empty(Datatype::varstring(Datatype::Charset::Utf8)));
    g.set_attribute("count", int64_t(3));
  }
  auto f = File::open(path, Mode::ReadWrite, options());
  auto e = f.dataset("empty");
  EXPECT_TRUE(e.null_space());
  EXPECT_EQ(e.dtype(), Datatype::Float64);
  EXPECT_EQ(e.shape(), Dims{0});
  double none = -1;
  e.read_raw(Selection::all(), Datatype::Float64, &none, 0);
  EXPECT_EQ(none, -1);
  EXPECT_EQ(e.attribute("units").as_string(), "m");
  EXPECT_THROW(e.extend({4}), SelectionError);
  EXPECT_THROW(e.resize({0}), SelectionError);
  auto r = f.dataset("records/none");
  EXPECT_TRUE(r.null_space());
  EXPECT_EQ(r.dtype(), pair) << r.dtype().name();
  auto g = f.group("meta");
  const AttributeValue nothing = g.attribute("nothing");
  EXPECT_TRUE(nothing.is_empty());
  EXPECT_EQ(nothing.dtype(), Datatype::Int16);
  EXPECT_EQ(nothing.size(), 0u);
  EXPECT_THROW(nothing.as<double>(), DatatypeError);
  EXPECT_EQ(g.attribute("no_text").dtype(), Datatype::string(8));
  EXPECT_TRUE(g.attribute("no_text").is_empty());
  EXPECT_EQ(g.attribute("no_strings").dtype(), Datatype::varstring(Datatype::Charset::Utf8));
  EXPECT_EQ(g.attribute("count").as<int64_t>(), 3);
  // An ordinary dataset stays one; an empty attribute can be replaced by a value.
  EXPECT_FALSE(f.create_dataset("zero", [] {
                  DatasetSpec s;
                  s.shape = {0};
                  return s;
                }()).null_space());
  g.set_attribute("nothing", int16_t(5));
  EXPECT_EQ(g.attribute("nothing").as<int16_t>(), 5);
}

TEST_F(null_spaces, CopiesKeepTheNullDataspace) {
  auto f = File::create(file_path(), options());
  auto e = f.create_dataset("e", null_spec(Datatype::UInt8));
  e.set_attribute("flag", AttributeValue::empty(Datatype::Float32));
  copy_object(f, "/e", f, "/copy");
  auto c = f.dataset("copy");
  EXPECT_TRUE(c.null_space());
  EXPECT_EQ(c.dtype(), Datatype::UInt8);
  EXPECT_TRUE(c.attribute("flag").is_empty());
}

TEST_F(null_spaces, ShapesAndChunksAreRefused) {
  auto f = File::create(file_path(), options());
  DatasetSpec spec = null_spec(Datatype::Int32);
  spec.shape = {4};
  EXPECT_THROW(f.create_dataset("a", spec), SelectionError);
  spec = null_spec(Datatype::Int32);
  spec.chunks = {2};
  EXPECT_THROW(f.create_dataset("b", spec), SelectionError);
  spec = null_spec(Datatype::Int32);
  spec.layout = Layout::Chunked;
  spec.layout_auto = false;
  EXPECT_THROW(f.create_dataset("c", spec), UsageError);
  EXPECT_FALSE(f.exists("a") || f.exists("b") || f.exists("c"));
}
