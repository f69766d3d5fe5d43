// Helpers shared by the benchmarks: timing, the POSIX baseline, engine files.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>
#include <h5loom/engine.hpp>
#include <h5loom/errors.hpp>
#include <h5loom/tools.hpp>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench.hpp"

namespace h5loom::bench {

double timed(MPI_Comm comm, const std::function<void()>& fn) {
  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  fn();
  double mine = MPI_Wtime() - t0, most = 0;
  MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, comm);
  return most;
}

void compute_phase(double seconds, bool busy) {
  if (seconds <= 0) return;
  if (!busy) return std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double end = MPI_Wtime() + seconds;
  volatile double sink = 0;  // work the compiler cannot drop
  while (MPI_Wtime() < end)
    for (int i = 0; i < 4096; ++i) sink = sink + double(i) * 0.5;
}

PosixResult posix_limit(MPI_Comm comm, const std::string& path, uint64_t bytes, uint64_t piece, bool sync,
                        bool interleaved) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  piece = std::max<uint64_t>(1, std::min(piece, bytes));
  // On a page: the hardware's best. A buffer from malloc lies 16 bytes past a
  // page, and some CPUs copy between it and page-aligned file offsets at a
  // third of the speed (src/core/memory_copy.hpp); where the allocator put it
  // decided the baseline's read time from case to case.
  std::vector<unsigned char> memory(piece + 4096);
  unsigned char* buf = memory.data() + ((4096 - reinterpret_cast<std::uintptr_t>(memory.data()) % 4096) % 4096);
  for (uint64_t i = 0; i < piece; ++i) buf[i] = static_cast<unsigned char>(i * 131 + rank);
  if (rank == 0) ::unlink(path.c_str());
  MPI_Barrier(comm);
  auto fail = [&](const char* what) { throw IOError(std::string(what) + " " + path + ": " + std::strerror(errno)); };
  PosixResult r;
  // Interleaved: piece k of rank r lands at (k * size + r) * piece; otherwise
  // rank r's pieces follow each other from r * bytes.
  const uint64_t pieces = (bytes + piece - 1) / piece;
  auto where = [&](uint64_t k) {
    return off_t(interleaved ? (k * uint64_t(size) + uint64_t(rank)) * piece : uint64_t(rank) * bytes + k * piece);
  };
  r.write_s = timed(comm, [&] {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
    if (fd < 0) fail("cannot open");
    for (uint64_t k = 0; k < pieces; ++k) {
      uint64_t n = std::min(piece, bytes - k * piece);
      if (::pwrite(fd, buf, n, where(k)) != ssize_t(n)) fail("pwrite failed on");
    }
    if (sync && ::fsync(fd) != 0) fail("fsync failed on");
    ::close(fd);
  });
  r.read_s = timed(comm, [&] {
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) fail("cannot open");
    for (uint64_t k = 0; k < pieces; ++k) {
      uint64_t n = std::min(piece, bytes - k * piece);
      if (::pread(fd, buf, n, where(k)) != ssize_t(n)) fail("pread failed on");
    }
    ::close(fd);
  });
  MPI_Barrier(comm);
  if (rank == 0) ::unlink(path.c_str());
  return r;
}

void agree(MPI_Comm comm, const std::function<void()>& local_checks) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int code = 0;
  std::string message;
  try {
    local_checks();
  } catch (const Error& e) {
    code = static_cast<int>(e.code()), message = e.what();
  } catch (const std::exception& e) {
    code = static_cast<int>(ErrorCode::Generic), message = e.what();
  }
  // MAX of (size - rank) picks the lowest failing rank; MAX of "passed" says
  // whether any rank got through, to tell "on every rank" from "on rank R".
  int mine[2] = {code ? size - rank : 0, code ? 0 : 1}, all[2] = {0, 0};
  MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm);
  if (all[0] == 0) return;
  const int root = size - all[0];
  int head[2] = {code, static_cast<int>(message.size())};
  MPI_Bcast(head, 2, MPI_INT, root, comm);
  message.resize(static_cast<std::size_t>(head[1]));
  MPI_Bcast(message.data(), head[1], MPI_CHAR, root, comm);
  if (all[1]) message += " (on rank " + std::to_string(root) + ")";
  throw AgreedError(static_cast<ErrorCode>(head[0]), message);
}

void check_engine(const std::string& engine) {
  try {
    engine::make_engine(engine);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // a JSON syntax error
    throw ConfigError("bad engine configuration '" + engine + "': " + e.what());
  }
}

void prepare_dir(MPI_Comm comm, const std::string& dir) {
  int rank = 0, ok = 1;
  MPI_Comm_rank(comm, &rank);
  std::string why;
  if (rank == 0) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir)) ok = 0, why = ec ? ec.message() : "not a directory";
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  if (!ok) throw IOError("cannot use directory '" + dir + "' for the benchmark's files" + (why.empty() ? "" : ": " + why));
}

std::FILE* open_csv(MPI_Comm comm, const std::string& path) {
  int rank = 0, ok = 1;
  MPI_Comm_rank(comm, &rank);
  std::FILE* f = nullptr;
  if (rank == 0) ok = (f = std::fopen(path.c_str(), "w")) != nullptr;
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  if (!ok) throw IOError("cannot write CSV file '" + path + "'");
  return f;
}

std::string base_engine(const std::string& engine) {
  if (!engine.empty() && engine.front() == '{') return nlohmann::json::parse(engine).value("engine", "hdf5");
  return engine.empty() ? "hdf5" : engine;
}

std::string engine_label(const std::string& engine) {
  if (engine.empty() || engine.front() != '{') return engine.empty() ? "hdf5" : engine;
  // The wrappers, the base engine and its knobs, e.g. async+log{"aggregators":"all"}:
  // distinct configurations stay apart.
  auto cfg = nlohmann::json::parse(engine);
  std::string base = cfg.value("engine", "hdf5");
  std::string label;
  if (cfg.contains("wrappers") && cfg["wrappers"].is_array())
    for (const auto& w : cfg["wrappers"]) {
      if (!w.is_string()) continue;
      const std::string name = w.get<std::string>();
      label += name + (cfg.contains(name) ? cfg[name].dump() : "") + "+";
    }
  return label + base + (cfg.contains(base) ? cfg[base].dump() : "");
}

std::string csv_field(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

uint64_t engine_file_size(const std::string& engine, const std::string& path) {
  uint64_t total = 0;
  for (const auto& piece : file_storage(path, engine)) total += piece.bytes;
  return total;
}

std::string engine_path(const CommonOptions& o, const std::string& name) {
  if (o.store.empty()) return (std::filesystem::path(o.dir) / name).string();
  return o.store + (o.store.back() == '/' ? "" : "/") + std::filesystem::path(name).filename().string();
}

void remove_engine_files(const std::string& engine, const std::string& path) {
  // Every engine's files at `path`, not only `engine`'s: a run takes turns of
  // engines on one path, and each engine knows its own pieces (a log's
  // NAME.loom beside the front file, a Zarr store that is a directory).
  std::vector<std::string> names = engine::engine_names();
  std::stable_partition(names.begin(), names.end(), [&](const std::string& n) { return n != engine; });
  for (const auto& name : names) {
    auto e = engine::storage_engine(name);
    if (e->probe(path) != engine::Claim::No && !e->storage(path).empty()) e->remove(path);
  }
}

}  // namespace h5loom::bench
