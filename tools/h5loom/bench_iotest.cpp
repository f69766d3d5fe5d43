// `h5loom bench iotest`: HDF5's hdf5-iotest, reimplemented on h5loom so that it
// runs through any engine. Same ini format, same eight nested loops, same data,
// same timers and CSV columns (plus `engine`), and every case beside plain
// POSIX pwrite/pread of the same bytes. docs/benchmarks.md.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <h5loom/h5loom.hpp>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include <set>

#include "bench.hpp"
#include "bench_iotest_io.hpp"

namespace h5loom::bench {

namespace {

using Json = nlohmann::json;

// The built-in default: 192 cases (two alignments, one metadata block size),
// 1 MiB tiles, 32 MiB per rank per case: a few minutes per engine on 2 cores.
const char* kDefaultIni = R"([DEFAULT]
version = 0
steps = 4
arrays = 8
rows = 256
columns = 512
process-rows = 1
# process-columns: the number of ranks / process-rows when left out
scaling = weak
dataset-rank = 4
slowest-dimension = step
layout = contiguous
mpi-io = independent
alignment-increment = 1048576
alignment-threshold = 65536
meta-block-size = 2048
single-process = mpi-io-uni
hdf5-file = iotest.h5
csv-file = iotest.csv
)";

using Section = std::map<std::string, std::string>;

// INI: [section] headers, key = value lines, # and ; comments. Sections after
// DEFAULT override it; each is one configuration (DEFAULT alone if none).
std::vector<std::pair<std::string, Section>> parse_ini(std::istream& in, const std::string& name) {
  std::vector<std::pair<std::string, Section>> sections;
  Section defaults;
  std::string line, current;
  int lineno = 0;
  auto trim = [](std::string s) {
    s.erase(0, s.find_first_not_of(" \t\r"));
    s.erase(s.find_last_not_of(" \t\r") + 1);
    return s;
  };
  while (std::getline(in, line)) {
    ++lineno;
    line = trim(line.substr(0, line.find_first_of("#;")));
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line.back() != ']') throw ConfigError(name + ":" + std::to_string(lineno) + ": bad section header '" + line + "'");
      current = trim(line.substr(1, line.size() - 2));
      if (current != "DEFAULT") sections.push_back({current, {}});
      continue;
    }
    auto eq = line.find('=');
    if (eq == std::string::npos) throw ConfigError(name + ":" + std::to_string(lineno) + ": expected key = value, got '" + line + "'");
    std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    if (current.empty() || current == "DEFAULT") defaults[key] = value;
    else sections.back().second[key] = value;
  }
  if (sections.empty()) return {{"DEFAULT", defaults}};
  for (auto& [_, s] : sections)
    for (const auto& [k, v] : defaults) s.emplace(k, v);
  return sections;
}

struct Config {
  std::string name;
  uint64_t steps, arrays, rows, cols, prows, pcols;
  bool strong;
  uint64_t align_inc, align_thr, meta_block;
  std::string single_process, hdf5_file, csv_file;
};

