// Conformance group "group": nested groups, open, list, exists, relative paths.
#include "conformance.hpp"

using namespace h5loom;
using conformance::env;
H5LOOM_CONFORMANCE_GROUP(group, "group");

TEST_F(group, NestedCreateCreatesParents) {
  auto f = File::create(file_path(), options());
  auto c = f.create_group("a/b/c");
  EXPECT_EQ(c.path(), "/a/b/c");
  EXPECT_EQ(c.name(), "c");
  EXPECT_TRUE(f.exists("a"));
  EXPECT_TRUE(f.exists("/a/b"));
  EXPECT_EQ(f.kind("a/b/c"), ObjectKind::Group);
  EXPECT_EQ(f.list(), std::vector<std::string>{"a"});
  EXPECT_EQ(f.group("a").list(), std::vector<std::string>{"b"});
}

TEST_F(group, RelativeAndAbsolutePathsFromAGroup) {
  auto f = File::create(file_path(), options());
  auto a = f.create_group("a");
  auto x = a.create_group("x");
  EXPECT_EQ(x.path(), "/a/x");
  auto ds = a.create_dataset<int32_t>("d", {2});
  EXPECT_EQ(ds.path(), "/a/d");
  auto top = a.create_group("/top");
  EXPECT_EQ(top.path(), "/top");
  EXPECT_EQ(f.kind("a/d"), ObjectKind::Dataset);
  EXPECT_EQ(a.kind("x"), ObjectKind::Group);
  EXPECT_TRUE(a.exists("./x"));
  EXPECT_EQ(f.group("//a///x/").path(), "/a/x");
}

TEST_F(group, ListIsSortedAndSurvivesReopen) {
  auto path = file_path();
  {
    auto f = File::create(path, options());
    for (const char* n : {"zeta", "alpha", "mid"}) f.create_group(std::string("g/") + n);
    f.create_dataset<float>("g/data", {1});
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.group("g").list(), (std::vector<std::string>{"alpha", "data", "mid", "zeta"}));
  EXPECT_EQ(f.kind("g/data"), ObjectKind::Dataset);
  EXPECT_EQ(f.kind("g/alpha"), ObjectKind::Group);
}

TEST_F(group, ExistsIsFalseForMissingAndImpossiblePaths) {
  auto f = File::create(file_path(), options());
  f.create_dataset<int8_t>("ds", {1});
  EXPECT_FALSE(f.exists("nope"));
  EXPECT_FALSE(f.exists("nope/deeper/still"));
  EXPECT_FALSE(f.exists("ds/child"));
  EXPECT_EQ(f.kind("nope"), ObjectKind::None);
  EXPECT_TRUE(f.exists("/"));
}

TEST_F(group, EmptyGroupListsNothing) {
  auto f = File::create(file_path(), options());
  EXPECT_TRUE(f.create_group("empty").list().empty());
}

TEST_F(group, VisitWalksDepthFirstInNameOrder) {
  auto path = file_path();
  {
    auto f = File::create(path, options());
    f.create_group("b/inner");
    f.create_dataset<int32_t>("b/inner/x", {2});
    f.create_dataset<int32_t>("a", {1});
  }
  auto f = File::open(path, Mode::Read, options());
  std::vector<std::string> seen;
  f.visit([&](const std::string& p, ObjectKind k) { seen.push_back(p + (k == ObjectKind::Group ? "/" : "")); });
  EXPECT_EQ(seen, (std::vector<std::string>{"/a", "/b/", "/b/inner/", "/b/inner/x"}));
  seen.clear();
  f.group("b").visit([&](const std::string& p, ObjectKind) { seen.push_back(p); });
  EXPECT_EQ(seen, (std::vector<std::string>{"/b/inner", "/b/inner/x"}));
}
