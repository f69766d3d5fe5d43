// Conformance groups "references" (object references in attributes, compound
// members and variable-length sequences: what netCDF's dimension scales are made of),
// "reference_datasets" (datasets of them, which parallel HDF5 1.12+ cannot
// write) and "vlen_strings" (variable-length strings in datasets).
#include <cstddef>
#include <cstring>
#include <utility>

#include "conformance.hpp"
#include "h5loom/tools.hpp"

using namespace h5loom;

H5LOOM_CONFORMANCE_GROUP(references, "references");
H5LOOM_CONFORMANCE_GROUP(reference_datasets, "reference_datasets");
H5LOOM_CONFORMANCE_GROUP(vlen_strings, "vlen_strings");

namespace {

// netCDF's REFERENCE_LIST element: the dataset that uses a scale, and which of its dimensions.
struct DimensionUse {
  ObjectRef dataset;
  int32_t dimension;
};

Datatype dimension_use_type() {
  return Datatype::compound({{"dataset", offsetof(DimensionUse, dataset), Datatype::reference()},
                             {"dimension", offsetof(DimensionUse, dimension), Datatype::Int32}},
                            sizeof(DimensionUse));
}

}  // namespace

TEST_F(references, ReferencesInAttributesAndCompoundsResolveAfterAMoveAndReopen) {
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    auto time = f.create_dataset<double>("time", {4});
    f.create_group("grid/cells");
    auto temp = f.create_dataset<float>("grid/temperature", {4, 3});
    const ObjectRef targets[] = {f.reference("time"), f.reference("/grid/cells"), f.reference("grid/temperature"),
                                 f.reference("/")};
    EXPECT_FALSE(targets[0].is_null());
    EXPECT_NE(targets[0], targets[1]);
    EXPECT_EQ(f.reference("/time"), targets[0]);  // the same object gives the same reference
    // References in attributes: one, an array, and compounds holding them.
    time.set_attribute("users", std::vector<ObjectRef>{targets[2], targets[1], targets[3]});
    temp.set_attribute("scale", AttributeValue(targets[0]));
    DimensionUse uses[] = {{targets[2], 0}, {targets[2], 1}};
    time.set_attribute("REFERENCE_LIST", AttributeValue::from_raw(AttributeValue::Kind::Array, dimension_use_type(),
                                                                  2, uses));
    // Moving an object keeps references to it working.
    f.move("grid/cells", "grid/cells_v2");
  }
  auto f = File::open(path, Mode::Read, options());
  auto users = f.dataset("time").attribute("users").as_references();
  ASSERT_EQ(users.size(), 3u);
  EXPECT_EQ(f.dereference(users[0]), "/grid/temperature");
  EXPECT_EQ(f.dereference(users[1]), "/grid/cells_v2");
  EXPECT_EQ(f.dereference(users[2]), "/");
  EXPECT_EQ(f.dereference(f.dataset("grid/temperature").attribute("scale").as_references().at(0)), "/time");
  auto list = f.dataset("time").attribute("REFERENCE_LIST");
  ASSERT_EQ(list.dtype(), dimension_use_type());
  ASSERT_EQ(list.size(), 2u);
  DimensionUse got[2];
  std::memcpy(got, list.data(), sizeof got);
  EXPECT_EQ(f.dereference(got[0].dataset), "/grid/temperature");
  EXPECT_EQ(got[1].dimension, 1);
}

// netCDF-4's DIMENSION_LIST: on a variable, one sequence of references per
// axis, to the dimension scales it uses. Kept exactly, and translated into the
// new file by a conversion (to the log engine, or from it to hdf5).
TEST_F(references, ReferencesInsideSequencesResolveAfterReopenAndConvert) {
  const auto src = file_path("src"), dst = file_path("dst");
  const Datatype dimension_list = Datatype::sequence(Datatype::reference());
  {
    auto f = File::create(src, options());
    f.create_group("junk");  // objects made in an order that gives other tokens in the copy
    f.create_dataset<float>("x", {3});
    f.create_dataset<double>("time", {2});
    auto temp = f.create_dataset<float>("temperature", {2, 3});
    ObjectRef axis0[] = {f.reference("time")}, axis1[] = {f.reference("x"), f.reference("/")};
    VarSequence lists[] = {{1, axis0}, {2, axis1}};
    temp.set_attribute("DIMENSION_LIST", AttributeValue::from_raw(AttributeValue::Kind::Array, dimension_list, 2, lists));
  }
  const auto check = [&](File& f, const std::string& which) {
    const AttributeValue v = f.dataset("temperature").attribute("DIMENSION_LIST");
    ASSERT_EQ(v.dtype(), dimension_list) << which;
    ASSERT_EQ(v.size(), 2u) << which;
    ElementBuffer lists(dimension_list, 2);
    v.copy_elements(lists.data());
    VarSequence got[2];
    std::memcpy(got, lists.data(), sizeof got);
    ASSERT_EQ(got[0].length, 1u) << which;
    ASSERT_EQ(got[1].length, 2u) << which;
    const auto* axis0 = static_cast<const ObjectRef*>(got[0].data);
    const auto* axis1 = static_cast<const ObjectRef*>(got[1].data);
    EXPECT_EQ(f.dereference(axis0[0]), "/time") << which;
    EXPECT_EQ(f.dereference(axis1[0]), "/x") << which;
    EXPECT_EQ(f.dereference(axis1[1]), "/") << which;
  };
  {
    auto f = File::open(src, Mode::Read, options());
    check(f, "after reopen");
  }
  FileOptions in = options(), out = options();
  out.engine = conformance::env().base_engine == "log" ? "hdf5" : "log";
  convert_file(src, dst, in, out);
  auto f = File::open(dst, Mode::Read, out);
  check(f, "in the converted file");
}