Config to_config(const std::string& name, const Section& s, int nranks) {
  auto get = [&](const std::string& key) -> std::string {
    auto it = s.find(key);
    if (it == s.end()) throw ConfigError("iotest configuration [" + name + "]: missing key '" + key + "'");
    return it->second;
  };
  auto num = [&](const std::string& key) -> uint64_t {
    std::string v = get(key);
    try {
      std::size_t used = 0;
      long long x = std::stoll(v, &used);
      if (used != v.size() || x < 0) throw std::invalid_argument(v);
      return uint64_t(x);
    } catch (const std::exception&) {
      throw ConfigError("iotest configuration [" + name + "]: '" + key + "' must be a non-negative integer, not '" + v + "'");
    }
  };
  Config c;
  c.name = name;
  if (get("version") != "0") throw ConfigError("iotest configuration [" + name + "]: version must be 0, not " + get("version"));
  c.steps = num("steps"), c.arrays = num("arrays"), c.rows = num("rows"), c.cols = num("columns");
  c.prows = num("process-rows");
  c.pcols = s.count("process-columns") ? num("process-columns") : (c.prows ? uint64_t(nranks) / c.prows : 0);
  std::string scaling = get("scaling");
  if (scaling != "weak" && scaling != "strong")
    throw ConfigError("iotest configuration [" + name + "]: scaling must be weak or strong, not '" + scaling + "'");
  c.strong = scaling == "strong";
  c.align_inc = num("alignment-increment"), c.align_thr = num("alignment-threshold"), c.meta_block = num("meta-block-size");
  c.single_process = s.count("single-process") ? s.at("single-process") : "mpi-io-uni";
  c.hdf5_file = get("hdf5-file"), c.csv_file = get("csv-file");
  if (c.prows * c.pcols != uint64_t(nranks))
    throw ConfigError("iotest configuration [" + name + "]: process-rows x process-columns = " + std::to_string(c.prows) +
                      " x " + std::to_string(c.pcols) + " must equal the number of ranks, " + std::to_string(nranks));
  if (c.steps == 0 || c.arrays == 0 || c.rows == 0 || c.cols == 0)
    throw ConfigError("iotest configuration [" + name + "]: steps, arrays, rows and columns must be positive");
  if (c.strong && (c.rows % c.prows || c.cols % c.pcols))
    throw ConfigError("iotest configuration [" + name + "]: with strong scaling, rows (" + std::to_string(c.rows) +
                      ") and columns (" + std::to_string(c.cols) + ") must divide evenly by process-rows and -columns");
  return c;
}

using Case = IotestCase;

std::vector<Case> cases_of(const Config& c, int nranks) {
  std::vector<Case> out;
  std::vector<std::pair<uint64_t, uint64_t>> aligns{{1, 0}};
  if (c.align_inc != 1 || c.align_thr != 0) aligns.push_back({c.align_inc, c.align_thr});
  std::vector<uint64_t> metas{2048};
  if (c.meta_block != 2048) metas.push_back(c.meta_block);
  for (int rank : {2, 3, 4})
    for (bool step_first : {true, false})
      for (bool chunked : {false, true})
        for (bool fill : {true, false})
          for (auto [inc, thr] : aligns)
            for (uint64_t meta : metas)
              for (const char* libver : {"earliest", "latest"})
                for (const char* io : {"independent", "collective"}) {
                  if (nranks == 1 && std::string(io) == "collective") continue;
                  out.push_back({rank, step_first, chunked, fill, inc, thr, meta, libver, io});
                }
  return out;
}

double value_of(uint64_t step, uint64_t array, uint64_t row, uint64_t col) {
  return double(step) * 1e9 + double(array) * 1e6 + double(row) * 1e3 + double(col) * 1e-3;
}

struct Times {
  double wall = 0, write_phase = 0, create = 0, write = 0, read_phase = 0, read = 0;
  // The benchmark's own work inside the phases, taken out of them: making
  // a step's tile values, and checking what was read back. hdf5-iotest
  // fills its buffer once, outside the timing (its VERIFY_DATA build, which
  // fills per tile, warns that the timings are distorted).
  double fill = 0, check = 0;
  // The compute phases between steps (--compute), taken out of the write phase too.
  double compute = 0;
};

struct TilePlace {
  Dims shape, chunk;
  std::string path;                  // dataset path of this (step, array)
  Dims start;                        // of this rank's tile
};

