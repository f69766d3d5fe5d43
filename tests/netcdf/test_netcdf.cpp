// The netCDF layer (issue 19), on every engine that yields an HDF5 file, at
// any number of ranks: definitions and data round-trip; a file reopened for
// append gains dimensions and variables whose scales' REFERENCE_LISTs name
// every user; records grow; PIO's rearranger writes frames of a record
// variable; numbers convert as netCDF converts them; bad calls raise the
// class netCDF users expect, naming the object and the value, on every rank.
// (netCDF readers no one here wrote: tests/python/interop/test_netcdf_readers.py.)
//   test_netcdf DIR   (under mpirun)
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>

#include "h5loom/netcdf.hpp"
#include "h5loom/pio.hpp"

using namespace h5loom;
namespace nc = h5loom::netcdf;

namespace {

std::string g_dir;
int g_rank = 0, g_size = 1;

class NetcdfTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string path(const std::string& tag) const {
    std::string engine = GetParam();
    for (char& c : engine)
      if (c == '+') c = '_';
    return g_dir + "/netcdf-" + tag + "-" + engine + "-np" + std::to_string(g_size) + ".nc";
  }
  FileOptions options() const {
    FileOptions o;
    o.engine = GetParam();
    return o;
  }
};

template <class Fn>
void expect_error_containing(Fn&& fn, ErrorCode code, const std::string& text) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one containing '" << text << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

// Each rank writes the rows i with i % size == rank of a [records, ny, nx] field.
float field_value(uint64_t t, uint64_t i, uint64_t j) { return float(1000 * t + 10 * i + j); }

