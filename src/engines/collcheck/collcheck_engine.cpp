// The collcheck wrapper: before forwarding a call to the engine below it, all
// ranks compare what they are about to do (call, object, value). A mismatch is
// reported as CollectiveMismatchError naming the ranks and their calls, instead
// of a hang deep inside MPI-IO; nothing reaches the inner engine, so the file
// stays usable. Turned on by H5LOOM_CHECK_COLLECTIVE=1 or {"wrappers": ["collcheck"]}.
// The idea is HDF5's H5_COLL_API_SANITY_CHECK, made a stackable engine.
#include <chrono>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include "core/mpi_util.hpp"
#include "engine/registry.hpp"

namespace h5loom::collcheck {

using engine::FileHandle;
using engine::OpenMode;
using engine::WriteRequest;

namespace {

struct CheckedFile : FileHandle {
  std::unique_ptr<FileHandle> inner;
  std::string name;
  MPI_Comm comm = MPI_COMM_NULL;
  uint64_t calls = 0;  // collective calls made on this file so far
};

std::string spec_string(const DatasetSpec& s) {
  std::ostringstream os;
  os << datatype_name(s.dtype) << dims_to_string(s.shape);
  if (!s.max_shape.empty()) os << " max " << dims_to_string(s.max_shape);
  if (!s.layout_auto) os << (s.layout == Layout::Chunked ? " chunked" : " contiguous");
  if (!s.chunks.empty()) os << " chunks " << dims_to_string(s.chunks);
  return os.str();
}

class CollCheckEngine final : public engine::Engine {
 public:
  CollCheckEngine(std::unique_ptr<Engine> inner, double timeout_s) : inner_(std::move(inner)), timeout_s_(timeout_s) {}

  std::string name() const override { return "collcheck>" + inner_->name(); }
  std::vector<std::string> conformance_groups() const override { return inner_->conformance_groups(); }
  std::vector<std::string> files(const std::string& path) const override { return inner_->files(path); }

  std::unique_ptr<FileHandle> open(const std::string& path, OpenMode mode, MPI_Comm comm) override {
    auto f = std::make_unique<CheckedFile>();
    f->name = path;
    f->comm = comm;
    static const char* modes[] = {"read", "readwrite", "create", "create_exclusive"};
    agree(*f, "open('" + path + "', " + modes[static_cast<int>(mode)] + ")");
    f->inner = inner_->open(path, mode, comm);
    return f;
  }
  void flush(FileHandle& fh) override {
    auto& f = cast(fh);
    agree(f, "flush()");
    inner_->flush(*f.inner);
  }
  void close(FileHandle& fh) override {
    auto& f = cast(fh);
    agree(f, "close()");
    inner_->close(*f.inner);
  }
  std::string describe(FileHandle& fh) override {
    auto& f = cast(fh);
    agree(f, "describe()");
    return inner_->describe(*f.inner) + "wrapper: collcheck (timeout " + std::to_string(timeout_s_) + " s)\n";
  }
  ObjectKind kind(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    agree(f, "kind('" + path + "')");
    return inner_->kind(*f.inner, path);
  }
  void create_group(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    agree(f, "create_group('" + path + "')");
    inner_->create_group(*f.inner, path);
  }
  std::vector<std::string> list(FileHandle& fh, const std::string& group) override {
    auto& f = cast(fh);
    agree(f, "list('" + group + "')");
    return inner_->list(*f.inner, group);
  }
  void create_dataset(FileHandle& fh, const std::string& path, const DatasetSpec& spec) override {
    auto& f = cast(fh);
    agree(f, "create_dataset('" + path + "', " + spec_string(spec) + ")");
    inner_->create_dataset(*f.inner, path, spec);
  }
  DatasetInfo dataset_info(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    agree(f, "dataset_info('" + path + "')");
    return inner_->dataset_info(*f.inner, path);
  }
  void extend(FileHandle& fh, const std::string& path, const Dims& new_shape) override {
    auto& f = cast(fh);
    agree(f, "extend('" + path + "', " + dims_to_string(new_shape) + ")");
    inner_->extend(*f.inner, path, new_shape);
  }
  void write(FileHandle& fh, const std::vector<WriteRequest>& requests) override {
    auto& f = cast(fh);
    agree(f, "write()");  // the batches themselves legitimately differ between ranks
    inner_->write(*f.inner, requests);
  }
  // Not collective: each rank stages its own writes, nothing to agree on.
  bool stage(FileHandle& fh, const std::string& dataset, const Selection& sel, Datatype dtype, const void* data) override {
    return inner_->stage(*cast(fh).inner, dataset, sel, dtype, data);
  }
  void read(FileHandle& fh, const std::string& path, const Selection& sel, Datatype dtype, void* out) override {
    auto& f = cast(fh);
    agree(f, "read('" + path + "')");
    inner_->read(*f.inner, path, sel, dtype, out);
  }
  bool has_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    auto& f = cast(fh);
    agree(f, "has_attribute('" + object + "', '" + name + "')");
    return inner_->has_attribute(*f.inner, object, name);
  }
  void write_attribute(FileHandle& fh, const std::string& object, const std::string& name,
                       const AttributeValue& value) override {
    auto& f = cast(fh);
    std::string type = value.is_numeric() ? datatype_name(value.dtype()) : value.is_string() ? "string" : "strings";
    agree(f, "write_attribute('" + object + "', '" + name + "', " + type + " " + value.to_string() + ")");
    inner_->write_attribute(*f.inner, object, name, value);
  }
  AttributeValue read_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    auto& f = cast(fh);
    agree(f, "read_attribute('" + object + "', '" + name + "')");
    return inner_->read_attribute(*f.inner, object, name);
  }
  std::vector<std::string> list_attributes(FileHandle& fh, const std::string& object) override {
    auto& f = cast(fh);
    agree(f, "list_attributes('" + object + "')");
    return inner_->list_attributes(*f.inner, object);
  }