TEST_F(reference_datasets, OneReferencePerRankResolvesAfterReopen) {
  const auto path = file_path();
  const uint64_t n = uint64_t(nranks());
  {
    auto f = File::create(path, options());
    f.create_dataset<double>("time", {4});
    f.create_group("grid/cells");
    f.create_dataset<float>("grid/temperature", {4, 3});
    auto refs = f.create_dataset<ObjectRef>("refs", {n});
    const ObjectRef targets[] = {f.reference("time"), f.reference("/grid/cells"), f.reference("grid/temperature"),
                                 f.reference("/")};
    refs.write(Selection::box({uint64_t(rank())}, {1}), &targets[rank() % 4], 1);
    f.move("grid/cells", "grid/cells_v2");  // a flush point: the write above has landed
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.dataset("refs").dtype(), Datatype::reference());
  auto refs = f.dataset("refs").read<ObjectRef>();
  const char* want[] = {"/time", "/grid/cells_v2", "/grid/temperature", "/"};
  for (uint64_t r = 0; r < n; ++r) EXPECT_EQ(f.dereference(refs[r]), want[r % 4]) << "element " << r;
  // Unwritten elements of a reference dataset are null references.
  auto f2 = File::create(file_path("unwritten"), options());
  EXPECT_TRUE(f2.create_dataset<ObjectRef>("refs", {2}).read<ObjectRef>()[1].is_null());
  // No fill value for references: null is the only default.
  DatasetSpec spec;
  spec.dtype = Datatype::reference();
  spec.shape = {1};
  spec.fill_with(uint64_t{7});
  EXPECT_THROW(f2.create_dataset("filled", spec), DatatypeError);
}

TEST_F(references, DanglingNullAndForeignReferencesAreRefusedOnEveryRank) {
  auto f = File::create(file_path(), options());
  f.create_dataset<int8_t>("gone", {1});
  const ObjectRef gone = f.reference("gone");
  EXPECT_THROW(f.reference("missing"), NotFoundError);
  EXPECT_THROW(f.dereference(ObjectRef{}), NotFoundError);
  f.remove("gone");
  EXPECT_THROW(f.dereference(gone), NotFoundError);
  // The file is still usable.
  f.create_group("after");
  EXPECT_EQ(f.dereference(f.reference("after")), "/after");
}

TEST_F(vlen_strings, VariableLengthStringsOfEveryLengthRoundTrip) {
  const auto path = file_path();
  const uint64_t n = 3 * uint64_t(nranks());
  auto text = [](uint64_t i) {
    if (i % 3 == 0) return std::string();  // empty strings stay empty
    return "element " + std::to_string(i) + std::string(i * 37 % 300, 'x') + " \xc3\xa9t\xc3\xa9";
  };
  {
    auto f = File::create(path, options());
    DatasetSpec spec;
    spec.dtype = Datatype::varstring(Datatype::Charset::Utf8);
    spec.shape = {n};
    spec.max_shape = {kUnlimited};
    auto names = f.create_dataset("names", spec);
    std::vector<std::string> mine;
    for (uint64_t i = 0; i < 3; ++i) mine.push_back(text(3 * uint64_t(rank()) + i));
    names.write(Selection::box({3 * uint64_t(rank())}, {3}), mine);
    mine.assign(3, "overwritten before the flush");  // write() keeps its own copy of strings
    f.flush();
    // A second step: the dataset grows, each rank writes one more string.
    names.extend({n + uint64_t(nranks())});
    names.write(Selection::box({n + uint64_t(rank())}, {1}), std::vector<std::string>{"step 2 of " + std::to_string(rank())});
    auto ascii = f.create_dataset<std::string>("ascii", {2});  // std::string writes to either charset
    (void)ascii;
    DatasetSpec a;
    a.dtype = Datatype::varstring(Datatype::Charset::Ascii);
    a.shape = {2};
    auto plain = f.create_dataset("plain", a);
    if (rank() == 0) plain.write(Selection::all(), std::vector<std::string>{"abc", "de"});
  }
  auto f = File::open(path, Mode::Read, options());
  auto names = f.dataset("names");
  EXPECT_EQ(names.dtype(), Datatype::varstring(Datatype::Charset::Utf8));
  auto all = names.read<std::string>();
  ASSERT_EQ(all.size(), n + uint64_t(nranks()));
  for (uint64_t i = 0; i < n; ++i) EXPECT_EQ(all[i], text(i)) << "element " << i;
  for (int r = 0; r < nranks(); ++r) EXPECT_EQ(all[n + uint64_t(r)], "step 2 of " + std::to_string(r));
  // Each rank reads a different part.
  auto part = names.read<std::string>(Selection::box({3 * uint64_t(rank()) + 1}, {2}));
  EXPECT_EQ(part, (std::vector<std::string>{text(3 * uint64_t(rank()) + 1), text(3 * uint64_t(rank()) + 2)}));
  EXPECT_EQ(f.dataset("plain").read<std::string>(), (std::vector<std::string>{"abc", "de"}));
  EXPECT_EQ(f.dataset("plain").dtype(), Datatype::varstring(Datatype::Charset::Ascii));
  EXPECT_EQ(f.dataset("ascii").read<std::string>(), (std::vector<std::string>{"", ""}));  // never written
}

