// Conformance group "reference_counts": HDF5's H5Oincr_refcount and
// H5Odecr_refcount - references held on an object besides its names, counted
// with them by link_count, kept after reopen; releasing one the object does
// not hold is refused and the object stays.
#include "conformance.hpp"

using namespace h5loom;

H5LOOM_CONFORMANCE_GROUP(reference_counts, "reference_counts");

TEST_F(reference_counts, HeldReferencesCountWithTheNames) {
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    f.create_group("g");
    f.create_dataset<double>("g/d", {4});
    EXPECT_EQ(f.link_count("g"), 1u);
    EXPECT_EQ(f.change_reference_count("g", +1), 2u);
    EXPECT_EQ(f.change_reference_count("g", +1), 3u);
    EXPECT_EQ(f.change_reference_count("g", -1), 2u);
    EXPECT_EQ(f.change_reference_count("g/d", +1), 2u);
    EXPECT_EQ(f.link_count("g/d"), 2u);
  }
  auto f = File::open(path, Mode::ReadWrite, options());
  EXPECT_EQ(f.link_count("g"), 2u);
  EXPECT_EQ(f.link_count("g/d"), 2u);
  EXPECT_EQ(f.change_reference_count("g/d", -1), 1u);
  EXPECT_EQ(f.change_reference_count("g", -1), 1u);
  // Nothing held: a release would delete an object its name still names.
  EXPECT_THROW(f.change_reference_count("g", -1), UsageError);
  EXPECT_THROW(f.change_reference_count("g", 2), UsageError);
  EXPECT_THROW(f.change_reference_count("nothing", 1), NotFoundError);
  EXPECT_EQ(f.link_count("g"), 1u);
  EXPECT_EQ(f.kind("g/d"), ObjectKind::Dataset);
}
