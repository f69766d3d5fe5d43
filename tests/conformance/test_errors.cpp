// Conformance group "errors": every misuse raises its own error class with a
// message naming the file, the object and the wrong value, and the file stays
// usable afterwards.
#include "h5loom/engine.hpp"
#include <fstream>
#include <filesystem>

#include "conformance.hpp"
#include "h5loom/tools.hpp"

using namespace h5loom;
using conformance::env;
H5LOOM_CONFORMANCE_GROUP(errors, "errors");

// Runs `f`, expects error class E, and checks that the message contains every needle.
template <class E, class F>
static void expect_error(F&& f, std::initializer_list<std::string> needles) {
  try {
    f();
    ADD_FAILURE() << "expected an error, none was raised";
  } catch (const E& e) {
    for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << "message: " << e.what() << "\nmissing: " << n;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong error class: " << e.what();
  }
}

TEST_F(errors, OpeningAMissingFile) {
  auto path = file_path();
  remove_file(path);
  expect_error<NotFoundError>([&] { File::open(path, Mode::Read, options()); }, {path, "does not exist"});
  expect_error<NotFoundError>([&] { File::open(path, Mode::ReadWrite, options()); }, {path});
}

TEST_F(errors, MissingGroupDatasetAttribute) {
  auto f = File::create(file_path(), options());
  f.create_group("g");
  f.create_dataset<int32_t>("g/d", {1});
  expect_error<NotFoundError>([&] { f.group("nope"); }, {"'/nope'", f.filename()});
  expect_error<NotFoundError>([&] { f.dataset("g/missing"); }, {"'/g/missing'"});
  expect_error<NotFoundError>([&] { f.group("g/d"); }, {"'/g/d'", "is a dataset"});
  expect_error<NotFoundError>([&] { f.dataset("g"); }, {"'/g'", "is a group"});
  expect_error<NotFoundError>([&] { f.dataset("g/d").attribute("units"); }, {"'units'", "'/g/d'"});
  f.create_group("after");  // still usable
  EXPECT_TRUE(f.exists("after"));
}

TEST_F(errors, SelectionOutsideTheDataspaceLosesNothing) {
  auto f = File::create(file_path(), options());
  auto ds = f.create_dataset<int32_t>("data", {uint64_t(nranks()) * 2, 3});
  std::vector<int32_t> good(6, rank() + 1), bad(6, -1);
  ds.write(Selection::box({2 * uint64_t(rank()), 0}, {2, 3}), good);
  expect_error<SelectionError>([&] { ds.write(Selection::box({2 * uint64_t(nranks()) - 1, 0}, {2, 3}), bad); },
                               {"'/data'", dims_to_string({uint64_t(nranks()) * 2, 3}), "dimension 0"});
  expect_error<SelectionError>([&] { ds.write(Selection::box({0}, {6}), bad); }, {"'/data'", "dimensions"});
  expect_error<SelectionError>([&] { ds.read<int32_t>(Selection::hyperslab({0, 0}, {2, 2}, {1, 2}, {1, 2})); },
                               {"'/data'", "dimension 1"});
  auto all = ds.read<int32_t>();  // the good write is intact, the bad ones never happened
  for (int r = 0; r < nranks(); ++r)
    for (int i = 0; i < 6; ++i) ASSERT_EQ(all[r * 6 + i], r + 1);
}

TEST_F(errors, BufferAndTypeMismatch) {
  auto f = File::create(file_path(), options());
  auto ds = f.create_dataset<double>("x", {4});
  std::vector<double> three(3);
  std::vector<float> floats(4);
  expect_error<SelectionError>([&] { ds.write(Selection::all(), three); }, {"'/x'", "3 elements", "selects 4"});
  expect_error<DatatypeError>([&] { ds.write(Selection::all(), floats); }, {"'/x'", "float32", "float64"});
  expect_error<DatatypeError>([&] { ds.read<int32_t>(); }, {"'/x'", "int32", "float64"});
  EXPECT_EQ(f.pending_writes(), 0u);
}