TEST_P(NetcdfTest, DefinitionsAndDataRoundTrip) {
  const auto p = path("roundtrip");
  const uint64_t ny = 5, nx = 3;
  {
    auto f = nc::File::create(p, options());
    EXPECT_TRUE(f.in_define_mode());
    EXPECT_EQ(f.define_dimension("time", nc::kUnlimitedLength).id, 0);
    EXPECT_EQ(f.define_dimension("y", ny).id, 1);
    f.define_dimension("x", nx);
    auto y = f.define_variable("y", Datatype::Float64, {"y"});
    auto field = f.define_variable("field", Datatype::Float32, {"time", "y", "x"});
    field.set_attribute("units", "m s-1");
    field.set_fill_value(-1.0f);
    expect_error_containing([&] { f.define_variable("scalar", Datatype::Int32, {}); }, ErrorCode::Usage,
                            "scalar variables");
    f.set_attribute("title", "round trip");
    f.set_attribute("answer", int64_t(42));
    EXPECT_TRUE(y.is_coordinate());
    EXPECT_FALSE(field.is_coordinate());
    EXPECT_TRUE(field.is_record());
    f.end_define();
    EXPECT_FALSE(f.in_define_mode());
    f.set_records(2);
    EXPECT_EQ(field.shape(), (Dims{2, ny, nx}));
    if (g_rank == 0) {
      y.write<double>({}, {}, {0, 1, 2, 3, 4});
    }
    for (uint64_t t = 0; t < 2; ++t)
      for (uint64_t i = uint64_t(g_rank); i < ny; i += uint64_t(g_size)) {
        if (t == 1 && i == ny - 1) continue;  // stays fill
        std::vector<float> row;
        for (uint64_t j = 0; j < nx; ++j) row.push_back(field_value(t, i, j));
        field.write({t, i, 0}, {1, 1, nx}, row);
      }
    f.close();
  }
  auto f = nc::File::open(p, Mode::Read, options());
  ASSERT_EQ(f.dimensions().size(), 3u);
  EXPECT_EQ(f.dimension("time").length, 2u);
  EXPECT_TRUE(f.dimension("time").unlimited);
  EXPECT_EQ(f.dimension("x").id, 2);
  EXPECT_EQ(f.records(), 2u);
  std::vector<std::string> names;
  for (auto& v : f.variables()) names.push_back(v.name());
  EXPECT_EQ(names, (std::vector<std::string>{"y", "field"}));  // definition order
  auto field = f.variable("field");
  EXPECT_EQ(field.dimensions(), (std::vector<std::string>{"time", "y", "x"}));
  EXPECT_EQ(field.dtype(), Datatype::Float32);
  EXPECT_EQ(field.attribute_names(), (std::vector<std::string>{"units", "_FillValue"}));
  EXPECT_EQ(field.attribute("units").as_string(), "m s-1");
  EXPECT_EQ(f.attribute_names(), (std::vector<std::string>{"title", "answer"}));
  EXPECT_EQ(f.attribute("answer").as<int64_t>(), 42);
  const auto values = field.read<float>();
  ASSERT_EQ(values.size(), 2 * ny * nx);
  for (uint64_t t = 0; t < 2; ++t)
    for (uint64_t i = 0; i < ny; ++i)
      for (uint64_t j = 0; j < nx; ++j)
        ASSERT_EQ(values[(t * ny + i) * nx + j], (t == 1 && i == ny - 1) ? -1.0f : field_value(t, i, j))
            << t << "," << i << "," << j;
  // Each rank reads its own box.
  const uint64_t i = uint64_t(g_rank) % ny;
  EXPECT_EQ(field.read<float>({0, i, 1}, {1, 1, 2}), (std::vector<float>{field_value(0, i, 1), field_value(0, i, 2)}));
  // The bookkeeping is hidden from attribute lists but there in the file.
  auto ds = f.variable("field").dataset();
  EXPECT_TRUE(ds.has_attribute("DIMENSION_LIST"));
  EXPECT_EQ(ds.attribute("_Netcdf4Coordinates").as_vector<int>(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(f.storage().dataset("x").attribute("NAME").as_string().rfind("This is a netCDF dimension", 0), 0u);
  f.close();
}

TEST_P(NetcdfTest, AVariableMayComeBeforeItsDimensionsCoordinateVariable) {
  const auto p = path("order");
  {
    auto f = nc::File::create(p, options());
    f.define_dimension("x", 3);
    auto t = f.define_variable("T", Datatype::Float32, {"x"});  // before x's coordinate variable
    t.set_fill_value(-1.0f);
    auto x = f.define_variable("x", Datatype::Float64, {"x"});
    f.end_define();
    if (g_rank == 0) x.write<double>({}, {}, {0.5, 1.5, 2.5});
  }
  auto f = nc::File::open(p, Mode::Read, options());
  EXPECT_EQ(f.variable("T").dimensions(), std::vector<std::string>{"x"});
  EXPECT_EQ(f.variable("T").read<float>(), (std::vector<float>{-1, -1, -1}));
  EXPECT_TRUE(f.variable("x").is_coordinate());
  EXPECT_EQ(f.storage().dataset("x").attribute("REFERENCE_LIST").size(), 1u);
  std::vector<std::string> names;
  for (auto& v : f.variables()) names.push_back(v.name());
  EXPECT_EQ(names, (std::vector<std::string>{"T", "x"}));  // definition order
}

TEST_P(NetcdfTest, AppendAddsVariablesAndRecordsAndKeepsEveryScaleUse) {
  const auto p = path("append");
  {
    auto f = nc::File::create(p, options());
    f.define_dimension("t", nc::kUnlimitedLength);
    f.define_dimension("n", 4);
    auto a = f.define_variable("a", Datatype::Int32, {"t", "n"});
    f.end_define();
    f.set_records(1);
    if (g_rank == 0) a.write<int32_t>({0, 0}, {1, 4}, {1, 2, 3, 4});
  }  // dropped without close: closed all the same
  {
    auto f = nc::File::open(p, Mode::ReadWrite, options());
    EXPECT_THROW(f.define_dimension("m", 2), UsageError);  // data mode
    f.redefine();
    f.define_dimension("m", 2);
    auto b = f.define_variable("b", Datatype::Float64, {"t", "n"});
    auto c = f.define_variable("c", Datatype::Int16, {"m", "n"});
    f.end_define();
    f.set_records(3);
    EXPECT_EQ(f.variable("a").shape(), (Dims{3, 4}));
    if (g_rank == g_size - 1) {
      b.write<double>({2, 0}, {1, 4}, {0.5, 1.5, 2.5, 3.5});
      c.write<int16_t>({}, {}, {1, 2, 3, 4, 5, 6, 7, 8});
      f.variable("a").write<int32_t>({2, 0}, {1, 4}, {9, 9, 9, 9});
    }
    f.close();
  }
  auto f = nc::File::open(p, Mode::Read, options());
  EXPECT_EQ(f.records(), 3u);
  EXPECT_EQ(f.variable("a").read<int32_t>(),
            (std::vector<int32_t>{1, 2, 3, 4, -2147483647, -2147483647, -2147483647, -2147483647, 9, 9, 9, 9}));
  EXPECT_EQ(f.variable("b").read<double>({2, 0}, {1, 4}), (std::vector<double>{0.5, 1.5, 2.5, 3.5}));
  EXPECT_EQ(f.variable("c").dimensions(), (std::vector<std::string>{"m", "n"}));
  // The scale of n lists a (axis 1), b (axis 1) and c (axis 1); t lists a and b (axis 0).
  auto refs = f.storage().dataset("n").attribute("REFERENCE_LIST");
  ASSERT_EQ(refs.size(), 3u);
  std::vector<std::string> users;
  for (std::size_t k = 0; k < refs.size(); ++k) {
    ObjectRef r;
    int32_t axis;
    std::memcpy(&r, static_cast<const unsigned char*>(refs.data()) + 16 * k, 8);
    std::memcpy(&axis, static_cast<const unsigned char*>(refs.data()) + 16 * k + 8, 4);
    users.push_back(f.storage().dereference(r) + ":" + std::to_string(axis));
  }
  EXPECT_EQ(users, (std::vector<std::string>{"/a:1", "/b:1", "/c:1"}));
  EXPECT_EQ(f.storage().dataset("t").attribute("REFERENCE_LIST").size(), 2u);
}

TEST_P(NetcdfTest, DarraysWriteFramesOfARecordVariableFlushingAtTheBufferLimit) {
  const auto p = path("pio");
  const Dims shape{6, 4};
  std::vector<int64_t> map;  // rank r holds the elements with offset % size == r, backwards
  for (int64_t x = int64_t(product(shape)) - 1; x >= 0; --x)
    if (x % g_size == g_rank) map.push_back(x);
  auto d = pio::Decomposition::from_map(MPI_COMM_WORLD, shape, map);
  pio::IOSystem io;
  io.num_iotasks = std::max(1, g_size / 2);
  for (auto kind : {pio::Rearranger::Box, pio::Rearranger::Subset}) {
    pio::Rearrangement r(d, io, kind);
    const std::string what = pio::rearranger_name(kind);
    {
      auto f = nc::File::create(p, options());
      f.define_dimension("time", nc::kUnlimitedLength);
      f.define_dimension("lev", shape[0]);
      f.define_dimension("col", shape[1]);
      auto v = f.define_variable("T", Datatype::Float64, {"time", "lev", "col"});
      auto c = f.define_variable("C", Datatype::Int16, {"lev", "col"});
      f.end_define();
      f.set_darray_buffer_limit(200);  // a flush point every record or so: 24 doubles are 192 bytes
      for (uint64_t frame = 0; frame < 3; ++frame) {
        std::vector<float> local;  // floats into a double variable: converted
        for (int64_t x : map) local.push_back(float(x) + 100.0f * float(frame));
        f.write_darray(v, r, frame, local);  // the records grow
        EXPECT_EQ(f.records(), frame + 1) << what;
      }
      std::vector<int32_t> ints(map.begin(), map.end());
      f.write_darray(c, r, 0, ints);
      EXPECT_THROW(f.write_darray(c, r, 1, ints), UsageError) << what;  // no record dimension: frame 0
      std::vector<int32_t> too_big(map.size(), 70000);
      EXPECT_THROW(f.write_darray(c, r, 0, too_big), DatatypeError) << what;  // NC_ERANGE, on every rank
      f.close();
    }
    auto f = nc::File::open(p, Mode::Read, options());
    auto v = f.variable("T");
    const auto all = v.read<double>();
    ASSERT_EQ(all.size(), 3 * product(shape)) << what;
    for (uint64_t frame = 0; frame < 3; ++frame)
      for (uint64_t x = 0; x < product(shape); ++x)
        ASSERT_EQ(all[frame * product(shape) + x], double(x) + 100.0 * double(frame)) << what << frame << " " << x;
    const auto back = f.read_darray<int64_t>(v, r, 2);  // converted on the way out
    for (std::size_t i = 0; i < map.size(); ++i) EXPECT_EQ(back[i], map[i] + 200) << what;
    auto c = f.variable("C");
    const auto shorts = f.read_darray<int16_t>(c, r, 0);
    for (std::size_t i = 0; i < map.size(); ++i) EXPECT_EQ(shorts[i], map[i]) << what;
  }
}

TEST_P(NetcdfTest, NumbersConvertAsNetcdfConvertsThem) {
  const auto p = path("convert");
  auto f = nc::File::create(p, options());
  f.define_dimension("n", 3);
  auto v = f.define_variable("v", Datatype::Int16, {"n"});
  auto w = f.define_variable("w", Datatype::Float32, {"n"});
  auto big = f.define_variable("big", Datatype::Int64, {"n"});
  f.end_define();
  if (g_rank == 0) {
    v.write<double>({}, {}, {1.0, -2.0, 300.0});
    w.write<int64_t>({}, {}, {1, 2, 3});
    expect_error_containing([&] { v.write<int32_t>({}, {}, {1, 2, 40000}); }, ErrorCode::Datatype, "NC_ERANGE");
    // 2^63 rounds to int64's max in double: still refused, not wrapped
    expect_error_containing([&] { big.write<uint64_t>({}, {}, {1, 2, uint64_t(1) << 63}); }, ErrorCode::Datatype,
                            "NC_ERANGE");
    expect_error_containing([&] { big.write<double>({}, {}, {1, 2, 9.3e18}); }, ErrorCode::Datatype, "NC_ERANGE");
    big.write<uint64_t>({}, {}, {1, 2, (uint64_t(1) << 63) - 1024});
  }
  EXPECT_EQ(v.read<double>(), (std::vector<double>{1.0, -2.0, 300.0}));
  EXPECT_EQ(w.read<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
  // Out of range in rank 0's part of a read only: an error on every rank.
  const Dims start{g_rank == 0 ? 2u : 0u}, count{1};
  expect_error_containing([&] { (void)v.read<int8_t>(start, count); }, ErrorCode::Datatype, "300");
  f.close();
}

TEST_P(NetcdfTest, BadCallsAreRefusedNamingWhatIsWrong) {
  const auto p = path("errors");
  auto f = nc::File::create(p, options());
  f.define_dimension("t", nc::kUnlimitedLength);
  f.define_dimension("n", 2);
  expect_error_containing([&] { f.define_dimension("u", nc::kUnlimitedLength); }, ErrorCode::Usage, "'t'");
  expect_error_containing([&] { f.define_dimension("n", 3); }, ErrorCode::Exists, "'n'");
  expect_error_containing([&] { f.define_dimension("a/b", 3); }, ErrorCode::Usage, "'a/b'");
  expect_error_containing([&] { f.define_variable("v", Datatype::Int32, {"n", "t"}); }, ErrorCode::Usage,
                          "unlimited dimension 't'");
  expect_error_containing([&] { f.define_variable("v", Datatype::Int32, {"nope"}); }, ErrorCode::NotFound, "'nope'");
  expect_error_containing([&] { f.define_variable("v", Datatype::varstring(), {"n"}); }, ErrorCode::Datatype,
                          "variable 'v'");
  expect_error_containing([&] { f.define_variable("n", Datatype::Int32, {"t"}); }, ErrorCode::Usage, "coordinate");
  auto v = f.define_variable("v", Datatype::Int32, {"t", "n"});
  expect_error_containing([&] { v.set_attribute("_FillValue", AttributeValue(1.5)); }, ErrorCode::Datatype,
                          "_FillValue of variable 'v'");
  expect_error_containing([&] { v.set_attribute("CLASS", "x"); }, ErrorCode::Usage, "reserved");
  expect_error_containing([&] { v.write<int32_t>({0, 0}, {1, 2}, {1, 2}); }, ErrorCode::Usage, "define mode");
  f.end_define();
  expect_error_containing([&] { v.set_fill_value(int32_t(3)); }, ErrorCode::Usage, "NC_ELATEFILL");
  expect_error_containing([&] { v.write<int32_t>({0, 0}, {1, 2}, {1, 2}); }, ErrorCode::Selection,
                          "set_records(1)");
  expect_error_containing([&] { v.write<int32_t>({0}, {1}, {1}); }, ErrorCode::Selection, "2 dimensions");
  f.set_records(2);
  expect_error_containing([&] { f.set_records(1); }, ErrorCode::Usage, "never shrink");
  f.close();
  {
    auto r = nc::File::open(p, Mode::Read, options());
    expect_error_containing([&] { r.redefine(); }, ErrorCode::ReadOnly, "read-only");
  }
  // A plain HDF5 dataset without dimension scales is not a netCDF variable.
  const auto plain = path("plain");
  {
    auto h = File::create(plain, options());
    h.create_dataset<double>("loose", {3});
  }
  expect_error_containing([&] { nc::File::open(plain, Mode::Read, options()); }, ErrorCode::Config,
                          "variable 'loose'");
}

INSTANTIATE_TEST_SUITE_P(Engines, NetcdfTest, ::testing::Values("hdf5", "log", "async+log"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '+') c = '_';
                           return n;
                         });

TEST(NetcdfEngines, AnEngineWithoutReferencesIsRefusedAtCreate) {
  FileOptions o;
  o.engine = "zarr";
  expect_error_containing([&] { nc::File::create(g_dir + "/netcdf-zarr-np" + std::to_string(g_size) + ".zarr", o); },
                          ErrorCode::Usage, "engine zarr");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;  // the async wrapper's background thread needs FUNNELED
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (argc != 2) {
    if (g_rank == 0) std::fprintf(stderr, "usage: test_netcdf DIR\n");
    MPI_Finalize();
    return 2;
  }
  g_dir = argv[1];
  if (g_rank != 0) ::testing::GTEST_FLAG(output) = "";
  int failed = RUN_ALL_TESTS() != 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
