// Conformance groups "links" (deleting, renaming, soft links), "order"
// (creation-order listing) and "fill" (fill values).
#include <cstdio>
#include <cstring>

#include "conformance.hpp"

using namespace h5loom;

H5LOOM_CONFORMANCE_GROUP(links, "links");
H5LOOM_CONFORMANCE_GROUP(order, "order");
H5LOOM_CONFORMANCE_GROUP(fill, "fill");

TEST_F(links, DeleteRenameAndSoftLinksSurviveReopen) {
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    auto a = f.create_dataset<int32_t>("data/a", {uint64_t(nranks())});
    int32_t v = 10 + rank();
    a.write(Selection::box({uint64_t(rank())}, {1}), &v, 1);  // deferred: lands before the move
    f.create_dataset<double>("data/gone", {2});
    f.create_group("old/deep/er");
    f.move("data/a", "moved/a");  // a missing parent is created
    f.remove("data/gone");
    f.remove("old");              // with everything below it
    f.create_soft_link("latest", "/moved/a");
    f.create_soft_link("dangling", "/nowhere");
    EXPECT_EQ(f.soft_link("latest").value_or(""), "/moved/a");
    EXPECT_FALSE(f.soft_link("moved/a").has_value());
    EXPECT_EQ(f.kind("latest"), ObjectKind::Dataset);  // followed
    EXPECT_EQ(f.kind("dangling"), ObjectKind::None);
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.list(), (std::vector<std::string>{"dangling", "data", "latest", "moved"}));
  EXPECT_TRUE(f.group("data").list().empty());
  EXPECT_FALSE(f.exists("old"));
  auto all = f.dataset("latest").read<int32_t>();
  for (int r = 0; r < nranks(); ++r) EXPECT_EQ(all[r], 10 + r);
  EXPECT_EQ(f.soft_link("dangling").value_or(""), "/nowhere");
  std::vector<std::string> seen;
  f.visit([&](const std::string& p, ObjectKind) { seen.push_back(p); });  // soft links are not followed
  EXPECT_EQ(seen, (std::vector<std::string>{"/data", "/moved", "/moved/a"}));
}

TEST_F(links, MisuseIsRefusedOnEveryRank) {
  auto f = File::create(file_path(), options());
  f.create_group("g/h");
  f.create_dataset<int8_t>("x", {1});
  EXPECT_THROW(f.remove("missing"), NotFoundError);
  EXPECT_THROW(f.move("missing", "y"), NotFoundError);
  EXPECT_THROW(f.move("g", "g/h/inside"), UsageError);
  EXPECT_THROW(f.move("x", "g"), ExistsError);
  EXPECT_THROW(f.remove("/"), UsageError);
  f.create_soft_link("s", "/nowhere");
  EXPECT_THROW(f.create_dataset<int8_t>("s", {1}), ExistsError);
  EXPECT_THROW(f.create_soft_link("x", "/g"), ExistsError);
  EXPECT_THROW(f.create_group("s/under"), ExistsError);  // below a dangling soft link
  // The file is still usable.
  f.move("x", "g/x");
  EXPECT_EQ(f.group("g").list(), (std::vector<std::string>{"h", "x"}));
}

TEST_F(links, HandlesAreOpenedAgainAfterAMoveAndLinksToTheRootWork) {
  auto f = File::create(file_path(), options());
  auto a = f.create_dataset<int32_t>("a", {uint64_t(nranks())});
  f.create_group("g");
  f.create_soft_link("root", "/");
  EXPECT_EQ(f.kind("root/g"), ObjectKind::Group);
  EXPECT_EQ(f.kind("root/root/a"), ObjectKind::Dataset);
  f.move("g", "h");
  int32_t v = rank();
  // A write is not collective and must not ask the engine: the handle is opened again first.
  EXPECT_THROW(a.write_copy(Selection::box({uint64_t(rank())}, {1}), &v, 1), UsageError);
  auto again = f.dataset("root/a");
  again.write_copy(Selection::box({uint64_t(rank())}, {1}), &v, 1);
  auto all = f.dataset("a").read<int32_t>();
  for (int r = 0; r < nranks(); ++r) EXPECT_EQ(all[r], r);
}

TEST_F(order, MembersListInCreationOrder) {
  const auto path = file_path();
  const std::vector<std::string> created = {"zeta", "alpha", "mid", "beta"};
  {
    auto f = File::create(path, options());
    auto g = f.create_group("g");
    for (const auto& n : created) {
      if (n == "mid") g.create_group(n);
      else g.create_dataset<float>(n, {1});
    }
    EXPECT_EQ(g.list_in_creation_order(), created);
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.group("g").list_in_creation_order(), created);
  EXPECT_EQ(f.group("g").list(), (std::vector<std::string>{"alpha", "beta", "mid", "zeta"}));
}

// HDF5's creation order values: not reused while the group has members, from
// 0 again once it is empty, kept after reopen (deleting needs "links").
TEST_F(order, CreationOrderValuesAreNotReused) {
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    auto g = f.create_group("g");
    for (const char* n : {"a", "b", "c"}) g.create_group(n);
    EXPECT_EQ(g.creation_order("c"), 2);
    EXPECT_EQ(g.next_creation_order(), 3);
    if (f.supports("links")) {
      g.remove("b");
      g.create_group("d");
      EXPECT_EQ(g.creation_order("c"), 2);
      EXPECT_EQ(g.creation_order("d"), 3);
    }
    EXPECT_THROW(g.creation_order("missing"), NotFoundError);
  }
  {
    auto f = File::open(path, Mode::ReadWrite, options());
    auto g = f.group("g");
    const bool links = f.supports("links");
    EXPECT_EQ(g.creation_order(links ? "d" : "c"), links ? 3 : 2);
    EXPECT_EQ(g.next_creation_order(), links ? 4 : 3);
    if (links) {
      for (const auto& n : g.list()) g.remove(n);
      EXPECT_EQ(g.next_creation_order(), 0);  // empty: from 0 again
      g.create_group("e");
      EXPECT_EQ(g.creation_order("e"), 0);
    }
  }
}