TEST_F(errors, WritingToAReadOnlyFile) {
  auto path = file_path();
  {
    auto f = File::create(path, options());
    f.create_dataset<int32_t>("d", {2}, {kUnlimited});
    f.dataset("d").write_copy(Selection::all(), std::vector<int32_t>{7, 8});
  }
  auto f = File::open(path, Mode::Read, options());
  auto ds = f.dataset("d");
  std::vector<int32_t> v{1, 2};
  expect_error<ReadOnlyError>([&] { ds.write(Selection::all(), v); }, {path, "read-only", "'/d'"});
  expect_error<ReadOnlyError>([&] { f.create_group("g"); }, {path, "'/g'"});
  expect_error<ReadOnlyError>([&] { f.create_dataset<int32_t>("e", {1}); }, {"'/e'"});
  expect_error<ReadOnlyError>([&] { ds.set_attribute("a", 1); }, {"'a'"});
  expect_error<ReadOnlyError>([&] { ds.extend({4}); }, {"'/d'"});
  EXPECT_EQ(ds.read<int32_t>(), (std::vector<int32_t>{7, 8}));
}

TEST_F(errors, CreatingANameThatExists) {
  auto f = File::create(file_path(), options());
  f.create_group("g");
  f.create_dataset<int32_t>("d", {1});
  expect_error<ExistsError>([&] { f.create_group("g"); }, {"'/g'", "exists"});
  expect_error<ExistsError>([&] { f.create_dataset<int32_t>("g", {1}); }, {"'/g'", "group"});
  expect_error<ExistsError>([&] { f.create_dataset<int32_t>("d", {1}); }, {"'/d'", "dataset"});
  expect_error<ExistsError>([&] { f.create_group("d/sub"); }, {"'/d'", "not a group"});
  auto path = file_path("exclusive");
  { File::create(path, options()).create_group("keep"); }
  expect_error<ExistsError>([&] { File::create_exclusive(path, options()); }, {path, "exists"});
  EXPECT_TRUE(File::open(path, Mode::Read, options()).exists("keep"));  // nothing lost
}

TEST_F(errors, UnknownEngineAndConfigurationKey) {
  FileOptions o = options();
  o.engine = "no-such-engine";
  expect_error<ConfigError>([&] { File::create(file_path(), o); }, {"'no-such-engine'", "hdf5"});
  o.engine = R"({"engine": ")" + env().base_engine + R"(", ")" + env().base_engine + R"(": {"no_such_knob": 1}})";
  expect_error<ConfigError>([&] { File::create(file_path(), o); }, {"no_such_knob"});
  o.engine = R"({"engine": ")" + env().base_engine + R"(", "colour": "blue"})";
  expect_error<ConfigError>([&] { File::create(file_path(), o); }, {"'colour'"});
  o.engine = R"({"engine": )";
  expect_error<ConfigError>([&] { File::create(file_path(), o); }, {"not valid JSON"});
  o.engine = R"({"engine": ")" + env().base_engine + R"(", "wrappers": ["nope"]})";
  expect_error<ConfigError>([&] { File::create(file_path(), o); }, {"'nope'"});
}

TEST_F(errors, UsingAClosedFileAndBadNames) {
  auto f = File::create(file_path(), options());
  auto ds = f.create_dataset<int32_t>("d", {1});
  expect_error<UsageError>([&] { f.create_group("a/../b"); }, {"'..'"});
  expect_error<UsageError>([&] { ds.set_attribute("a/b", 1); }, {"'a/b'"});
  f.close();
  f.close();  // closing twice is harmless
  expect_error<UsageError>([&] { f.create_group("x"); }, {f.filename(), "closed"});
  expect_error<UsageError>([&] { ds.read<int32_t>(); }, {"'/d'", "closed"});
}

