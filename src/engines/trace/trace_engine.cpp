// The trace wrapper: records every call that reaches the engine below it (the
// "engine" layer of the profile; src/profile). Stacked automatically, outermost,
// when H5LOOM_PROFILE is set; or by {"wrappers": ["trace"]} (then H5LOOM_PROFILE
// still names the directory). A write batch is traced as one call, and each of
// its requests counted as one access.
#include <map>

#include "engine/registry.hpp"
#include "profile/profiler.hpp"

namespace h5loom::trace {

using engine::FileHandle;
using engine::OpenMode;
using engine::WriteRequest;
using profile::Kind;
using profile::Layer;
using profile::Scope;

namespace {

struct TracedFile : FileHandle {
  std::unique_ptr<FileHandle> inner;
  std::string name;
  std::map<std::string, DatasetInfo> infos;  // for byte offsets of selections
};

class TraceEngine final : public engine::Engine {
 public:
  explicit TraceEngine(std::unique_ptr<Engine> inner) : inner_(std::move(inner)) {}

  std::string name() const override { return "trace>" + inner_->name(); }
  std::vector<std::string> conformance_groups() const override { return inner_->conformance_groups(); }
  std::vector<std::string> files(const std::string& path) const override { return inner_->files(path); }

  std::unique_ptr<FileHandle> open(const std::string& path, OpenMode mode, MPI_Comm comm) override {
    Scope s(Layer::Engine, Kind::Meta, "open", path);
    auto f = std::make_unique<TracedFile>();
    f->name = path;
    f->inner = inner_->open(path, mode, comm);
    return f;
  }
  void flush(FileHandle& fh) override {
    auto& f = cast(fh);
    Scope s(Layer::Engine, Kind::Meta, "flush", f.name);
    inner_->flush(*f.inner);
  }
  void close(FileHandle& fh) override {
    auto& f = cast(fh);
    {
      Scope s(Layer::Engine, Kind::Meta, "close", f.name);
      inner_->close(*f.inner);
    }
    profile::dump();
  }
  std::string describe(FileHandle& fh) override {
    auto& f = cast(fh);
    return inner_->describe(*f.inner) + "wrapper: trace (profile in $H5LOOM_PROFILE)\n";
  }
  ObjectKind kind(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    Scope s(Layer::Engine, Kind::Meta, "kind", where(f, path));
    return inner_->kind(*f.inner, path);
  }
  void create_group(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    Scope s(Layer::Engine, Kind::Meta, "create_group", where(f, path));
    inner_->create_group(*f.inner, path);
  }
  std::vector<std::string> list(FileHandle& fh, const std::string& group) override {
    auto& f = cast(fh);
    Scope s(Layer::Engine, Kind::Meta, "list", where(f, group));
    return inner_->list(*f.inner, group);
  }
  void create_dataset(FileHandle& fh, const std::string& path, const DatasetSpec& spec) override {
    auto& f = cast(fh);
    Scope s(Layer::Engine, Kind::Meta, "create_dataset", where(f, path));
    inner_->create_dataset(*f.inner, path, spec);
  }
  DatasetInfo dataset_info(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    Scope s(Layer::Engine, Kind::Meta, "dataset_info", where(f, path));
    return f.infos[path] = inner_->dataset_info(*f.inner, path);
  }
  void extend(FileHandle& fh, const std::string& path, const Dims& new_shape) override {
    auto& f = cast(fh);
    Scope s(Layer::Engine, Kind::Meta, "extend", where(f, path));
    inner_->extend(*f.inner, path, new_shape);
    f.infos.erase(path);
  }
  void write(FileHandle& fh, const std::vector<WriteRequest>& requests) override {
    auto& f = cast(fh);
    uint64_t total = 0, first = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const auto& r = requests[i];
      const DatasetInfo& info = info_of(f, r.dataset);
      uint64_t off = profile::byte_offset(r.selection, info), size = r.selection.num_elements(info.shape) * datatype_size(r.dtype);
      profile::count(Layer::Engine, Kind::Write, where(f, r.dataset), off, size);
      if (i == 0) first = off;
      total += size;
    }
    int64_t t0 = profile::now_ns();
    inner_->write(*f.inner, requests);
    profile::record(Layer::Engine, Kind::Write, "write", requests.empty() ? f.name : where(f, requests[0].dataset),
                    first, total, t0, profile::now_ns(), /*counted=*/false);
  }
  // A write the inner engine takes at once is counted and traced here, as write() would.
  bool stage(FileHandle& fh, const std::string& dataset, const Selection& sel, Datatype dtype, const void* data) override {
    auto& f = cast(fh);
    int64_t t0 = profile::now_ns();
    if (!inner_->stage(*f.inner, dataset, sel, dtype, data)) return false;
    const DatasetInfo& info = info_of(f, dataset);
    uint64_t off = profile::byte_offset(sel, info), size = sel.num_elements(info.shape) * datatype_size(dtype);
    profile::record(Layer::Engine, Kind::Write, "stage", where(f, dataset), off, size, t0, profile::now_ns());
    return true;
  }
  void read(FileHandle& fh, const std::string& path, const Selection& sel, Datatype dtype, void* out) override {
    auto& f = cast(fh);
    const DatasetInfo& info = info_of(f, path);
    Scope s(Layer::Engine, Kind::Read, "read", where(f, path), profile::byte_offset(sel, info),
            sel.num_elements(info.shape) * datatype_size(dtype));
    inner_->read(*f.inner, path, sel, dtype, out);
  }
  bool has_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    auto& f = cast(fh);
    Scope s(Layer::Engine, Kind::Meta, "has_attribute", where(f, object));
    return inner_->has_attribute(*f.inner, object, name);
  }
  void write_attribute(FileHandle& fh, const std::string& object, const std::string& name,
                       const AttributeValue& value) override {
    auto& f = cast(fh);
    Scope s(Layer::Engine, Kind::Meta, "write_attribute", where(f, object));
    inner_->write_attribute(*f.inner, object, name, value);
  }
  AttributeValue read_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    auto& f = cast(fh);
    Scope s(Layer::Engine, Kind::Meta, "read_attribute", where(f, object));
    return inner_->read_attribute(*f.inner, object, name);
  }
  std::vector<std::string> list_attributes(FileHandle& fh, const std::string& object) override {
    auto& f = cast(fh);
    Scope s(Layer::Engine, Kind::Meta, "list_attributes", where(f, object));
    return inner_->list_attributes(*f.inner, object);
  }

 private:
  static TracedFile& cast(FileHandle& fh) { return static_cast<TracedFile&>(fh); }
  static std::string where(const TracedFile& f, const std::string& path) { return f.name + ":" + path; }
  const DatasetInfo& info_of(TracedFile& f, const std::string& path) {
    auto it = f.infos.find(path);
    if (it != f.infos.end()) return it->second;
    return f.infos[path] = inner_->dataset_info(*f.inner, path);
  }
  std::unique_ptr<Engine> inner_;
};

}  // namespace
}  // namespace h5loom::trace

namespace h5loom::engine {
std::unique_ptr<Engine> make_trace_wrapper(Knobs&, std::unique_ptr<Engine> inner) {
  return std::make_unique<trace::TraceEngine>(std::move(inner));
}
}  // namespace h5loom::engine
