// The h5loom command: look into files of any engine.
//
//   h5loom ls FILE            the tree with shapes, types and attributes (like h5ls -r)
//   h5loom dump FILE PATH     the values of one dataset, or a group's attributes and members
//   h5loom info FILE          engine, layout, knobs, size, object counts
//   h5loom convert IN OUT     copy into a new file (default: a native HDF5 file), in parallel under mpirun
//   h5loom verify FILE        check every checksum (log engine) or read every dataset
//   h5loom bench NAME         benchmarks through any engine, against plain POSIX (docs/benchmarks.md)
//   h5loom report DIR         an HTML page from a profile (H5LOOM_PROFILE=DIR); runs the Python
//                             module h5loom.report, which must be importable by python3 ($H5LOOM_PYTHON)
//   h5loom bench peers        h5loom beside raw POSIX, h5py and ADIOS2 from Python (h5loom.bench_peers, ditto)
//
// It runs as one process or under mpirun (rank 0 prints).
#include <sys/stat.h>

#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <map>
#include <vector>
#include <CLI/CLI.hpp>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <optional>
#include <h5loom/engine.hpp>
#include <h5loom/h5loom.hpp>
#include <h5loom/tools.hpp>

#include "bench.hpp"
#include "config_cmd.hpp"
#include <iostream>
#include <sstream>

