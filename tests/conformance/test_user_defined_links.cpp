// Conformance group "user_defined_links": links of a user-defined class
// (HDF5's H5Lcreate_ud) kept as their class and value bytes, never followed -
// an external-class value that is not a well-formed external link (HDF5 keeps
// it unchecked; h5loom refuses the ones HDF5 readers would follow past their
// end) and the links of classes an application registered.
#include <hdf5.h>

#include "conformance.hpp"
#include "h5loom/tools.hpp"

using namespace h5loom;

H5LOOM_CONFORMANCE_GROUP(user_defined_links, "user_defined_links");

namespace {
// An external-class value HDF5 cannot read as one (no NULs, and a first byte
// that is not version 0 of HDF5's external-link value).
const UserDefinedLink kNotExternal{kUserDefinedLinkClassMin, "udata"};
// Bytes of every value, NULs included, after a first byte of version 1.
UserDefinedLink every_byte() {
  std::string value(256, '\0');
  value[0] = '\x10';
  for (int i = 1; i < 256; ++i) value[std::size_t(i)] = char(255 - i);
  return UserDefinedLink{kUserDefinedLinkClassMin, value};
}

// The link kept at `path`. The hdf5 engine describes a link through HDF5's
// query callback of its class, which for the external class fails on a
// first byte other than version 0: HDF5 then tells only that it exists.
void expect_kept(const File& f, const std::string& path, const UserDefinedLink& link) {
  const auto kept = f.user_defined_link(path);
  ASSERT_TRUE(kept) << path;
  const bool over_hdf5 = f.engine_name().find("hdf5") != std::string::npos;  // "hdf5", or wrappers over it
  if (over_hdf5 && link.link_class == kUserDefinedLinkClassMin) {
    EXPECT_FALSE(kept->described()) << path;
    EXPECT_EQ(*kept, UserDefinedLink{}) << path;
  } else {
    EXPECT_TRUE(kept->described()) << path;
    EXPECT_EQ(*kept, link) << path;
  }
}
}  // namespace

TEST_F(user_defined_links, AreKeptAsGivenAndNotFollowed) {
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    f.create_user_defined_link("g/ud", kNotExternal);  // parents created
    f.create_user_defined_link("bytes", every_byte());
    f.create_user_defined_link("third", kNotExternal);
    expect_kept(f, "g/ud", kNotExternal);
    expect_kept(f, "bytes", every_byte());
    EXPECT_EQ(f.kind("g/ud"), ObjectKind::None);  // not followed
    EXPECT_FALSE(f.soft_link("g/ud"));
    EXPECT_FALSE(f.external_link("g/ud"));  // not a well-formed external link
    EXPECT_FALSE(f.external_link("bytes"));
    EXPECT_FALSE(f.user_defined_link("g"));
    EXPECT_FALSE(f.user_defined_link("nothing"));
    EXPECT_EQ(f.group("g").list(), std::vector<std::string>{"ud"});
    std::vector<std::string> seen;
    f.visit([&](const std::string& p, ObjectKind) { seen.push_back(p); });
    EXPECT_EQ(seen, std::vector<std::string>{"/g"});
    EXPECT_THROW(f.dataset("g/ud"), NotFoundError);
    EXPECT_THROW(f.create_group("g/ud/inside"), ExistsError);  // a path through it names nothing here
    EXPECT_THROW(f.create_user_defined_link("g/ud", kNotExternal), ExistsError);
    EXPECT_THROW(f.create_soft_link("g/ud", "/x"), ExistsError);
    // What HDF5 readers would follow past the value's end: a version 0
    // external-class value without its two NUL-terminated names, or none.
    EXPECT_THROW(f.create_user_defined_link("bad", UserDefinedLink{64, std::string("\0file-without-end", 17)}),
                 UsageError);
    EXPECT_THROW(f.create_user_defined_link("bad", UserDefinedLink{64, ""}), UsageError);
    // Not a user-defined class (the hard and soft ones are below 64), or no value, on every rank.
    EXPECT_THROW(f.create_user_defined_link("bad", UserDefinedLink{1, "x"}), UsageError);
    EXPECT_THROW(f.create_user_defined_link("bad", UserDefinedLink{256, "x"}), UsageError);
    EXPECT_THROW(f.create_user_defined_link("bad", UserDefinedLink{}), UsageError);
    // Another rank's mistake is raised here too.
    if (f.size() > 1)
      EXPECT_THROW(f.create_user_defined_link("bad", UserDefinedLink{f.rank() == 0 ? 300 : 64, "x"}), UsageError);
    f.move("g/ud", "h/moved");
    expect_kept(f, "h/moved", kNotExternal);
    f.remove("third");
    EXPECT_FALSE(f.user_defined_link("third"));
  }
  auto f = File::open(path, Mode::Read, options());
  expect_kept(f, "h/moved", kNotExternal);
  expect_kept(f, "bytes", every_byte());
  EXPECT_EQ(f.kind("h/moved"), ObjectKind::None);
  EXPECT_FALSE(f.user_defined_link("g/ud"));
  EXPECT_FALSE(f.user_defined_link("third"));
  EXPECT_EQ(f.kind("bad"), ObjectKind::None);
  if (f.supports("order")) EXPECT_EQ(f.list_in_creation_order(), (std::vector<std::string>{"g", "bytes", "h"}));
  EXPECT_THROW(f.create_user_defined_link("x", kNotExternal), ReadOnlyError);
}

// A class an application registered with HDF5 (H5Lregister): the hdf5 engine
// needs it registered to create a link of it, in every process - one that
// lacks it makes every rank refuse, none is left in HDF5's collective call.
// The other engines keep any class.
TEST_F(user_defined_links, AClassRegisteredOnSomeRanksOnlyIsRefusedOnEveryRankByHdf5) {
  constexpr int kClass = 200;
  // HDF5 takes a class only with a traversal callback: this one leads nowhere.
  static const H5L_class_t registered{
      H5L_LINK_CLASS_T_VERS, H5L_type_t(kClass), "h5loom conformance", nullptr, nullptr, nullptr,
      [](const char*, hid_t, const void*, size_t, hid_t, hid_t) -> hid_t { return H5I_INVALID_HID; }, nullptr,
      nullptr};
  // (EXPECT, not ASSERT: returning early on rank 0 would leave the others waiting below)
  if (rank() == 0) EXPECT_GE(H5Lregister(&registered), 0);
  {
    auto f = File::create(file_path(), options());
    const UserDefinedLink link{kClass, "value"};
    if (f.engine_name().find("hdf5") == std::string::npos || f.size() == 1) {
      f.create_user_defined_link("ud", link);  // registered wherever the hdf5 engine needs it
      EXPECT_TRUE(f.user_defined_link("ud"));
    } else {
      try {
        f.create_user_defined_link("ud", link);
        ADD_FAILURE() << "a class registered on rank 0 only was accepted on rank " << f.rank();
      } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("class 200 is not registered"), std::string::npos) << e.what();
      }
      EXPECT_FALSE(f.user_defined_link("ud"));
    }
  }
  if (rank() == 0) H5Lunregister(H5L_type_t(kClass));
}

TEST_F(user_defined_links, CopiesKeepThem) {
  auto f = File::create(file_path(), options());
  f.create_user_defined_link("run/ud", every_byte());
  if (f.engine_name().find("hdf5") != std::string::npos) {  // a link HDF5 cannot describe cannot be copied
    EXPECT_THROW(copy_object(f, "run", f, "copy"), UsageError);
    return;
  }
  copy_object(f, "run", f, "copy");
  expect_kept(f, "copy/ud", every_byte());
}