// Where tile (step, array) of this rank goes, for a case.
TilePlace place_of(const Config& c, const Case& k, uint64_t step, uint64_t array, uint64_t R, uint64_t C, uint64_t tr,
                 uint64_t tc, uint64_t r0, uint64_t c0) {
  TilePlace l;
  char name[64];
  if (k.rank == 4) {
    l.path = "/dataset";
    l.shape = k.step_first ? Dims{c.steps, c.arrays, R, C} : Dims{c.arrays, c.steps, R, C};
    l.chunk = k.step_first ? Dims{1, c.arrays, tr, tc} : Dims{c.arrays, 1, tr, tc};
    l.start = k.step_first ? Dims{step, array, r0, c0} : Dims{array, step, r0, c0};
  } else if (k.rank == 3) {
    std::snprintf(name, sizeof name, k.step_first ? "/step=%llu" : "/array=%llu",
                  (unsigned long long)(k.step_first ? step : array));
    l.path = name;
    l.shape = Dims{k.step_first ? c.arrays : c.steps, R, C};
    l.chunk = Dims{1, tr, tc};
    l.start = Dims{k.step_first ? array : step, r0, c0};
  } else {
    std::snprintf(name, sizeof name, k.step_first ? "/step=%llu/array=%llu" : "/array=%llu/step=%llu",
                  (unsigned long long)(k.step_first ? step : array), (unsigned long long)(k.step_first ? array : step));
    l.path = name;
    l.shape = Dims{R, C};
    l.chunk = Dims{tr, tc};
    l.start = Dims{r0, c0};
  }
  return l;
}

}  // namespace

