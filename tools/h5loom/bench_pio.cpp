// `h5loom bench pio`: PIO's pioperformance pattern (the seed's Figures 3-5)
// through the netCDF layer. For a decomposition file, and every engine x
// rearranger x number of I/O tasks: `variables` integer, float and double
// variables over the map's dimensions and a record dimension, `frames`
// records written with the rearranger into a netCDF-4 file, then read back
// and checked; best of `repeat`, beside raw POSIX writing the same bytes.
#include <algorithm>
#include <cstdio>

#include <h5loom/netcdf.hpp>
#include <h5loom/pio.hpp>

#include "bench.hpp"

namespace h5loom::bench {

namespace {

// Exact in float32 for maps of up to a million elements.
double value_of(int64_t offset, uint64_t var, uint64_t frame) {
  return double(offset) + 1e6 * double(var % 8) + 1e5 * double(frame % 10);
}

const Datatype kTypes[] = {Datatype::Int32, Datatype::Float32, Datatype::Float64};
const char* const kSuffix[] = {"_i", "_f", "_d"};

template <class T>
std::vector<T> values(const std::vector<int64_t>& map, uint64_t var, uint64_t frame) {
  std::vector<T> out(map.size());
  for (std::size_t i = 0; i < map.size(); ++i) out[i] = map[i] < 0 ? T(0) : T(value_of(map[i], var, frame));
  return out;
}

void write_file(const std::string& path, const FileOptions& fo, const pio::Decomposition& d, pio::Rearrangement& r,
                uint64_t variables, uint64_t frames) {
  auto f = netcdf::File::create(path, fo);
  std::vector<std::string> dims{"time"};
  for (std::size_t k = 0; k < d.global_shape().size(); ++k) dims.push_back("dim" + std::to_string(k + 1));
  f.define_dimension("time", netcdf::kUnlimitedLength);
  for (std::size_t k = 0; k < d.global_shape().size(); ++k) f.define_dimension(dims[k + 1], d.global_shape()[k]);
  std::vector<netcdf::Variable> vars;
  for (uint64_t v = 0; v < variables; ++v)
    for (int t = 0; t < 3; ++t) vars.push_back(f.define_variable("v" + std::to_string(v + 1) + kSuffix[t], kTypes[t], dims));
  f.set_attribute("title", "h5loom bench pio");
  f.end_define();
  for (uint64_t frame = 0; frame < frames; ++frame)
    for (uint64_t v = 0; v < variables; ++v) {
      f.write_darray(vars[3 * v], r, frame, values<int32_t>(d.map(), v, frame));
      f.write_darray(vars[3 * v + 1], r, frame, values<float>(d.map(), v, frame));
      f.write_darray(vars[3 * v + 2], r, frame, values<double>(d.map(), v, frame));
    }
  f.close();
}

// This rank's wrong values (holes not checked: they read as the fill value).
uint64_t read_file(const std::string& path, const FileOptions& fo, const pio::Decomposition& d, pio::Rearrangement& r,
                   uint64_t variables, uint64_t frames) {
  auto f = netcdf::File::open(path, Mode::Read, fo);
  uint64_t wrong = 0;
  auto check = [&](auto got, auto want) {
    for (std::size_t k = 0; k < got.size(); ++k)
      if (d.map()[k] >= 0 && got[k] != want[k]) ++wrong;
  };
  for (uint64_t frame = 0; frame < frames; ++frame)
    for (uint64_t v = 0; v < variables; ++v) {
      const std::string base = "v" + std::to_string(v + 1);
      auto vi = f.variable(base + "_i"), vf = f.variable(base + "_f"), vd = f.variable(base + "_d");
      check(f.read_darray<int32_t>(vi, r, frame), values<int32_t>(d.map(), v, frame));
      check(f.read_darray<float>(vf, r, frame), values<float>(d.map(), v, frame));
      check(f.read_darray<double>(vd, r, frame), values<double>(d.map(), v, frame));
    }
  f.close();
  return wrong;
}

}  // namespace

int run_pio(const PioOptions& o) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  if (o.map.empty()) throw ConfigError("bench pio needs --map FILE (e.g. bench/e3sm/f_case_866x72_16p.dat)");
  const auto d = pio::Decomposition::from_file(comm, o.map);
  uint64_t held = 0;
  for (int64_t x : d.map()) held += x >= 0;
  const uint64_t bytes_per_rank = held * (4 + 4 + 8) * o.variables * o.frames;
  uint64_t total_bytes = 0;
  MPI_Allreduce(&bytes_per_rank, &total_bytes, 1, MPI_UINT64_T, MPI_SUM, comm);
  const double mib = double(total_bytes) / 1048576.0;
  std::vector<int> iotasks;
  for (int n : o.iotasks)
    if (n >= 1 && n <= nranks) iotasks.push_back(n);
  if (iotasks.empty()) iotasks.push_back(1);
  if (rank == 0)
    std::printf("pio: %d ranks, map %s (%s), %llu integer, float and double variables, %llu frames; %.1f MiB in "
                "all, best of %d\n",
                nranks, o.map.c_str(), dims_to_string(d.global_shape()).c_str(), (unsigned long long)o.variables,
                (unsigned long long)o.frames, mib, o.repeat);