namespace {

using namespace h5loom;

struct Printer {
  bool on = true;  // rank 0 only
  template <class... A>
  void operator()(const char* fmt, A... a) const {
    if (on) std::printf(fmt, a...);
  }
  void line(const std::string& s) const {
    if (on) std::printf("%s\n", s.c_str());
  }
};

// The files the command has open. They outlive an error: closing a file is a
// collective step, and a rank that fails alone would otherwise start it while
// unwinding and wait there for ranks that are elsewhere. main() closes them
// once every rank has reached the end of the command.
std::vector<File> held_files;

File& open_held(const std::string& file, const FileOptions& opts) {
  held_files.push_back(File::open(file, Mode::Read, opts));
  return held_files.back();
}

std::string describe_dataset(const Dataset& ds) {
  std::ostringstream os;
  if (ds.null_space()) return "Dataset null " + datatype_name(ds.dtype()) + " (no elements)";
  os << "Dataset " << dims_to_string(ds.shape()) << ' ' << datatype_name(ds.dtype());
  if (ds.max_shape() != ds.shape()) os << " max " << dims_to_string(ds.max_shape());
  if (ds.layout() == Layout::Chunked) os << " chunked " << dims_to_string(ds.chunks());
  else os << " contiguous";
  return os.str();
}

void print_attributes(const Object& o, const Printer& out, const std::string& indent) {
  for (const auto& name : o.attribute_names()) {
    auto v = o.attribute(name);
    std::string type = v.is_numeric() || v.is_empty() ? datatype_name(v.dtype()) : v.is_string() ? "string" : "strings";
    out.line(indent + "@" + name + " = " + v.to_string() + "  (" + type + ")");
  }
}


int cmd_ls(const std::string& file, const FileOptions& opts, bool attrs, const Printer& out) {
  File& f = open_held(file, opts);
  out("%-40s Group\n", "/");
  if (attrs) print_attributes(f, out, "    ");
  std::vector<std::string> groups{"/"}, objects{"/"};
  f.visit([&](const std::string& path, ObjectKind kind) {
    objects.push_back(path);
    if (kind == ObjectKind::Group) {
      groups.push_back(path);
      out("%-40s Group\n", path.c_str());
      if (attrs) print_attributes(f.group(path), out, "    ");
    } else if (kind == ObjectKind::Datatype) {
      auto t = f.named_datatype(path);
      out("%-40s Type %s\n", path.c_str(), t.dtype().name().c_str());
      if (attrs) print_attributes(t, out, "    ");
    } else {
      auto ds = f.dataset(path);
      out("%-40s %s\n", path.c_str(), describe_dataset(ds).c_str());
      if (attrs) print_attributes(ds, out, "    ");
    }
  });
  // Then the links: soft, external, and the other names of objects with several (visit gives each object once).
  std::map<uint64_t, std::string> first_names;
  if (f.supports("hard_links"))
    for (const auto& path : objects) first_names.emplace(f.reference(path).token, path);
  for (const auto& g : groups)
    for (const auto& name : f.group(g).list()) {
      const std::string path = g == "/" ? "/" + name : g + "/" + name;
      if (auto target = f.soft_link(path)) {
        out("%-40s Soft link to %s\n", path.c_str(), target->c_str());
      } else if (auto link = f.external_link(path)) {
        out("%-40s External link to %s in %s\n", path.c_str(), link->path.c_str(), link->file.c_str());
      } else if (!first_names.empty() && f.kind(path) != ObjectKind::None) {
        const std::string& first = first_names.at(f.reference(path).token);
        if (first != path) out("%-40s Hard link to %s\n", path.c_str(), first.c_str());
      }
    }
  return 0;
}

void dump_values(Dataset& ds, uint64_t max_values, const Printer& out) {
  auto shape = ds.shape();
  const Datatype type = ds.dtype();
  uint64_t total = product(shape);
  uint64_t n = std::min(total, max_values);
  uint64_t row = shape.back() == 0 ? 1 : shape.back();
  // Read only the leading slabs (along dimension 0) that hold the first n values.
  ElementBuffer values;
  if (n > 0) {
    Dims start(shape.size(), 0), count = shape;
    uint64_t per_slab = total / shape[0];
    count[0] = std::min<uint64_t>(shape[0], (n + per_slab - 1) / per_slab);
    values.resize(type, product(count));
    ds.read_raw(Selection::box(start, count), type, values.data(), product(count));
  } else {
    ds.read_raw(Selection::none(), type, nullptr, 0);  // reads are collective: join with nothing
  }
  std::ostringstream os;
  Dims index(shape.size(), 0);
  for (uint64_t i = 0; i < n; ++i) {
    if (i % row == 0) {
      uint64_t rest = i;
      for (size_t d = shape.size(); d-- > 0;) {
        index[d] = rest % shape[d];
        rest /= shape[d];
      }
      if (i) os << '\n';
      os << '(';
      for (size_t d = 0; d < index.size(); ++d) os << (d ? "," : "") << index[d];
      os << "): ";
    } else {
      os << ", ";
    }
    os << format_element(type, values.element(i));
  }
  if (n) os << '\n';
  if (n < total) os << "... (" << total - n << " more values; use --max)\n";
  if (out.on) std::cout << os.str();
}

int cmd_dump(const std::string& file, const std::string& path, const FileOptions& opts, uint64_t max_values,
             const Printer& out) {
  File& f = open_held(file, opts);
  auto kind = f.kind(path);
  if (kind == ObjectKind::None) throw NotFoundError("no object '" + path + "' in file '" + file + "'");
  if (kind == ObjectKind::Group) {
    auto g = f.group(path);
    out("%s: Group\n", g.path().c_str());
    print_attributes(g, out, "    ");
    for (const auto& name : g.list()) out("    %s/\n", name.c_str());
    return 0;
  }
  if (kind == ObjectKind::Datatype) {
    auto t = f.named_datatype(path);
    out("%s: Type %s\n", t.path().c_str(), t.dtype().name().c_str());
    print_attributes(t, out, "    ");
    return 0;
  }
  auto ds = f.dataset(path);
  out("%s: %s\n", ds.path().c_str(), describe_dataset(ds).c_str());
  print_attributes(ds, out, "    ");
  dump_values(ds, max_values, out);
  return 0;
}

int cmd_info(const std::string& file, const FileOptions& opts, const Printer& out) {
  File& f = open_held(file, opts);
  struct stat sb {};
  uint64_t total = 0, on_disk = 0;  // every file the engine keeps for it: apparent size, blocks allocated
  for (const auto& piece : file_storage(file, opts.engine)) {
    total += piece.bytes;
    // Blocks allocated, where the piece is a local file (else its size).
    on_disk += ::stat(piece.location.c_str(), &sb) == 0 ? uint64_t(sb.st_blocks) * 512 : piece.bytes;
  }
  uint64_t groups = 1, datasets = 0, elements = 0, bytes = 0;
  f.visit([&](const std::string& path, ObjectKind kind) {
    if (kind == ObjectKind::Group) {
      ++groups;
      return;
    }
    if (kind != ObjectKind::Dataset) return;
    auto ds = f.dataset(path);
    ++datasets;
    elements += product(ds.shape());
    bytes += product(ds.shape()) * datatype_size(ds.dtype());
  });
  out("file: %s\n", file.c_str());
  // Sparse files (a log's unused region space) take less than their size.
  const bool sparse = on_disk + 65536 < total;
  const uint64_t stored = sparse ? on_disk : total;
  if (sparse)
    out("size: %" PRIu64 " bytes, of which %" PRIu64 " allocated (sparse)\n", total, on_disk);
  else
    out("size: %" PRIu64 " bytes\n", total);
  out("groups: %" PRIu64 " (with the root)\n", groups);
  out("datasets: %" PRIu64 " holding %" PRIu64 " elements, %" PRIu64 " bytes of data\n", datasets, elements, bytes);
  if (bytes) out("storage overhead: %.1f%% of the data size\n", 100.0 * (double(stored) - double(bytes)) / bytes);
  if (out.on) std::cout << f.describe();
  return 0;
}

int cmd_convert(const std::string& in, const std::string& out_file, const FileOptions& in_opts,
                const std::string& out_engine, const Printer& out) {
  FileOptions out_opts;
  out_opts.engine = out_engine.empty() ? "hdf5" : out_engine;
  convert_file(in, out_file, in_opts, out_opts);
  out("converted %s -> %s (engine %s)\n", in.c_str(), out_file.c_str(), out_opts.engine.c_str());
  return 0;
}

int cmd_verify(const std::string& file, const Printer& out) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return 0;  // one process reads everything
  auto r = verify_file(file);
  out("%s: engine %s\n", file.c_str(), r.engine.c_str());
  std::string counts;  // "3 committed epochs, 21 blocks, ..."
  for (const auto& [what, n] : r.counts) counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  if (!counts.empty()) out("  %s\n", counts.c_str());
  for (const auto& note : r.notes) out("  %s\n", note.c_str());
  for (const auto& e : r.errors) out("  ERROR: %s\n", e.c_str());
  out("%s\n", r.ok() ? "OK" : "DAMAGED");
  return r.ok() ? 0 : 3;
}