int run_iotest(const IotestOptions& o) {
  MPI_Comm comm = MPI_COMM_WORLD;
  // With --api hdf5, "native" is HDF5 alone (its files are the hdf5 engine's
  // kind) and an engine is h5loom's VOL connector with that configuration.
  auto storage_engine_of = [&](const std::string& engine) { return engine == "native" ? std::string("hdf5") : engine; };
  auto label_of = [&](const std::string& engine) {
    if (o.api != "hdf5") return engine_label(engine);
    return engine == "native" ? std::string("HDF5 native") : "HDF5 + h5loom " + engine_label(engine);
  };
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  if (o.lend && o.api == "hdf5")  // (the same options on every rank)
    throw ConfigError("iotest: --lend is for --api h5loom: through HDF5's API a write's buffer is HDF5's until it returns");

  // A bad ini is found before the first collective step, and on every rank
  // together (an ini readable on one node only); main() checked the engines.
  std::vector<std::pair<std::string, Section>> sections;
  std::vector<Config> configs;
  agree(comm, [&] {
    if (o.ini.empty()) {
      std::istringstream in(kDefaultIni);
      sections = parse_ini(in, "built-in default ini");
    } else {
      std::ifstream in(o.ini);
      if (!in) throw NotFoundError("cannot read iotest ini '" + o.ini + "'");
      sections = parse_ini(in, o.ini);
    }
    for (const auto& [section, values] : sections) configs.push_back(to_config(section, values, nranks));
  });

  std::FILE* csv = nullptr;
  int exit_code = 0;
  for (std::size_t si = 0; si < sections.size(); ++si) {
    const std::string& section = sections[si].first;
    const Config& c = configs[si];
    // hdf5-iotest names its files relative to the working directory; here
    // relative names go into --dir and absolute ones are used as they are.
    const std::string csv_path = !o.csv.empty() ? o.csv : (std::filesystem::path(o.dir) / c.csv_file).string();
    if (si == 0) {
      prepare_dir(comm, o.dir);
      csv = open_csv(comm, csv_path);
    }
    if (rank == 0 && csv && std::ftell(csv) == 0) {
      std::fprintf(csv,
                   "steps,arrays,rows,cols,scaling,proc-rows,proc-cols,slowdim,rank,version,alignment-increment,"
                   "alignment-threshold,meta-block-size,layout,fill,fmt,io, async, wall [s],fsize [B],"
                   "write-phase-min [s],write-phase-max [s],creat-min [s],creat-max [s],write-min [s],write-max [s],"
                   "read-phase-min [s],read-phase-max [s],read-min [s],read-max [s],engine,"
                   "posix-write [s],posix-read [s],write-ratio,read-ratio\n");
    }
    const uint64_t tr = c.strong ? c.rows / c.prows : c.rows, tc = c.strong ? c.cols / c.pcols : c.cols;
    const uint64_t R = tr * c.prows, C = tc * c.pcols;
    const uint64_t prow = uint64_t(rank) / c.pcols, pcol = uint64_t(rank) % c.pcols;
    const uint64_t r0 = prow * tr, c0 = pcol * tc;
    const uint64_t tile = tr * tc, tile_bytes = tile * sizeof(double);
    const uint64_t bytes_per_rank = c.steps * c.arrays * tile_bytes;
    auto cases = cases_of(c, nranks);
    const std::string path = engine_path(o, c.hdf5_file);
    const std::string posix_path = (std::filesystem::path(o.dir) / c.hdf5_file).string() + ".posix";

    if (rank == 0)
      std::printf("iotest [%s]: %d ranks, %llu steps x %llu arrays of %llu x %llu tiles (%.1f MiB per rank), "
                  "%zu cases per engine\n",
                  section.c_str(), nranks, (unsigned long long)c.steps, (unsigned long long)c.arrays,
                  (unsigned long long)tr, (unsigned long long)tc, bytes_per_rank / 1048576.0, cases.size());
    const bool tty = rank == 0 && o.progress && ::isatty(2);

    // A step's tiles, one per array. Lent (--lend), the steps' sets take
    // turns (kLentStepSets) when each step ends with a flush (a compute
    // phase); without one the only flush is the close, and every step has
    // its own set.
    const std::size_t sets = !o.lend ? 1 : o.compute > 0 ? std::min<uint64_t>(kLentStepSets, c.steps) : c.steps;
    std::vector<std::vector<std::vector<double>>> step_tiles(
        sets, std::vector<std::vector<double>>(c.arrays, std::vector<double>(tile)));
    std::vector<double> rbuf(tile);
    std::map<std::string, std::vector<std::pair<double, double>>> ratios;  // engine -> (write, read)
    std::size_t done = 0, total = cases.size() * o.engines.size();
    // Case by case, every engine in turn: each meets the machine as the others
    // do (the page cache, the device's queue), not a phase of its own.
    for (const auto& k : cases) {
      for (const auto& engine : o.engines) {
        // The case's knobs are HDF5 properties: through HDF5's API they are
        // set for every engine, through the object model they are hdf5 engine knobs.
        const bool native = o.api == "hdf5" || base_engine(engine) == "hdf5";
        // Each case runs `repeat` times (default once, as hdf5-iotest); the
        // best time of each metric counts, the baseline's included.
        const double inf = std::numeric_limits<double>::infinity();
        PosixResult posix{inf, inf};
        double mins[5] = {inf, inf, inf, inf, inf}, maxs[5] = {inf, inf, inf, inf, inf}, wall = inf;
        uint64_t all_wrong = 0;
        for (int rep = 0; rep < o.repeat; ++rep) {
          // The hardware limit, right before each case (the machine drifts): the
          // same bytes, tile by tile, with plain POSIX pwrite (+ fsync) and pread.
          ::sync();  // (see below)
          PosixResult run_posix = posix_limit(comm, posix_path, bytes_per_rank, tile_bytes, o.posix_sync);
          Times t;
          uint64_t wrong = 0;
          if (rank == 0) remove_engine_files(storage_engine_of(engine), path);
          // What earlier runs left unsynced goes to the device now, untimed:
          // else a run that syncs pays for the runs before it that did not.
          ::sync();
          MPI_Barrier(comm);
          auto io = o.api == "hdf5" ? hdf5_api_io(engine, k, comm) : object_model_io(engine, k, comm, o.lend);
          double wall0 = MPI_Wtime();
          // ---- write phase ----
          double p0 = MPI_Wtime();
          {
            io->create(path);
            std::set<std::string> made;
            for (uint64_t s = 0; s < c.steps; ++s) {
              if (s > 0 && o.compute > 0) {  // between steps, as hdf5-iotest's delay
                const double e0 = MPI_Wtime();
                io->end_step();  // a flush point that returns at once: an async engine moves the step meanwhile
                t.write += MPI_Wtime() - e0;
                const double z0 = MPI_Wtime();
                compute_phase(o.compute, o.busy);
                t.compute += MPI_Wtime() - z0;
              }
              // The step's values are made first (a simulation's arrays are
              // in memory when it writes them), and the ranks start its I/O
              // together: values made between two collective calls charged
              // one rank's arithmetic to another's call wherever ranks share
              // cores. Untimed, as the values always were.
              const double f0 = MPI_Wtime();
              auto& tiles = step_tiles[s % sets];
              for (uint64_t a = 0; a < c.arrays; ++a)
                for (uint64_t i = 0; i < tr; ++i)
                  for (uint64_t j = 0; j < tc; ++j) tiles[a][i * tc + j] = value_of(s, a, r0 + i, c0 + j);
              MPI_Barrier(comm);
              t.fill += MPI_Wtime() - f0;
              for (uint64_t a = 0; a < c.arrays; ++a) {
                TilePlace l = place_of(c, k, s, a, R, C, tr, tc, r0, c0);
                if (made.insert(l.path).second) {
                  double c0t = MPI_Wtime();
                  io->create_dataset(l.path, l.shape, l.chunk);
                  t.create += MPI_Wtime() - c0t;
                }
                Dims count(l.start.size(), 1);
                count[count.size() - 2] = tr, count.back() = tc;
                double w0 = MPI_Wtime();
                io->write(l.path, l.start, count, tiles[a].data());
                t.write += MPI_Wtime() - w0;
              }
            }
            double w0 = MPI_Wtime();
            io->close();  // deferred writes move here
            t.write += MPI_Wtime() - w0;
          }
          t.write_phase = MPI_Wtime() - p0 - t.fill - t.compute;  // the time blocked in I/O
          // ---- read phase ----
          p0 = MPI_Wtime();
          {
            io->open(path);
            for (uint64_t s = 0; s < c.steps; ++s)
              for (uint64_t a = 0; a < c.arrays; ++a) {
                TilePlace l = place_of(c, k, s, a, R, C, tr, tc, r0, c0);
                Dims count(l.start.size(), 1);
                count[count.size() - 2] = tr, count.back() = tc;
                double r0t = MPI_Wtime();
                io->read(l.path, l.start, count, rbuf.data());
                t.read += MPI_Wtime() - r0t;
                const double v0 = MPI_Wtime();
                for (uint64_t i = 0; i < tr; ++i)
                  for (uint64_t j = 0; j < tc; ++j) wrong += rbuf[i * tc + j] != value_of(s, a, r0 + i, c0 + j);
                t.check += MPI_Wtime() - v0;
              }
            io->close();
          }
          t.read_phase = MPI_Wtime() - p0 - t.check;
          t.wall = MPI_Wtime() - wall0 - t.fill - t.check;

          uint64_t run_wrong = 0;
          MPI_Allreduce(&wrong, &run_wrong, 1, MPI_UINT64_T, MPI_SUM, comm);
          all_wrong += run_wrong;
          double run_mins[5], run_maxs[5], mine[5] = {t.write_phase, t.create, t.write, t.read_phase, t.read},
                                           run_wall = 0;
          MPI_Allreduce(mine, run_mins, 5, MPI_DOUBLE, MPI_MIN, comm);
          MPI_Allreduce(mine, run_maxs, 5, MPI_DOUBLE, MPI_MAX, comm);
          MPI_Allreduce(&t.wall, &run_wall, 1, MPI_DOUBLE, MPI_MAX, comm);
          // Best of the repetitions, metric by metric (the baseline's too).
          for (int i = 0; i < 5; ++i) mins[i] = std::min(mins[i], run_mins[i]), maxs[i] = std::min(maxs[i], run_maxs[i]);
          wall = std::min(wall, run_wall);
          posix.write_s = std::min(posix.write_s, run_posix.write_s);
          posix.read_s = std::min(posix.read_s, run_posix.read_s);
        }
        uint64_t fsize = rank == 0 ? engine_file_size(storage_engine_of(engine), path) : 0;
        if (rank == 0) {
          if (all_wrong) {
            std::fprintf(stderr, "iotest: %llu wrong values read back (engine %s, case rank %d)\n",
                         (unsigned long long)all_wrong, label_of(engine).c_str(), k.rank);
            exit_code = 4;
          }
          const double wr = posix.write_s / maxs[0], rr = posix.read_s / maxs[3];
          ratios[label_of(engine)].push_back({wr, rr});
          auto na = [&](const std::string& v) { return native ? v : std::string("n/a"); };
          std::fprintf(csv,
                       "%llu,%llu,%llu,%llu,%s,%llu,%llu,%s,%d,0,%s,%s,%s,%s,%s,%s,%s,0,%.6f,%llu,"
                       "%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%s,%.6f,%.6f,%.4f,%.4f\n",
                       (unsigned long long)c.steps, (unsigned long long)c.arrays, (unsigned long long)c.rows,
                       (unsigned long long)c.cols, c.strong ? "strong" : "weak", (unsigned long long)c.prows,
                       (unsigned long long)c.pcols, k.step_first ? "step" : "array", k.rank,
                       na(std::to_string(k.align_inc)).c_str(), na(std::to_string(k.align_thr)).c_str(),
                       na(std::to_string(k.meta_block)).c_str(), k.chunked ? "chunked" : "contiguous",
                       na(k.fill ? "true" : "false").c_str(), na(k.libver).c_str(),
                       na(nranks == 1 ? c.single_process : k.io).c_str(), wall, (unsigned long long)fsize, mins[0],
                       maxs[0], mins[1], maxs[1], mins[2], maxs[2], mins[3], maxs[3], mins[4], maxs[4],
                       csv_field(label_of(engine)).c_str(), posix.write_s, posix.read_s, wr, rr);
          std::fflush(csv);
          ++done;
          if (tty)
            std::fprintf(stderr, "\r  [%3zu/%zu] %-6s rank %d %-5s %-10s write %.2fx read %.2fx of POSIX   ", done,
                         total, label_of(engine).c_str(), k.rank, k.step_first ? "step" : "array",
                         k.chunked ? "chunked" : "contiguous", wr, rr);
        }
      }
    }
    if (rank == 0) {
      if (tty) std::fprintf(stderr, "\n");
      std::printf("\n%-40s %6s  %-28s  %-28s\n", "engine", "cases", "write / POSIX  min median max",
                  "read / POSIX  min median max");
      for (auto& [label, rs] : ratios) {
        auto stats = [&](bool write) {
          std::vector<double> v;
          for (auto& p : rs) v.push_back(write ? p.first : p.second);
          std::sort(v.begin(), v.end());
          double med = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
          char b[64];
          std::snprintf(b, sizeof b, "%.2f %.2f %.2f", v.front(), med, v.back());
          return std::string(b);
        };
        std::printf("%-40s %6zu  %-28s  %-28s\n", label.c_str(), rs.size(), stats(true).c_str(), stats(false).c_str());
      }
      std::printf("CSV: %s\n", csv_path.c_str());
    }
    if (rank == 0 && !o.keep_files)
      for (const auto& engine : o.engines) remove_engine_files(storage_engine_of(engine), path);
  }
  if (csv) std::fclose(csv);
  MPI_Bcast(&exit_code, 1, MPI_INT, 0, comm);
  return exit_code;
}

}  // namespace h5loom::bench
