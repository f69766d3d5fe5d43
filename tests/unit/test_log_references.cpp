// The log engine keeps nothing nameless: an object's last name cannot go while
// references are held on it (H5Oincr_refcount); it goes once they are released.
// One rank (MPI initialised by h5loom::File; finalised by test_log_visible's environment).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "h5loom/h5loom.hpp"

using namespace h5loom;
namespace fs = std::filesystem;

TEST(LogReferences, AnObjectWithHeldReferencesKeepsItsLastName) {
  const fs::path dir = fs::temp_directory_path() / ("h5loom-references-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  FileOptions options;
  options.engine = "log";
  options.comm = MPI_COMM_SELF;
  {
    auto f = File::create((dir / "r.h5").string(), options);
    f.create_group("keep/inner");
    f.change_reference_count("keep/inner", +1);
    EXPECT_THROW(f.remove("keep"), UsageError);       // it would take the held group with it
    EXPECT_THROW(f.remove("keep/inner"), UsageError);
    EXPECT_EQ(f.kind("keep/inner"), ObjectKind::Group);  // nothing lost
    f.create_hard_link("alias", "keep/inner");
    f.remove("keep");  // another name keeps it: fine
    EXPECT_EQ(f.link_count("alias"), 2u);
    f.change_reference_count("alias", -1);
    f.remove("alias");
    EXPECT_FALSE(f.exists("alias"));
  }
  fs::remove_all(dir);
}
