// The trace wrapper: records every call that reaches the engine below it (the
// "engine" layer of the profile; src/profile). Stacked automatically, outermost,
// when H5LOOM_PROFILE is set; or by {"wrappers": ["trace"]} (then H5LOOM_PROFILE
// still names the directory). Each put() is one write access with its byte
// offset and size; reads likewise; every other call is a metadata event.
#include <map>

#include "engine/registry.hpp"
#include "h5loom/forwarding_engine.hpp"
#include "profile/profiler.hpp"

namespace h5loom::trace {

using engine::Call;
using engine::FileHandle;
using engine::FunctionRef;
using profile::Kind;
using profile::Layer;
using profile::Scope;

namespace {

struct TracedFile : engine::ForwardingEngine::WrappedFile {
  // Shapes seen passing by (create_dataset, dataset_info), for the byte
  // offsets of selections: asking the inner engine from put() would be a
  // call on one rank only, in the middle of the collective sequence.
  std::map<std::string, DatasetInfo> infos;
};

class TraceEngine final : public engine::ForwardingEngine {
 public:
  using ForwardingEngine::ForwardingEngine;

  std::string wrapper_name() const override { return "trace"; }

  void close(FileHandle& fh) override {
    ForwardingEngine::close(fh);
    profile::dump();
  }
  void create_dataset(FileHandle& fh, const std::string& path, const DatasetSpec& spec) override {
    ForwardingEngine::create_dataset(fh, path, spec);
    DatasetInfo& info = traced(fh).infos[path];
    info.dtype = spec.dtype;
    info.shape = spec.shape;
  }
  DatasetInfo dataset_info(FileHandle& fh, const std::string& path) override {
    return traced(fh).infos[path] = ForwardingEngine::dataset_info(fh, path);
  }
  void extend(FileHandle& fh, const std::string& path, const Dims& new_shape) override {
    ForwardingEngine::extend(fh, path, new_shape);
    traced(fh).infos[path].shape = new_shape;
  }
  void put(FileHandle& fh, engine::Write w) override {
    auto& f = traced(fh);
    const uint64_t offset = profile::byte_offset(w.selection, info_of(f, w.dataset)), size = w.bytes();
    const std::string where = f.location + ":" + w.dataset;
    const int64_t t0 = profile::now_ns();
    engine().put(*f.inner, std::move(w));
    profile::record(Layer::Engine, Kind::Write, "put", where, offset, size, t0, profile::now_ns());
  }
  engine::RequestPtr read(FileHandle& fh, const std::string& path, const Selection& sel, Datatype dtype,
                          void* out) override {
    auto& f = traced(fh);
    const DatasetInfo& info = info_of(f, path);
    Scope s(Layer::Engine, Kind::Read, "read", f.location + ":" + path, profile::byte_offset(sel, info),
            sel.num_elements(info.shape) * datatype_size(dtype));
    return engine().read(*f.inner, path, sel, dtype, out);
  }

 protected:
  std::unique_ptr<WrappedFile> make_file() const override { return std::make_unique<TracedFile>(); }
  void around(WrappedFile& f, const Call& call, FunctionRef<void()> run) override {
    Scope s(Layer::Engine, Kind::Meta, call.op, call.object == f.location ? f.location : f.location + ":" + call.object);
    run();
  }

 private:
  Engine& engine() const { return inner(); }
  static TracedFile& traced(FileHandle& fh) { return static_cast<TracedFile&>(fh); }
  static const DatasetInfo& info_of(TracedFile& f, const std::string& path) {
    static const DatasetInfo unknown;
    auto it = f.infos.find(path);
    return it == f.infos.end() ? unknown : it->second;
  }
};

}  // namespace
}  // namespace h5loom::trace

namespace h5loom::engine {
std::unique_ptr<Engine> make_trace_wrapper(Knobs&, std::unique_ptr<Engine> inner) {
  return std::make_unique<trace::TraceEngine>(std::move(inner));
}
}  // namespace h5loom::engine