// Counts on the command line: CLI11 would turn -5 into 2^64 - 5 for an
// unsigned option (and its own range checks print DBL_MAX as the bound).
CLI::Validator count_validator(long long least) {
  return CLI::Validator(
      [least](std::string& v) -> std::string {
        try {
          std::size_t used = 0;
          long long x = std::stoll(v, &used);
          if (used == v.size() && x >= least) return "";
        } catch (const std::exception&) {
        }
        return "must be a whole number of at least " + std::to_string(least) + ", not '" + v + "'";
      },
      least > 0 ? "POSITIVE" : "COUNT");
}
const CLI::Validator kCount = count_validator(0), kPositiveCount = count_validator(1);

// How long a rank that failed waits for the others to reach the end of the
// command before it ends the job. Ranks that raised the same error at the same
// point arrive within milliseconds; a rank that is still inside a collective
// call waiting for the failed one never arrives.
constexpr double kEndGraceSeconds = 5.0;

// Ends the command the same way on every rank: the exit status (the highest of
// all ranks) and one error message, printed by the lowest failing rank. A rank
// that failed alone cannot know whether the others wait for it in a collective
// call (they would wait forever), so it waits for them a few seconds only, then
// names the error and ends the job with MPI_Abort. `end` is a communicator of
// its own, so this step cannot match a collective call of the command.
int end_command(MPI_Comm end, int status, const std::string& error) {
  int rank = 0, size = 1;
  MPI_Comm_rank(end, &rank);
  MPI_Comm_size(end, &size);
  const bool failed = !error.empty();
  if (size == 1) {
    if (failed) std::fprintf(stderr, "h5loom: error: %s\n", error.c_str());
    return status;
  }
  int mine[2] = {status, failed ? size - rank : 0}, all[2] = {0, 0};
  MPI_Request req;
  MPI_Iallreduce(mine, all, 2, MPI_INT, MPI_MAX, end, &req);
  if (!failed) {
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    const double deadline = MPI_Wtime() + kEndGraceSeconds;
    int done = 0;
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE), !done && MPI_Wtime() < deadline) ::usleep(1000);
    if (!done) {
      std::fprintf(stderr,
                   "h5loom: error on rank %d: %s\nh5loom: rank %d ends the job (MPI_Abort): the other ranks did not "
                   "finish the command within %.0f s, they may be waiting for this rank in a collective call\n",
                   rank, error.c_str(), rank, kEndGraceSeconds);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, status ? status : 1);
    }
  }
  if (failed && rank == size - all[1]) std::fprintf(stderr, "h5loom: error: %s\n", error.c_str());
  return all[0];
}

}  // namespace

