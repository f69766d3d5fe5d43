// Conformance group "dimension_names": a name for each dimension of a dataset
// (Zarr v3's dimension_names, xarray's dimensions) - kept after reopen, through
// extend and copies, "" for a dimension left unnamed; a list of the wrong
// length refused on every rank, naming the dataset, before anything is made.
#include "conformance.hpp"
#include "h5loom/tools.hpp"

using namespace h5loom;

H5LOOM_CONFORMANCE_GROUP(dimension_names, "dimension_names");

TEST_F(dimension_names, NamesAreKeptThroughReopenExtendAndCopy) {
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    DatasetSpec field;
    field.dtype = Datatype::Float32;
    field.shape = {2, 3, uint64_t(4 * nranks())};
    field.dim_names = {"z", "y", "x"};
    auto rho = f.create_dataset("rho", field);
    rho.write(Selection::box({0, 0, uint64_t(4 * rank())}, {2, 3, 4}), std::vector<float>(24, float(rank())));
    DatasetSpec series;
    series.dtype = Datatype::Int64;
    series.shape = {0, 2};
    series.max_shape = {kUnlimited, 2};
    series.chunks = {4, 2};
    series.dim_names = {"time", ""};  // the second left unnamed
    f.create_dataset("probe", series).extend({5, 2});
    DatasetSpec plain;
    plain.dtype = Datatype::UInt8;
    plain.shape = {7};
    f.create_dataset("plain", plain);
  }
  auto f = File::open(path, Mode::ReadWrite, options());
  EXPECT_EQ(f.dataset("rho").dim_names(), (std::vector<std::string>{"z", "y", "x"}));
  EXPECT_EQ(f.dataset("probe").dim_names(), (std::vector<std::string>{"time", ""}));
  EXPECT_EQ(f.dataset("probe").shape(), (Dims{5, 2}));
  EXPECT_TRUE(f.dataset("plain").dim_names().empty());
  auto rho = f.dataset("rho").read<float>();
  for (std::size_t i = 0; i < rho.size(); ++i) ASSERT_EQ(rho[i], float((i % (4 * nranks())) / 4)) << "element " << i;
  copy_object(f, "/rho", f, "/rho_copy");
  EXPECT_EQ(f.dataset("rho_copy").dim_names(), (std::vector<std::string>{"z", "y", "x"}));
  EXPECT_EQ(f.dataset("rho_copy").read<float>(), rho);
}

TEST_F(dimension_names, AWrongNumberOfNamesIsRefused) {
  auto f = File::create(file_path(), options());
  DatasetSpec spec;
  spec.dtype = Datatype::Float64;
  spec.shape = {4, 4};
  spec.dim_names = {"x"};
  try {
    f.create_dataset("bad", spec);
    FAIL() << "one name for two dimensions was taken";
  } catch (const SelectionError& e) {
    EXPECT_NE(std::string(e.what()).find("'/bad'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1 dimension names"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(f.exists("bad"));
  spec.dim_names = {"y", "x"};
  EXPECT_EQ(f.create_dataset("good", spec).dim_names(), (std::vector<std::string>{"y", "x"}));
}
