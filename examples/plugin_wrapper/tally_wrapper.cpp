// A worked example of a wrapper engine built outside h5loom's tree and loaded
// at run time (docs/engines.md, "A wrapper as a plugin").
//
// `tally` counts the bytes every rank writes to a file and, when the file
// closes, records the total of all ranks in an attribute of the root group
// (`_tally_bytes`, or the name in the knob {"tally": {"attribute": "..."}}).
//
//   H5LOOM_PLUGIN_PATH=/path/to/libh5loom_tally.so \
//   H5LOOM_ENGINE='{"engine": "hdf5", "wrappers": ["tally"]}' mpirun -n 4 ./app
//
// It shows the three things a wrapper does: keep per-file state (make_file),
// change an operation and forward it (put, close, describe), and read knobs.
#include <h5loom/engine_plugin.hpp>
#include <h5loom/forwarding_engine.hpp>

namespace {

using namespace h5loom::engine;

class TallyWrapper final : public ForwardingEngine {
 public:
  TallyWrapper(std::unique_ptr<Engine> inner, std::string attribute)
      : ForwardingEngine(std::move(inner)), attribute_(std::move(attribute)) {}

  std::string wrapper_name() const override { return "tally"; }

  // Not collective: each rank counts its own.
  void put(FileHandle& f, Write write) override {
    file(f).bytes += write.bytes();
    ForwardingEngine::put(f, std::move(write));
  }

  // Collective: the ranks add up their counts and the total goes into the
  // file (through the inner engine) before it closes.
  void close(FileHandle& f) override {
    auto& t = file(f);
    if (t.mode != OpenMode::Read) {
      uint64_t total = 0;
      MPI_Allreduce(&t.bytes, &total, 1, MPI_UINT64_T, MPI_SUM, t.comm);
      inner().write_attribute(*t.inner, "/", attribute_, h5loom::AttributeValue(total));
    }
    ForwardingEngine::close(f);
  }

  Properties describe(FileHandle& f) override {
    auto p = ForwardingEngine::describe(f);
    p.emplace_back("tally.bytes_this_rank", std::to_string(file(f).bytes));
    return p;
  }

 protected:
  struct TallyFile : WrappedFile {
    uint64_t bytes = 0;
  };
  std::unique_ptr<WrappedFile> make_file() const override { return std::make_unique<TallyFile>(); }

 private:
  static TallyFile& file(FileHandle& f) { return static_cast<TallyFile&>(f); }
  std::string attribute_;
};

}  // namespace

H5LOOM_PLUGIN(registry) {
  registry->add_wrapper("tally", [](Knobs& knobs, std::unique_ptr<Engine> inner) -> std::unique_ptr<Engine> {
    return std::make_unique<TallyWrapper>(std::move(inner), knobs.get<std::string>("attribute", "_tally_bytes"));
  });
}