TEST_F(fill, UnwrittenElementsReadAsTheFillValue) {
  const auto path = file_path();
  {
    const double v = rank();  // before the file: the deferred write reads it when the file closes
    auto f = File::create(path, options());
    DatasetSpec spec;
    spec.dtype = Datatype::Float64;
    spec.shape = {4 * uint64_t(nranks())};
    spec.fill_with(-1.5);
    auto ds = f.create_dataset("partly", spec);
    ds.write(Selection::box({4 * uint64_t(rank()) + 1}, {1}), &v, 1);  // one of four per rank
    spec.fill = {1, 2, 3};
    EXPECT_THROW(f.create_dataset("bad", spec), DatatypeError);
  }
  auto f = File::open(path, Mode::Read, options());
  auto ds = f.dataset("partly");
  ASSERT_EQ(ds.fill_value().size(), 8u);
  double fill;
  std::memcpy(&fill, ds.fill_value().data(), 8);
  EXPECT_EQ(fill, -1.5);
  auto all = ds.read<double>();
  for (int r = 0; r < nranks(); ++r)
    for (int k = 0; k < 4; ++k) EXPECT_EQ(all[4 * r + k], k == 1 ? double(r) : -1.5) << r << " " << k;
}

H5LOOM_CONFORMANCE_GROUP(external, "external");

TEST_F(external, ExternalStorageAndVirtualMappingsRead) {
  const auto path = file_path();
  const std::string raw = path + ".raw";  // absolute when the scratch directory is
  std::vector<int32_t> values(12);
  for (int i = 0; i < 12; ++i) values[std::size_t(i)] = 100 + i;
  if (rank() == 0) {
    std::FILE* out = std::fopen(raw.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    std::fwrite("HEAD", 1, 4, out);  // the data starts 4 bytes in
    std::fwrite(values.data(), 4, values.size(), out);
    std::fclose(out);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  {
    auto f = File::create(path, options());
    DatasetSpec ext;
    ext.dtype = Datatype::Int32;
    ext.shape = {3, 4};
    ext.external = {{raw, 4, 24}, {raw, 28, 24}};  // two segments: rows 0-1.5, then the rest
    f.create_dataset("ext", ext);
    DatasetSpec part;
    part.dtype = Datatype::Int32;
    part.shape = {2};
    auto a = f.create_dataset("parts/a", part);
    auto b = f.create_dataset("parts/b", part);
    std::vector<int32_t> av = {1, 2}, bv = {3, 4};
    a.write_copy(Selection::all(), av);
    b.write_copy(Selection::all(), bv);
    DatasetSpec vds;
    vds.dtype = Datatype::Int32;
    vds.shape = {6};
    vds.virtual_map = {{{0}, {2}, ".", "/parts/b"}, {{4}, {2}, ".", "/parts/a"}};
    f.create_dataset("virtual", vds);
    // A box of a larger source of another rank: elements 1..4 of a 1-D source,
    // row-major, onto a 2 x 2 box (the log engine's front file maps its log so).
    DatasetSpec line;
    line.dtype = Datatype::Int32;
    line.shape = {6};
    std::vector<int32_t> lv = {10, 11, 12, 13, 14, 15};
    f.create_dataset("parts/line", line).write_copy(Selection::all(), lv);
    DatasetSpec square;
    square.dtype = Datatype::Int32;
    square.shape = {2, 3};
    VirtualMapping m{{0, 1}, {2, 2}, ".", "/parts/line", {6}, {1}, {4}};
    square.virtual_map = {m};
    f.create_dataset("square", square);
    // Refused, naming the source: 3 elements for a box of 4, or a box past the source's end.
    struct Bad {
      uint64_t start, count;
      std::string message;
    };
    for (const Bad& bad : {Bad{1, 3, "'/parts/line' has 3 elements"}, Bad{3, 4, "'/parts/line' ends at 7 in dimension 0"}}) {
      m.source_start = {bad.start}, m.source_count = {bad.count};
      square.virtual_map = {m};
      try {
        f.create_dataset("bad", square);
        ADD_FAILURE() << "a mapping was accepted: " << bad.message;
      } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find(bad.message), std::string::npos) << e.what();
      }
    }
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.dataset("ext").read<int32_t>(), values);
  // HDF5 before 1.14 reads virtual datasets only without MPI-IO (h5py, h5dump,
  // the log engine's front file readers do): through it, an error naming the
  // dataset, never wrong values.
  try {
    EXPECT_EQ(f.dataset("virtual").read<int32_t>(), (std::vector<int32_t>{3, 4, 0, 0, 1, 2}));
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("'/virtual'"), std::string::npos) << e.what();
  }
  try {
    EXPECT_EQ(f.dataset("square").read<int32_t>(), (std::vector<int32_t>{0, 11, 12, 0, 13, 14}));
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("'/square'"), std::string::npos) << e.what();
  }
}
