// Writes tests/netcdf/sample.cdl's file through h5loom's netCDF layer, each
// rank writing its share, or describes a netCDF file as the layer sees it -
// for the tests that hand the files to netCDF readers no one here wrote
// (tests/python/interop/test_netcdf_readers.py).
//
//   netcdf_sample write FILE [ENGINE]   the sample (ENGINE: name or JSON; default hdf5)
//   netcdf_sample describe FILE         dimensions, variables, attributes and values as JSON (rank 0)
#include <mpi.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "h5loom/netcdf.hpp"

namespace nc = h5loom::netcdf;
using h5loom::AttributeValue;
using h5loom::Datatype;

namespace {

int rank_of() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int size_of() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// The values sample.cdl's data section holds (holes: left unwritten, read as fill).
float temperature(uint64_t t, uint64_t i, uint64_t j) { return float(200 + 50 * t + 10 * i + j); }

void write_sample(const std::string& path, const std::string& engine) {
  const int rank = rank_of(), size = size_of();
  h5loom::FileOptions options;
  options.engine = engine;
  auto f = nc::File::create(path, options);
  f.define_dimension("time", nc::kUnlimitedLength);
  f.define_dimension("lat", 4);
  f.define_dimension("lon", 6);
  f.define_dimension("nv", 2);
  auto time = f.define_variable("time", Datatype::Float64, {"time"});
  time.set_attribute("units", "days since 2000-01-01");
  time.set_attribute("long_name", "time");
  auto lat = f.define_variable("lat", Datatype::Float32, {"lat"});
  lat.set_attribute("units", "degrees_north");
  auto lon = f.define_variable("lon", Datatype::Float32, {"lon"});
  lon.set_attribute("units", "degrees_east");
  auto temp = f.define_variable("temperature", Datatype::Float32, {"time", "lat", "lon"});
  temp.set_attribute("long_name", "surface temperature");
  temp.set_attribute("units", "K");
  temp.set_fill_value(-999.0f);
  temp.set_attribute("valid_range", std::vector<float>{150.0f, 350.0f});
  auto count = f.define_variable("count", Datatype::Int32, {"time", "lat"});
  auto bounds = f.define_variable("bounds", Datatype::Float64, {"lon", "nv"});
  auto flags = f.define_variable("flags", Datatype::Int16, {"lat", "lon"});
  flags.set_fill_value(int16_t(-1));
  auto big = f.define_variable("big", Datatype::Int64, {"nv"});
  big.set_attribute("comment", "");
  f.set_attribute("title", "h5loom netCDF sample");
  f.set_attribute("institution", "h5loom");
  f.set_attribute("version", int32_t(2));
  f.set_attribute("scale", std::vector<double>{0.5, 1.5});
  f.end_define();

  f.set_records(3);
  if (rank == 0) {
    time.write<double>({0}, {3}, {0, 1, 2});
    lat.write<float>({0}, {4}, {-45, -15, 15, 45});
  }
  if (rank == size - 1) {
    lon.write<float>({0}, {6}, {0, 60, 120, 180, 240, 300});
    big.write<int64_t>({0}, {2}, {1099511627776LL, -1099511627776LL});
  }
  for (uint64_t i = uint64_t(rank); i < 4; i += uint64_t(size)) {  // the rows of lat this rank holds
    for (uint64_t t = 0; t < 3; ++t) {
      if (t == 2 && i == 3) continue;  // a hole: fill
      std::vector<float> row;
      for (uint64_t j = 0; j < 6; ++j) row.push_back(temperature(t, i, j));
      temp.write<float>({t, i, 0}, {1, 1, 6}, row);
      count.write<int32_t>({t, i}, {1, 1}, {int32_t(10 * t + i)});
    }
    if (i != 1) {  // row 1 stays fill
      std::vector<int16_t> row;
      for (uint64_t j = 0; j < 6; ++j) row.push_back(int16_t(6 * i + j));
      flags.write<int16_t>({i, 0}, {1, 6}, row);
    }
  }
  for (uint64_t j = uint64_t(rank); j < 6; j += uint64_t(size))
    bounds.write<double>({j, 0}, {1, 2}, {60.0 * double(j) - 30, 60.0 * double(j) + 30});
  f.close();
}

nlohmann::json attribute_json(const AttributeValue& v) {
  if (v.is_string()) return v.as_string();
  if (v.is_string_array()) return v.as_strings();
  return v.as_vector<double>();
}

void describe(const std::string& path) {
  auto f = nc::File::open(path);
  nlohmann::json out;
  for (const auto& d : f.dimensions())
    out["dimensions"].push_back({{"name", d.name}, {"length", d.length}, {"unlimited", d.unlimited}, {"id", d.id}});
  for (const auto& name : f.attribute_names()) out["attributes"][name] = attribute_json(f.attribute(name));
  for (auto& v : f.variables()) {
    nlohmann::json var{{"name", v.name()}, {"dtype", v.dtype().name()}, {"dimensions", v.dimensions()},
                       {"shape", v.shape()}, {"coordinate", v.is_coordinate()}};
    for (const auto& a : v.attribute_names()) var["attributes"][a] = attribute_json(v.attribute(a));
    var["values"] = v.read<double>();
    double fill = 0;
    const auto bytes = v.fill_value();
    h5loom::dispatch_scalar(v.dtype().scalar(), [&](auto tag) {
      decltype(tag) x;
      std::memcpy(&x, bytes.data(), sizeof x);
      fill = double(x);
    });
    var["fill"] = fill;
    out["variables"].push_back(var);
  }
  f.close();
  if (rank_of() == 0) std::cout << out.dump() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;  // the async wrapper's background thread needs FUNNELED
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int status = 0;
  try {
    const std::string what = argc > 2 ? argv[1] : "";
    if (what == "write") write_sample(argv[2], argc > 3 ? argv[3] : "");
    else if (what == "describe") describe(argv[2]);
    else {
      std::cerr << "usage: netcdf_sample write FILE [ENGINE] | describe FILE\n";
      status = 2;
    }
  } catch (const std::exception& e) {
    std::cerr << "netcdf_sample: rank " << rank_of() << ": " << e.what() << "\n";
    status = 1;
  }
  MPI_Finalize();
  return status;
}