TEST_F(errors, CorruptAndTruncatedFilesRaise) {
  auto garbage = file_path("garbage");
  if (rank() == 0) {
    std::ofstream out(garbage, std::ios::binary);
    for (int i = 0; i < 4096; ++i) out.put(char(i * 7));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_THROW(File::open(garbage, Mode::Read, options()), Error);

  auto truncated = file_path("truncated");
  {
    auto f = File::create(truncated, options());
    auto ds = f.create_dataset<double>("big", {100000});
    if (rank() == 0) ds.write_copy(Selection::all(), std::vector<double>(100000, 1.0));
  }
  if (is_url(truncated)) GTEST_SKIP() << "cutting an object of a remote store is not done from here";
  if (rank() == 0) {
    // Cut the engine's largest file (the one holding the data) in half.
    std::string largest;
    for (const auto& piece : h5loom::file_storage(truncated, options().engine))
      if (largest.empty() || std::filesystem::file_size(piece.location) > std::filesystem::file_size(largest))
        largest = piece.location;
    std::filesystem::resize_file(largest, std::filesystem::file_size(largest) / 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_THROW(
      {
        auto f = File::open(truncated, Mode::Read, options());
        f.dataset("big").read<double>();
      },
      Error);
}

TEST_F(errors, CollectiveMismatchIsReportedNotHung) {
  if (nranks() < 2) GTEST_SKIP() << "needs at least 2 ranks";
  FileOptions o = options();
  o.engine = R"({"engine": ")" + env().base_engine + R"(", "wrappers": ["collcheck"]})";
  auto path = file_path();
  {
    auto f = File::create(path, o);
    try {
      f.create_group(rank() == 0 ? "zero" : "other");
      ADD_FAILURE() << "mismatched create_group calls were not reported";
    } catch (const CollectiveMismatchError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("rank 0 called"), std::string::npos) << m;
      EXPECT_NE(m.find("'/zero'"), std::string::npos) << m;
      EXPECT_NE(m.find("'/other'"), std::string::npos) << m;
      EXPECT_NE(m.find(path), std::string::npos) << m;
    }
    f.create_group("agreed");  // the file is still usable
  }
  auto f = File::open(path, Mode::Read, o);
  EXPECT_EQ(f.list(), std::vector<std::string>{"agreed"});
  // Differing attribute values are a mismatch too (HDF5 needs identical metadata on all ranks).
  auto g = File::open(path, Mode::ReadWrite, o);
  EXPECT_THROW(g.set_attribute("rank", rank()), CollectiveMismatchError);
  g.set_attribute("same", 1);
}

// One rank's bad argument to a collective call raises on every rank (with that
// rank's message), never leaves the others waiting, and the file stays usable.
TEST_F(errors, OneRankBadArgumentRaisesOnEveryRank) {
  auto path = file_path();
  const bool me = rank() == nranks() - 1;  // the one rank that makes the mistake
  auto f = File::create(path, options());
  auto ds = f.create_dataset<int32_t>("data", {uint64_t(nranks()) * 2});
  expect_error<SelectionError>([&] { f.create_dataset<int32_t>("bad", me ? Dims(33, 1) : Dims{4}); },
                               {"'/bad'", "33 dimensions"});
  expect_error<SelectionError>([&] { ds.extend(me ? Dims{1} : Dims{uint64_t(nranks()) * 2}); }, {"'/data'"});
  expect_error<UsageError>([&] { f.set_attribute(me ? "a/b" : "fine", 1); }, {"'a/b'"});
  expect_error<SelectionError>(
      [&] { ds.read<int32_t>(me ? Selection::box({uint64_t(nranks()) * 2}, {1}) : Selection::box({0}, {1})); },
      {"'/data'", "dimension 0"});
  EXPECT_FALSE(f.exists("bad"));
  ds.write(Selection::box({2 * uint64_t(rank())}, {2}), std::vector<int32_t>{rank(), rank()});
  f.set_attribute("fine", 2);
  f.close();
  auto r = File::open(path, Mode::Read, options());
  auto all = r.dataset("data").read<int32_t>();
  for (int k = 0; k < nranks(); ++k) EXPECT_EQ(all[2 * k], k);
  EXPECT_EQ(r.attribute("fine").as<int>(), 2);
}

// Ranks that choose different engines for one file get an error, all of them.
TEST_F(errors, RanksChoosingDifferentEnginesRaiseOnEveryRank) {
  if (nranks() < 2) GTEST_SKIP() << "needs at least 2 ranks";
  FileOptions o = options();
  if (rank() == 1) o.engine = env().base_engine == "log" ? "hdf5" : "log";
  expect_error<ConfigError>([&] { File::create(file_path(), o); }, {"every rank must choose the same engine"});
}

// Ranks that open different files, or one file in different modes, get an error, all of them.
TEST_F(errors, RanksOpeningDifferentFilesOrModesRaiseOnEveryRank) {
  if (nranks() < 2) GTEST_SKIP() << "needs at least 2 ranks";
  auto path = file_path();
  File::create(path, options()).close();
  expect_error<CollectiveMismatchError>([&] { File::open(rank() == 1 ? path + ".other" : path, Mode::Read, options()); },
                                        {"rank 1 opens", "every rank"});
  expect_error<CollectiveMismatchError>([&] { File::open(path, rank() == 1 ? Mode::ReadWrite : Mode::Read, options()); },
                                        {"another mode"});
  File::open(path, Mode::Read, options()).close();  // and then it opens
}