 private:
  static CheckedFile& cast(FileHandle& fh) { return static_cast<CheckedFile&>(fh); }

  // All ranks exchange (call number, hash of the call); on any difference they
  // exchange the full descriptions and every rank throws the same report.
  void agree(CheckedFile& f, const std::string& call) {
    const uint64_t number = ++f.calls;
    uint64_t mine[2] = {number, std::hash<std::string>{}(call)};
    int size = 1;
    MPI_Comm_size(f.comm, &size);
    std::vector<uint64_t> all(2 * static_cast<std::size_t>(size));
    MPI_Request req;
    MPI_Iallgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, f.comm, &req);
    wait_or_timeout(req, f, number, call, size);

    bool same = true;
    for (int r = 0; r < size; ++r) same = same && all[2 * r] == mine[0] && all[2 * r + 1] == mine[1];
    if (same) return;

    // Every rank reached this point, so this second exchange cannot hang.
    auto calls = mpi::allgather_strings(f.comm, "#" + std::to_string(number) + " " + call);
    std::map<std::string, std::string> ranks_by_call;
    for (int r = 0; r < size; ++r) {
      auto& ranks = ranks_by_call[calls[r]];
      ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    }
    std::string msg = "collective calls on file '" + f.name + "' do not match across ranks:";
    for (const auto& [c, ranks] : ranks_by_call)
      msg += std::string(" rank") + (ranks.find(',') == std::string::npos ? " " : "s ") + ranks + " called " + c + ";";
    msg.back() = '.';
    throw CollectiveMismatchError(msg);
  }

  void wait_or_timeout(MPI_Request& req, const CheckedFile& f, uint64_t number, const std::string& call, int size) {
    auto start = std::chrono::steady_clock::now();
    auto pause = std::chrono::microseconds(20);
    for (;;) {
      int done = 0;
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) return;
      double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (waited > timeout_s_) {
        int rank = 0;
        MPI_Comm_rank(f.comm, &rank);
        // The pending exchange cannot be cancelled (MPI forbids it); the job is broken anyway.
        throw CollectiveMismatchError("collective call #" + std::to_string(number) + " " + call + " on file '" +
                                      f.name + "': rank " + std::to_string(rank) + " waited " +
                                      std::to_string(static_cast<int>(waited)) + " s but not all " +
                                      std::to_string(size) +
                                      " ranks reached an h5loom collective call; a rank skipped calls or is "
                                      "blocked elsewhere");
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(10000));
    }
  }

  std::unique_ptr<Engine> inner_;
  double timeout_s_;
};

}  // namespace
}  // namespace h5loom::collcheck

namespace h5loom::engine {
std::unique_ptr<Engine> make_collcheck_wrapper(Knobs& knobs, std::unique_ptr<Engine> inner) {
  double timeout = knobs.get<double>("timeout", 60.0);
  if (const char* env = std::getenv("H5LOOM_CHECK_COLLECTIVE_TIMEOUT"); env && *env) {
    try {
      timeout = std::stod(env);
    } catch (const std::exception&) {
      throw ConfigError(std::string("H5LOOM_CHECK_COLLECTIVE_TIMEOUT='") + env + "' is not a number of seconds");
    }
  }
  if (!(timeout > 0)) knobs.bad_value("timeout", "must be a positive number of seconds");
  return std::make_unique<collcheck::CollCheckEngine>(std::move(inner), timeout);
}
}  // namespace h5loom::engine