// Runs `python -m module` with the arguments from argv[first] on, in place of
// this process ($H5LOOM_PYTHON, else python3); returns only if it cannot.
int exec_python_module(const char* command, const char* module, int argc, char** argv, int first) {
  const char* py = std::getenv("H5LOOM_PYTHON");
  std::string python = py && *py ? py : "python3";
  std::vector<char*> args{const_cast<char*>(python.c_str()), const_cast<char*>("-m"), const_cast<char*>(module)};
  for (int i = first; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execvp(python.c_str(), args.data());
  std::fprintf(stderr, "h5loom %s: cannot run %s -m %s: %s (set H5LOOM_PYTHON to a Python with the h5loom package, "
               "e.g. .venv/bin/python)\n", command, python.c_str(), module, std::strerror(errno));
  return 1;
}

int main(int argc, char** argv) {
  // `report` and `bench peers` are written in Python (python/h5loom/): hand over to them.
  if (argc > 1 && std::string(argv[1]) == "report") return exec_python_module("report", "h5loom.report", argc, argv, 2);
  if (argc > 2 && std::string(argv[1]) == "bench" && std::string(argv[2]) == "peers")
    return exec_python_module("bench peers", "h5loom.bench_peers", argc, argv, 3);
  CLI::App app{"h5loom: look into h5loom files (any engine)", "h5loom"};
  app.require_subcommand(1);
  std::string file, path, engine;
  bool no_attrs = false;
  uint64_t max_values = ~uint64_t{0};

  auto add_common = [&](CLI::App* sub) {
    sub->add_option("file", file, "the file")->required();
    sub->add_option("--engine", engine, "engine name or JSON configuration (default: $H5LOOM_ENGINE, else hdf5)");
  };
  auto* ls = app.add_subcommand("ls", "list every group and dataset with shape, type, layout and attributes");
  add_common(ls);
  ls->add_flag("--no-attrs", no_attrs, "do not print attributes");
  auto* dump = app.add_subcommand("dump", "print the values of a dataset, or a group's attributes and members");
  add_common(dump);
  dump->add_option("path", path, "the object's path in the file")->required();
  dump->add_option("--max", max_values, "print at most this many values")->check(kCount);
  auto* info = app.add_subcommand("info", "engine, layout and knobs, file size, object counts");
  add_common(info);
  std::string out_file, out_engine;
  auto* convert = app.add_subcommand("convert", "copy a file into a new one (default: native HDF5), in parallel under mpirun");
  add_common(convert);
  convert->add_option("out", out_file, "the new file")->required();
  convert->add_option("--to", out_engine, "engine of the new file (default hdf5)");
  auto* verify = app.add_subcommand("verify", "check every checksum of a log-engine file (others: read every dataset); exit 3 if damaged");
  verify->add_option("file", file, "the file")->required();

  auto* config = app.add_subcommand("config", "where h5loom's HDF5 and VOL connector are (for HDF5 programs)");
  bool want_prefix = false;
  std::string vol_env_config;
  config->add_flag("--hdf5-prefix", want_prefix, "print the prefix of the HDF5 h5loom was built with");
  auto* vol_env_opt = config->add_option("--vol-env", vol_env_config,
                                         "print the HDF5_PLUGIN_PATH and HDF5_VOL_CONNECTOR lines that route an "
                                         "unchanged HDF5 program through h5loom with this engine configuration "
                                         "(a name or JSON; \"\" for the file's own engine)");
  config->require_option(1, 2);
  auto* bench = app.add_subcommand("bench", "benchmarks through any engine, beside plain POSIX I/O of the same bytes");
  bench->require_subcommand(1);
  h5loom::bench::IotestOptions iotest_opts;
  std::vector<std::string> bench_engines;
  auto* iotest = bench->add_subcommand("iotest", "hdf5-iotest: its ini format, its eight nested loops, its CSV columns");
  iotest->add_option("--ini", iotest_opts.ini, "configuration file (default: the built-in small ini)");
  iotest->add_option("--api", iotest_opts.api,
                     "h5loom (default): through h5loom's object model; hdf5: through HDF5's C API, as hdf5-iotest "
                     "(--engine native: HDF5 alone; another engine: h5loom's VOL connector with it)")
      ->check(CLI::IsMember({"h5loom", "hdf5"}));
  iotest->add_option("--repeat", iotest_opts.repeat,
                     "run each case this many times, the baseline too, and keep the best time of each (default 1)")
      ->check(kPositiveCount);
  iotest->add_flag("--lend", iotest_opts.lend,
                   "lend the tiles to h5loom until their step's flush completes (write(span)) instead of copying them, "
                   "as hdf5-iotest's async mode lends its buffer until H5ESwait (--api h5loom)");
  // Never parsed here: main() hands `bench peers` to Python first. Listed for --help.
  bench->add_subcommand("peers", "h5loom beside raw POSIX, h5py and ADIOS2 from Python, best of N (runs "
                                 "python3 -m h5loom.bench_peers; $H5LOOM_PYTHON names another Python)");
  h5loom::bench::KernelOptions kopts;
  auto* qmcpack = bench->add_subcommand("qmcpack", "QMCPACK restart: walkers written one at a time, then read back");
  qmcpack->add_option("--walkers", kopts.walkers, "walkers per rank (default 4000)")->check(kCount);
  qmcpack->add_option("--particles", kopts.walker_particles, "particles per walker (default 32)")
      ->check(kCount);
  qmcpack->add_option("--state-size", kopts.state_size, "random-number state words per rank (default 1024)")
      ->check(kCount);
  auto* vpic = bench->add_subcommand("vpic", "VPIC-IO: 8 particle arrays per step; BD-CATS-style full and partial reads");
  vpic->add_option("--particles", kopts.particles, "particles per rank (default 524288)")->check(kCount);
  vpic->add_option("--steps", kopts.steps, "time steps (default 2)")->check(kCount);
  vpic->add_flag("--lend", kopts.lend,
                 "lend the arrays to h5loom until each step's flush completes (write(span)) instead of copying them");
  auto* hacc = bench->add_subcommand("hacc", "HACC GenericIO: 9 variables, ±1 % counts, CRC-64 per variable and rank");
  hacc->add_option("--particles", kopts.particles, "particles per rank, about (default 524288)")
      ->check(kCount);
  auto* amrex = bench->add_subcommand("amrex", "AMReX plotfile: a grid in boxes of max_grid_size, one dataset per level");
  amrex->add_option("--cells", kopts.cells, "cells per side of the cubic domain (default 128)")
      ->check(kCount);
  // 0 would cut the domain into boxes of no size, forever.
  amrex->add_option("--max-grid-size", kopts.max_grid_size, "largest box side (default 32)")
      ->check(kPositiveCount);
  amrex->add_option("--components", kopts.components, "components per cell (default 4)")
      ->check(kCount);
  auto* e3sm = bench->add_subcommand("e3sm", "E3SM: writes driven by a PIO decomposition map, many variables");
  e3sm->add_option("--map", kopts.map, "decomposition map (.dat, PIO format)")->required();
  e3sm->add_option("--variables", kopts.variables, "variables written with the map (default 20)")
      ->check(kCount);
  for (auto* b : {qmcpack, vpic, hacc, amrex, e3sm})
    b->add_option("--repeat", kopts.repeat, "best of this many runs (default 3)")->check(kPositiveCount);
  h5loom::bench::PioOptions pio_opts;
  auto* pio = bench->add_subcommand(
      "pio", "PIO's pioperformance: a decomposition's integer, float and double variables and frames into netCDF-4 "
             "through each rearranger and number of I/O tasks");
  pio->add_option("--map", pio_opts.map, "decomposition map (.dat, PIO format)")->required();
  pio->add_option("--variables", pio_opts.variables, "variables of each type (default 2)")->check(kPositiveCount);
  pio->add_option("--frames", pio_opts.frames, "records (default 2)")->check(kPositiveCount);
  pio->add_option("--rearranger", pio_opts.rearrangers, "box or subset; repeat for both (default both)")
      ->check(CLI::IsMember({"box", "subset"}))
      ->allow_extra_args(false);
  pio->add_option("--iotasks", pio_opts.iotasks, "numbers of I/O tasks; repeat (default 1 2 4 8 16, up to the ranks)")
      ->check(kPositiveCount)
      ->allow_extra_args(false);
  pio->add_option("--repeat", pio_opts.repeat, "best of this many runs (default 3)")->check(kPositiveCount);
  h5loom::bench::SubmitOptions submit_opts;
  auto* submit = bench->add_subcommand("submit", "what one small write costs the program (write_copy alone)");
  submit->add_option("--writes", submit_opts.writes, "writes per rank (default 20000)")->check(kPositiveCount);
  submit->add_option("--bytes", submit_opts.bytes, "bytes per write (default 256)")->check(kPositiveCount);
  submit->add_option("--repeat", submit_opts.repeat, "best of this many runs (default 3)")->check(kPositiveCount);
  h5loom::bench::CommonOptions common;
  for (auto* b : {iotest, qmcpack, vpic, hacc, amrex, e3sm, pio, submit}) {
    // One value per --engine: a stray word after it (an ini path without
    // --ini) is reported as unexpected instead of being taken for an engine.
    b->add_option("--engine", bench_engines, "engine name or JSON configuration; repeat to compare (default hdf5)")
        ->allow_extra_args(false);
    b->add_option("--dir", common.dir, "directory for the files (shared by all ranks)");
    b->add_option("--store", common.store,
                  "put the engines' files in this store instead (a URL: s3://bucket/prefix, for the zarr engine); "
                  "the POSIX baseline and the CSV stay in --dir");
    b->add_option("--csv", common.csv, "CSV output file (default: in --dir)");
    b->add_flag("--keep-files", common.keep_files, "keep the benchmark's files");
    b->add_flag("!--no-progress", common.progress, "no progress line");
    b->add_flag("!--no-posix-sync", common.posix_sync,
                "the POSIX baseline does not fsync (compare with engines that do not sync either)");
  }
  for (auto* b : {iotest, vpic, amrex}) {
    auto* compute = b->add_option("--compute", common.compute,
                                  "seconds of compute (a sleep; with --busy, a spin) after each time step's writes "
                                  "(iotest: between steps, as hdf5-iotest's delay), for async engines to overlap; "
                                  "the report shows the time blocked in I/O beside it (default 0)")
                        ->check(CLI::NonNegativeNumber);
    b->add_flag("--busy", common.busy,
                "the compute phase keeps the rank's core busy instead of sleeping, as a simulation's step does (an "
                "async engine's background thread then competes with it for the CPU)")
        ->needs(compute);
  }

  // MPI first, so that every rank can agree on the arguments: under mpirun
  // (MPMD) ranks may get different ones, and a rank that returned here alone
  // would leave the others waiting.
  ensure_mpi();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm end = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &end);
  {
    std::optional<CLI::ParseError> parse_error;
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      parse_error = e;
    }
    // --help and bad arguments alike: the lowest rank that has one prints it
    // (once, not once per rank), and every rank exits with its status.
    int mine[2] = {parse_error ? size - rank : 0, parse_error ? parse_error->get_exit_code() : 0}, all[2] = {0, 0};
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, end);
    if (all[0]) {
      if (rank == size - all[0]) app.exit(*parse_error);
      return all[1] ? all[1] : (parse_error ? 0 : 2);
    }
  }

  int status = 2;
  std::string error;
  bool agreed = false;
  try {
    Printer out{rank == 0};
    FileOptions opts;
    opts.engine = engine;
    if (*ls) status = cmd_ls(file, opts, !no_attrs, out);
    else if (*dump) status = cmd_dump(file, path, opts, max_values, out);
    else if (*info) status = cmd_info(file, opts, out);
    else if (*convert) status = cmd_convert(file, out_file, opts, out_engine, out);
    else if (*verify) status = cmd_verify(file, out);
    else if (*config) {
      if (want_prefix) out.line(h5loom::cli::hdf5_prefix());
      if (*vol_env_opt) out("%s", h5loom::cli::vol_env(vol_env_config).c_str());
      status = 0;
    }
    else {
      if (!bench_engines.empty()) common.engines = bench_engines;
      h5loom::bench::agree(MPI_COMM_WORLD, [&] {
        for (const auto& e : common.engines)
          if (!(*iotest && iotest_opts.api == "hdf5" && e == "native")) h5loom::bench::check_engine(e);
      });
      static_cast<h5loom::bench::CommonOptions&>(kopts) = common;
      if (*iotest) {
        static_cast<h5loom::bench::CommonOptions&>(iotest_opts) = common;
        status = h5loom::bench::run_iotest(iotest_opts);
      } else if (*qmcpack) status = h5loom::bench::run_qmcpack(kopts);
      else if (*vpic) status = h5loom::bench::run_vpic(kopts);
      else if (*hacc) status = h5loom::bench::run_hacc(kopts);
      else if (*amrex) status = h5loom::bench::run_amrex(kopts);
      else if (*e3sm) status = h5loom::bench::run_e3sm(kopts);
      else if (*pio) {
        static_cast<h5loom::bench::CommonOptions&>(pio_opts) = common;
        status = h5loom::bench::run_pio(pio_opts);
      }
      else if (*submit) {
        static_cast<h5loom::bench::CommonOptions&>(submit_opts) = common;
        status = h5loom::bench::run_submit(submit_opts);
      }
    }
  } catch (const h5loom::bench::AgreedError& e) {
    // Raised on every rank at the same point: nobody waits, rank 0 tells.
    if (rank == 0) std::fprintf(stderr, "h5loom: error: %s\n", e.what());
    status = 1, agreed = true;
  } catch (const std::exception& e) {
    status = 1, error = e.what();
  } catch (...) {
    status = 1, error = "unknown error";
  }
  if (!agreed) status = end_command(end, status, error);
  try {
    held_files.clear();  // every rank is here: the collective closes match
  } catch (const std::exception& e) {
    std::fprintf(stderr, "h5loom: error: %s\n", e.what());
    status = status ? status : 1;
  }
  return status;
}
