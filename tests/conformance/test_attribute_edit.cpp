// Conformance group "attribute_edit": deleting and renaming attributes, and
// listing them in creation order, on the root group, a group and a dataset.
#include "conformance.hpp"

using namespace h5loom;
H5LOOM_CONFORMANCE_GROUP(attribute_edit, "attribute_edit");

using Names = std::vector<std::string>;

TEST_F(attribute_edit, DeleteRenameAndCreationOrderSurviveReopen) {
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    auto g = f.create_group("fields");
    auto ds = g.create_dataset<double>("rho", {4});
    for (Object* o : std::initializer_list<Object*>{&f, &g, &ds}) {
      o->set_attribute("zeta", int32_t(1));
      o->set_attribute("alpha", 2.5);
      o->set_attribute("mid", "text");
      o->set_attribute("gone", std::vector<int64_t>{7, 8});
      o->set_attribute("alpha", 3.5);  // overwriting makes it the newest
      o->remove_attribute("gone");
      o->rename_attribute("zeta", "omega");
      o->set_attribute("last", uint8_t(9));
      EXPECT_EQ(o->attribute_names_in_creation_order(), (Names{"omega", "mid", "alpha", "last"}));
      EXPECT_FALSE(o->has_attribute("gone"));
      EXPECT_FALSE(o->has_attribute("zeta"));
    }
  }
  auto f = File::open(path, Mode::Read, options());
  auto g = f.group("fields");
  auto ds = f.dataset("fields/rho");
  for (const Object* o : std::initializer_list<const Object*>{&f, &g, &ds}) {
    SCOPED_TRACE(o->path());
    EXPECT_EQ(o->attribute_names(), (Names{"alpha", "last", "mid", "omega"}));
    EXPECT_EQ(o->attribute_names_in_creation_order(), (Names{"omega", "mid", "alpha", "last"}));
    EXPECT_EQ(o->attribute("omega").as<int>(), 1);
    EXPECT_EQ(o->attribute("alpha").as<double>(), 3.5);
    EXPECT_EQ(o->attribute("mid").as_string(), "text");
    EXPECT_EQ(o->attribute("last").as<int>(), 9);
  }
}

TEST_F(attribute_edit, DeletedNameCanBeCreatedAgainAtTheEnd) {
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    f.set_attribute("a", 1);
    f.set_attribute("b", 2);
    f.remove_attribute("a");
    f.set_attribute("a", "again");
    f.rename_attribute("b", "b");  // to itself: nothing changes
  }
  auto f = File::open(path, Mode::ReadWrite, options());
  EXPECT_EQ(f.attribute_names_in_creation_order(), (Names{"b", "a"}));
  EXPECT_EQ(f.attribute("a").as_string(), "again");
  f.remove_attribute("b");  // in a later session of the file
  f.remove_attribute("a");
  EXPECT_TRUE(f.attribute_names().empty());
  EXPECT_TRUE(f.attribute_names_in_creation_order().empty());
}

TEST_F(attribute_edit, MisuseIsRefusedOnEveryRank) {
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    f.set_attribute("x", 1);
    f.set_attribute("y", 2);
    EXPECT_THROW(f.remove_attribute("nope"), NotFoundError);
    EXPECT_THROW(f.rename_attribute("nope", "z"), NotFoundError);
    EXPECT_THROW(f.rename_attribute("x", "y"), ExistsError);
    EXPECT_THROW(f.rename_attribute("x", "a/b"), UsageError);
    EXPECT_THROW(f.remove_attribute(""), UsageError);
    // Nothing changed, and the file still works.
    EXPECT_EQ(f.attribute_names_in_creation_order(), (Names{"x", "y"}));
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_THROW(f.remove_attribute("x"), ReadOnlyError);
  EXPECT_THROW(f.rename_attribute("x", "z"), ReadOnlyError);
  EXPECT_EQ(f.attribute("x").as<int>(), 1);
}
