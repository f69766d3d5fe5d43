// copy_object (tools.hpp; HDF5's H5Ocopy): a group with what is below it
// copied within a file and into another, with the options. It is written on
// the public object model, so it runs for every engine (group "dataset");
// what needs more (links, references, named datatypes) is checked where the
// engine has it.
#include "conformance.hpp"
#include "h5loom/tools.hpp"

using namespace h5loom;

H5LOOM_CONFORMANCE_GROUP(copy, "dataset");

namespace {

// /run: a dataset every rank wrote a row of, attributes, a subgroup with a
// dataset, and - where the engine has them - a soft link, a second name for
// the subgroup's dataset, a reference to it and a named datatype.
void write_source(File& f) {
  const uint64_t n = uint64_t(f.size()), r = uint64_t(f.rank());
  auto d = f.create_dataset<double>("run/values", {n, 2});
  d.write_copy(Selection::box({r, 0}, {1, 2}), std::vector<double>{double(r), double(r) + 0.5});
  d.set_attribute("units", AttributeValue(std::string("K")));
  f.group("run").set_attribute("step", AttributeValue(int64_t(3)));
  auto inner = f.create_dataset<int32_t>("run/sub/ids", {3});
  if (f.rank() == 0) inner.write(Selection::all(), std::vector<int32_t>{7, 8, 9});
  if (f.supports("links")) f.create_soft_link("run/latest", "/run/values");
  if (f.supports("hard_links")) f.create_hard_link("run/ids_again", "/run/sub/ids");
  if (f.supports("references")) f.group("run").set_attribute("first", AttributeValue(f.reference("run/sub/ids")));
  if (f.supports("named_types")) f.commit_datatype("run/t", Datatype::Float32);
  f.flush();
}

void check_copy(File& f, const std::string& at, bool same_file) {
  const uint64_t n = uint64_t(f.size());
  auto values = f.dataset(at + "/values").read<double>();
  ASSERT_EQ(values.size(), 2 * n);
  for (uint64_t r = 0; r < n; ++r) EXPECT_EQ(values[2 * r + 1], double(r) + 0.5);
  EXPECT_EQ(f.dataset(at + "/values").attribute("units").as_string(), "K");
  EXPECT_EQ(f.group(at).attribute("step").as<int64_t>(), 3);
  EXPECT_EQ(f.dataset(at + "/sub/ids").read<int32_t>(), (std::vector<int32_t>{7, 8, 9}));
  if (f.supports("links")) EXPECT_EQ(f.soft_link(at + "/latest"), "/run/values");  // kept as it was
  if (f.supports("hard_links")) {
    EXPECT_EQ(f.reference(at + "/ids_again"), f.reference(at + "/sub/ids"));  // still one object
    EXPECT_EQ(f.link_count(at + "/sub/ids"), 2u);
  }
  if (f.supports("references"))  // the copy's reference names the copy
    EXPECT_EQ(f.dereference(f.group(at).attribute("first").as_references().at(0)), at + "/sub/ids");
  if (f.supports("named_types")) EXPECT_EQ(f.named_datatype(at + "/t").dtype(), Datatype::Float32);
  (void)same_file;
}

}  // namespace

TEST_F(copy, AGroupWithEverythingBelowItWithinAFileAndIntoAnother) {
  const auto path = file_path(), other = file_path("other");
  {
    auto f = File::create(path, options());
    write_source(f);
    copy_object(f, "/run", f, "/archive/run1");  // the parent is created
    check_copy(f, "/archive/run1", true);
    auto g = File::create(other, options());
    copy_object(f, "run", g, "/copied");
    check_copy(g, "/copied", false);
    copy_object(f, "run/values", g, "/values_only");
    EXPECT_EQ(g.dataset("values_only").shape(), (Dims{uint64_t(f.size()), 2}));
  }
  auto f = File::open(path, Mode::Read, options());
  check_copy(f, "/archive/run1", true);
  auto g = File::open(other, Mode::Read, options());
  check_copy(g, "/copied", false);
}

TEST_F(copy, OptionsLeaveOutOrFollow) {
  const auto path = file_path();
  auto f = File::create(path, options());
  write_source(f);
  CopyOptions shallow;
  shallow.shallow = true;
  copy_object(f, "run", f, "shallow", shallow);
  EXPECT_EQ(f.kind("shallow/values"), ObjectKind::Dataset);
  EXPECT_EQ(f.kind("shallow/sub"), ObjectKind::Group);
  EXPECT_EQ(f.group("shallow/sub").list(), std::vector<std::string>{});  // not what is below the members
  CopyOptions bare;
  bare.attributes = false;
  copy_object(f, "run", f, "bare", bare);
  EXPECT_EQ(f.group("bare").attribute_names(), std::vector<std::string>{});
  EXPECT_EQ(f.dataset("bare/values").attribute_names(), std::vector<std::string>{});
  if (f.supports("links")) {
    CopyOptions expand;
    expand.expand_soft_links = true;
    copy_object(f, "run", f, "expanded", expand);
    EXPECT_FALSE(f.soft_link("expanded/latest"));  // a dataset of its own now
    EXPECT_EQ(f.kind("expanded/latest"), ObjectKind::Dataset);
    EXPECT_NE(f.reference("expanded/latest"), f.reference("run/values"));
  }
}

TEST_F(copy, MisuseIsRefused) {
  const auto path = file_path();
  auto f = File::create(path, options());
  write_source(f);
  EXPECT_THROW(copy_object(f, "missing", f, "x"), NotFoundError);
  EXPECT_THROW(copy_object(f, "run/values", f, "run/sub"), ExistsError);
  EXPECT_THROW(copy_object(f, "run", f, "run/inside"), UsageError);
  EXPECT_THROW(copy_object(f, "run/../x", f, "y"), UsageError);
  if (f.supports("hard_links")) {  // inside it through another name of it
    f.create_hard_link("alias", "run");
    EXPECT_THROW(copy_object(f, "run", f, "alias/inside"), UsageError);
    EXPECT_EQ(f.kind("run/inside"), ObjectKind::None);
  }
  EXPECT_EQ(f.kind("x"), ObjectKind::None);
  EXPECT_EQ(f.kind("run/inside"), ObjectKind::None);
}