  prepare_dir(comm, o.dir);
  PosixResult posix{1e300, 1e300};
  for (int rep = 0; rep < o.repeat; ++rep) {
    auto p = posix_limit(comm, o.dir + "/pio.posix", bytes_per_rank, 1 << 20, o.posix_sync, false);
    posix.write_s = std::min(posix.write_s, p.write_s), posix.read_s = std::min(posix.read_s, p.read_s);
  }
  const std::string csv_path = o.csv.empty() ? o.dir + "/pio.csv" : o.csv;
  std::FILE* csv = open_csv(comm, csv_path);
  if (rank == 0) {
    std::fprintf(csv, "kernel,engine,rearranger,iotasks,ranks,bytes,write [s],read [s],posix-write [s],"
                      "posix-read [s],write-ratio,read-ratio,verified\n");
    std::printf("plain POSIX (1 MiB pwrites, each rank its own range%s): write %.1f MiB/s, read %.1f MiB/s\n\n",
                o.posix_sync ? ", fsync" : "", mib / posix.write_s, mib / posix.read_s);
    std::printf("%-24s %-8s %8s %12s %12s %9s %9s\n", "engine", "rearr", "iotasks", "write MiB/s", "read MiB/s",
                "w/POSIX", "r/POSIX");
  }
  int exit_code = 0;
  for (const auto& engine : o.engines) {
    FileOptions fo;
    fo.engine = engine;
    fo.comm = comm;
    for (const auto& kind_name : o.rearrangers) {
      const auto kind = pio::rearranger_from_name(kind_name);
      for (int n : iotasks) {
        pio::IOSystem io;
        io.comm = comm;
        io.num_iotasks = n;
        pio::Rearrangement r(d, io, kind);
        const std::string path = engine_path(o, "pio-" + engine_label(engine) + "-" + kind_name + "-io" +
                                                    std::to_string(n) + ".nc");
        double best_w = 1e300, best_r = 1e300;
        uint64_t wrong_total = 0;
        for (int rep = 0; rep < o.repeat; ++rep) {
          if (rank == 0) remove_engine_files(engine, path);
          MPI_Barrier(comm);
          best_w = std::min(best_w, timed(comm, [&] { write_file(path, fo, d, r, o.variables, o.frames); }));
          uint64_t wrong = 0;
          best_r = std::min(best_r, timed(comm, [&] { wrong = read_file(path, fo, d, r, o.variables, o.frames); }));
          MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_UINT64_T, MPI_SUM, comm);
          wrong_total += wrong;
        }
        if (rank == 0) {
          std::printf("%-24s %-8s %8d %12.1f %12.1f %9.2f %9.2f%s\n", engine_label(engine).c_str(), kind_name.c_str(),
                      n, mib / best_w, mib / best_r, posix.write_s / best_w, posix.read_s / best_r,
                      wrong_total ? "  WRONG VALUES READ BACK" : "");
          std::fprintf(csv, "pio,%s,%s,%d,%d,%llu,%.6f,%.6f,%.6f,%.6f,%.4f,%.4f,%s\n",
                       csv_field(engine_label(engine)).c_str(), kind_name.c_str(), n, nranks,
                       (unsigned long long)total_bytes, best_w, best_r, posix.write_s, posix.read_s,
                       posix.write_s / best_w, posix.read_s / best_r, wrong_total ? "no" : "yes");
        }
        if (wrong_total) exit_code = 4;
        if (rank == 0 && !o.keep_files) remove_engine_files(engine, path);
      }
    }
  }
  if (rank == 0) {
    std::printf("CSV: %s%s\n", csv_path.c_str(),
                o.keep_files ? ("; the netCDF files stay in " + o.dir + " (pio-ENGINE-REARRANGER-ioN.nc)").c_str() : "");
    std::fclose(csv);
  }
  return exit_code;
}

}  // namespace h5loom::bench
