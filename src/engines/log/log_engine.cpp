// The log-structured engine (docs/engines/log.md; format: docs/formats/log.md).
// Writes are appended, never placed: each rank's writes go through its write
// pipeline (write_pipeline.hpp) to the log, and each flush ends an epoch with
// an index record and a commit record (commit.hpp). Reads find the blocks of
// a selection through the index (read_planner.hpp). This file adapts the
// engine interface to those parts; LogFile (log_file.hpp) holds them and
// opens and closes them.
#include <sstream>

#include "engine/registry.hpp"
#include "engines/hdf5/chunking.hpp"
#include "engines/log/commit.hpp"
#include "engines/log/log_file.hpp"
#include "engines/log/read_planner.hpp"

namespace h5loom::logengine {

using engine::FileHandle;
using engine::OpenMode;
using engine::WriteRequest;
using namespace logfmt;

class LogEngine final : public engine::Engine {
 public:
  explicit LogEngine(Settings s) : settings_(std::move(s)) {}

  std::string name() const override { return "log"; }
  std::vector<std::string> conformance_groups() const override {
    return {"file", "group", "dataset", "attribute", "selection", "datatype", "extend", "errors", "series"};
  }
  std::vector<std::string> files(const std::string& path) const override {
    return {path, log_path(path), commits_path(path)};
  }

  std::unique_ptr<FileHandle> open(const std::string& path, OpenMode mode, MPI_Comm comm) override {
    return open_log_file(path, mode, comm, settings_);
  }

  void flush(FileHandle& fh) override {
    auto& f = cast(fh);
    f.writing_step([&] { commit(f); });
  }

  void close(FileHandle& fh) override { close_log_file(static_cast<LogFile&>(fh)); }

  std::string describe(FileHandle& fh) override {
    auto& f = static_cast<LogFile&>(fh);
    const Committed& c = f.committed;
    std::ostringstream o;
    o << "engine log (log-structured), format version " << kVersion << "\n"
      << "  log: " << log_path(f.path) << ", " << c.log_end << " bytes valid in " << c.epoch << " epochs, "
      << f.catalog.index->size() << " blocks in " << f.catalog.tree.datasets.size() << " datasets\n"
      << "  checksums: CRC32C per " << c.header.checksum_unit << " bytes of data, per block entry and per index\n";
    if (c.torn_bytes) o << "  torn tail: " << c.torn_bytes << " bytes after the last commit (ignored)\n";
    if (!f.failed.empty()) o << "  unusable: " << f.failed << "\n";
    if (!c.damage.empty()) o << "  DAMAGED: " << c.damage << " (reading the " << c.epoch << " intact epochs)\n";
    if (f.writing && f.writing->pipeline)
      o << "  writing: buffer " << settings_.buffer_size << " bytes per rank, "
        << f.writing->pipeline->transport().aggregators() << " aggregator(s), regions of "
        << f.writing->pipeline->regions().size() << " bytes per rank for writes of " << settings_.large_write
        << " bytes or more, sync " << (settings_.sync ? "on" : "off") << "\n";
    return o.str();
  }

  // ---- tree ----
  ObjectKind kind(FileHandle& fh, const std::string& path) override {
    const auto& nodes = cast(fh).catalog.tree.nodes;
    auto it = nodes.find(path);
    return it == nodes.end() ? ObjectKind::None : it->second.kind;
  }
  void create_group(FileHandle& fh, const std::string& path) override {
    record(writable(fh, "create group '" + path + "'"), group_op(path));
  }
  std::vector<std::string> list(FileHandle& fh, const std::string& group) override {
    const auto& c = cast(fh).catalog.tree.nodes.at(group).children;
    return {c.begin(), c.end()};
  }

  // ---- datasets ----
  void create_dataset(FileHandle& fh, const std::string& path, const DatasetSpec& spec) override {
    auto& f = writable(fh, "create dataset '" + path + "'");
    // The log has no chunks; they are chosen as the hdf5 engine would and kept
    // for conversion to native HDF5.
    const Dims chunks = hdf5::resolve_chunks(path, spec, /*chunked_by_default=*/false, MiB);
    record(f, dataset_op(path, spec.dtype, spec.shape, spec.max_shape.empty() ? spec.shape : spec.max_shape, chunks));
  }
  DatasetInfo dataset_info(FileHandle& fh, const std::string& path) override {
    const Tree& tree = cast(fh).catalog.tree;
    return tree.datasets.at(std::size_t(tree.dataset_id(path)));
  }
  void extend(FileHandle& fh, const std::string& path, const Dims& new_shape) override {
    record(writable(fh, "extend dataset '" + path + "'"), extend_op(path, new_shape));
  }

  // ---- data ----
  void write(FileHandle& fh, const std::vector<WriteRequest>& requests) override {
    auto& f = cast(fh);
    if (!f.writable()) {
      if (requests.empty()) return;  // a flush point of a read-only file
      throw ReadOnlyError("cannot write to '" + requests[0].dataset + "': " + f.where() + " is open read-only");
    }
    WritePipeline& pipe = *f.writing->pipeline;
    for (const auto& req : requests)
      put(f, req.dataset, req.selection, req.data, WritePipeline::Hold::UntilWriteOut);
    // Collective: the data goes out when any rank's buffer is full, or has
    // borrowed large writes (their memory is only ours until we return: a
    // failed write-out leaves no pointer to it behind, see LogFile::writing_step).
    int mine = pipe.wants_write_out(), any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, f.team.comm);
    if (any) f.writing_step([&] { pipe.write_out(); });
  }