TEST_F(vlen_strings, BadStringsAreRefusedAndLoseNothing) {
  auto f = File::create(file_path(), options());
  auto s = f.create_dataset<std::string>("s", {2});
  s.write(Selection::all(), std::vector<std::string>{"kept", "too"});
  EXPECT_THROW(s.write(Selection::box({0}, {1}), std::vector<std::string>{std::string("nul\0inside", 10)}),
               DatatypeError);
  EXPECT_THROW(s.write(Selection::box({0}, {1}), std::vector<std::string>{"a", "b"}), SelectionError);
  DatasetSpec spec;
  spec.dtype = Datatype::varstring();
  spec.shape = {1};
  spec.fill = {'x'};
  EXPECT_THROW(f.create_dataset("filled", spec), DatatypeError);
  EXPECT_EQ(s.read<std::string>(), (std::vector<std::string>{"kept", "too"}));
}

TEST_F(reference_datasets, ConvertTranslatesReferencesIntoTheNewFile) {
  const auto src = file_path("src"), dst = file_path("dst");
  {
    auto f = File::create(src, options());
    // Objects made in an order that gives them other tokens in the copy.
    f.create_group("z/late");
    f.create_dataset<int32_t>("a/early", {2});
    auto refs = f.create_dataset<ObjectRef>("refs", {3});
    std::vector<ObjectRef> values{f.reference("a/early"), ObjectRef{}, f.reference("z/late")};  // collective
    if (rank() == 0) refs.write(Selection::all(), std::move(values));  // kept by h5loom until the flush
    f.group("z").set_attribute("points_to", AttributeValue(f.reference("refs")));
  }
  FileOptions in = options(), out = options();
  out.engine = "log";
  convert_file(src, dst, in, out);
  auto f = File::open(dst, Mode::Read, out);
  auto refs = f.dataset("refs").read<ObjectRef>();
  EXPECT_EQ(f.dereference(refs[0]), "/a/early");
  EXPECT_TRUE(refs[1].is_null());
  EXPECT_EQ(f.dereference(refs[2]), "/z/late");
  EXPECT_EQ(f.dereference(f.group("z").attribute("points_to").as_references().at(0)), "/refs");
}

TEST_F(vlen_strings, ElementsKeepTheirPlaceWhenA2DDatasetGrows) {
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    DatasetSpec spec;
    spec.dtype = Datatype::varstring();
    spec.shape = {2, 2};
    spec.max_shape = {kUnlimited, 4};
    spec.chunks = {2, 2};
    spec.layout = Layout::Chunked;
    spec.layout_auto = false;
    auto grid = f.create_dataset("grid", spec);
    if (rank() == 0) grid.write(Selection::all(), std::vector<std::string>{"00", "01", "10", "11"});
    grid.extend({3, 3});
    if (rank() == nranks() - 1) grid.write(Selection::box({2, 0}, {1, 3}), std::vector<std::string>{"20", "21", "22"});
    // A strided selection: the right column.
    if (rank() == 0) grid.write(Selection::hyperslab({0, 2}, {2, 1}, {1, 1}), std::vector<std::string>{"02", "12"});
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.dataset("grid").read<std::string>(),
            (std::vector<std::string>{"00", "01", "02", "10", "11", "12", "20", "21", "22"}));
  EXPECT_EQ(f.dataset("grid").read<std::string>(Selection::hyperslab({0, 0}, {2, 2}, {2, 2})),
            (std::vector<std::string>{"00", "02", "20", "22"}));
}
