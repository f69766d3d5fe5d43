// Conformance group "external_links": links to an object of another file
// (HDF5's H5Lcreate_external), kept as they were made and never followed by
// h5loom - HDF5 readers and the VOL connector follow them.
#include "conformance.hpp"
#include "h5loom/tools.hpp"

using namespace h5loom;

H5LOOM_CONFORMANCE_GROUP(external_links, "external_links");

TEST_F(external_links, AreKeptAndListedButNotFollowed) {
  const auto path = file_path(), other = file_path("target");
  {
    auto t = File::create(other, options());
    t.create_dataset<double>("data", {2});
  }
  {
    auto f = File::create(path, options());
    f.create_external_link("g/ext", other, "data");  // parents created, the target path taken from the root
    f.create_external_link("dangling", "no-such-file.h5", "/x");
    EXPECT_EQ(f.external_link("g/ext"), (ExternalLink{other, "/data"}));
    EXPECT_EQ(f.kind("g/ext"), ObjectKind::None);  // not followed
    EXPECT_FALSE(f.soft_link("g/ext"));
    EXPECT_FALSE(f.external_link("g"));
    EXPECT_EQ(f.group("g").list(), std::vector<std::string>{"ext"});
    std::vector<std::string> seen;
    f.visit([&](const std::string& p, ObjectKind) { seen.push_back(p); });
    EXPECT_EQ(seen, std::vector<std::string>{"/g"});
    EXPECT_THROW(f.dataset("g/ext"), NotFoundError);
    EXPECT_THROW(f.create_group("g/ext/inside"), ExistsError);  // a path through it names nothing here
    EXPECT_THROW(f.create_external_link("g/ext", other, "/data"), ExistsError);
    EXPECT_THROW(f.create_dataset<int8_t>("g/ext", {1}), ExistsError);
    if (f.supports("links")) {
      f.move("g/ext", "h/moved");
      EXPECT_EQ(f.external_link("h/moved"), (ExternalLink{other, "/data"}));
      f.remove("dangling");
      EXPECT_FALSE(f.external_link("dangling"));
    }
    // Another rank's mistake is raised here too.
    if (f.size() > 1) EXPECT_THROW(f.create_external_link("bad", f.rank() == 0 ? "" : other, "/data"), UsageError);
  }
  auto f = File::open(path, Mode::Read, options());
  const std::string at = f.supports("links") ? "h/moved" : "g/ext";
  EXPECT_EQ(f.external_link(at), (ExternalLink{other, "/data"}));
  EXPECT_EQ(f.kind(at), ObjectKind::None);
  EXPECT_EQ(f.kind("bad"), ObjectKind::None);
  EXPECT_FALSE(f.external_link("bad"));
  if (f.supports("order")) EXPECT_EQ(f.list_in_creation_order().front(), "g");
  EXPECT_THROW(f.create_external_link("x", other, "/data"), ReadOnlyError);
}

TEST_F(external_links, CopiesKeepThem) {
  const auto path = file_path();
  auto f = File::create(path, options());
  f.create_external_link("run/ext", "elsewhere.h5", "/a/b");
  copy_object(f, "run", f, "copy");
  EXPECT_EQ(f.external_link("copy/ext"), (ExternalLink{"elsewhere.h5", "/a/b"}));
}