  // A copying write is taken at once if it has room: a large one-box write in
  // the rank's region of the log (written now, uncopied), a small one in the
  // buffer (one copy instead of two: the object model's, then ours). Any other
  // is left to the object model's queue and reaches write() at the flush
  // point, which writes out collectively: the buffer never outgrows buffer_size.
  bool stage(FileHandle& fh, const std::string& dataset, const Selection& sel, Datatype, const void* data) override {
    auto& f = cast(fh);
    if (!f.writable()) return false;  // write() raises the error, at the flush point
    return put(f, dataset, sel, data, WritePipeline::Hold::DuringCall);
  }

  void read(FileHandle& fh, const std::string& path, const Selection& sel, Datatype, void* out) override {
    auto& f = cast(fh);
    f.writing_step([&] { commit(f); });  // a read sees every write before it (collective, like the read)
    // A damaged block found by one rank is raised on every rank.
    mpi::agree(f.team.comm, [&] {
      ReadPlanner(f.catalog.tree, *f.catalog.index, *f.log, f.committed.header.checksum_unit, f.where())
          .read(path, sel, out);
    });
  }

  // ---- attributes ----
  bool has_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    return cast(fh).catalog.tree.nodes.at(object).attrs.count(name) > 0;
  }
  void write_attribute(FileHandle& fh, const std::string& object, const std::string& name,
                       const AttributeValue& value) override {
    record(writable(fh, "write attribute '" + name + "' on '" + object + "'"), attribute_op(object, name, value));
  }
  AttributeValue read_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    return cast(fh).catalog.tree.nodes.at(object).attrs.at(name);
  }
  std::vector<std::string> list_attributes(FileHandle& fh, const std::string& object) override {
    std::vector<std::string> out;
    for (const auto& [name, _] : cast(fh).catalog.tree.nodes.at(object).attrs) out.push_back(name);
    return out;
  }

 private:
  // Every call but close and describe goes through here: a failed handle raises.
  static LogFile& cast(FileHandle& fh) {
    auto& f = static_cast<LogFile&>(fh);
    f.require_usable();
    return f;
  }
  static LogFile& writable(FileHandle& fh, const std::string& what) {
    auto& f = cast(fh);
    if (!f.writable()) throw ReadOnlyError("cannot " + what + ": " + f.where() + " is open read-only");
    return f;
  }

  // One write, by dataset path; the last dataset's id is remembered (writes come in runs).
  static bool put(LogFile& f, const std::string& dataset, const Selection& sel, const void* data,
                  WritePipeline::Hold hold) {
    Writing& w = *f.writing;
    if (w.last_dataset_id < 0 || dataset != w.last_dataset) {
      w.last_dataset_id = f.catalog.tree.dataset_id(dataset);
      w.last_dataset = dataset;
    }
    const DatasetInfo& info = f.catalog.tree.datasets[std::size_t(w.last_dataset_id)];
    return w.pipeline->put(uint32_t(w.last_dataset_id), dataset, info, sel, static_cast<const unsigned char*>(data),
                           hold);
  }

  Settings settings_;
};

}  // namespace h5loom::logengine

namespace h5loom::engine {
std::unique_ptr<Engine> make_log_engine(Knobs& knobs) {
  logengine::Settings s;
  s.buffer_size = knobs.get<uint64_t>("buffer_size", s.buffer_size);
  if (s.buffer_size == 0) knobs.bad_value("buffer_size", "must be at least 1 byte");
  if (const Json* a = knobs.raw("aggregators")) {
    if (a->is_string()) {
      s.aggregators = a->get<std::string>();
      if (s.aggregators != "node" && s.aggregators != "all")
        knobs.bad_value("aggregators", "'" + s.aggregators + "' is not 'node', 'all' or a positive count");
    } else if (a->is_number_integer() && a->get<int64_t>() > 0) {
      s.aggregators = "count";
      s.aggregator_count = int(std::min<int64_t>(a->get<int64_t>(), INT32_MAX));
    } else {
      knobs.bad_value("aggregators", a->dump() + " is not 'node', 'all' or a positive count");
    }
  }
  s.large_write = knobs.get<uint64_t>("direct_threshold", s.large_write);
  s.region_size = knobs.get<uint64_t>("region_size", s.region_size);
  s.region_alignment = knobs.get<uint64_t>("region_alignment", s.region_alignment);
  if (s.region_alignment == 0 || s.region_alignment % logengine::kRegionAlignment != 0 ||
      s.region_alignment > (uint64_t(1) << 30))
    knobs.bad_value("region_alignment",
                    std::to_string(s.region_alignment) + " is not a multiple of 4096 bytes up to 1 GiB");
  s.sync = knobs.get<bool>("sync", s.sync);
  s.checksum_unit = knobs.get<uint64_t>("checksum_unit", s.checksum_unit);
  if (s.checksum_unit < 512 || s.checksum_unit > (1u << 30))
    knobs.bad_value("checksum_unit", std::to_string(s.checksum_unit) + " is outside [512, 2^30]");
  s.front_file = knobs.get<bool>("front_file", s.front_file);
  s.max_external_segments = knobs.get<uint64_t>("max_external_segments", s.max_external_segments);
  return std::make_unique<logengine::LogEngine>(s);
}
}  // namespace h5loom::engine
