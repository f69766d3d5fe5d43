// Whole-file tools (include/h5loom/tools.hpp): verifying, storage and
// removal, written against the public object model and the engines' storage
// operations, so that they work for every engine and name none. Copying
// (convert_file, copy_object): copy.cpp.
#include "h5loom/engine.hpp"
#include "h5loom/tools.hpp"

namespace h5loom {

namespace {

// The base engine (for storage operations) of a configuration, or of the file.
std::unique_ptr<engine::Engine> storage_engine_for(const std::string& location, const std::string& config) {
  std::string name = config.empty() ? engine::detect_engine(location) : engine::make_engine(config)->name();
  name = name.substr(name.rfind('>') + 1);  // wrappers do not change storage
  return engine::storage_engine(name.empty() ? engine::kDefaultEngine : name);
}

}  // namespace

std::vector<engine::StoragePiece> file_storage(const std::string& location, const std::string& engine) {
  return storage_engine_for(location, engine)->storage(location);
}

void remove_file(const std::string& location, const std::string& engine) {
  storage_engine_for(location, engine)->remove(location);
}

VerifyResult verify_file(const std::string& location) {
  const std::string name = engine::detect_engine(location);
  if (!name.empty())
    if (auto own = engine::storage_engine(name)->verify(location)) return *own;
  VerifyResult r;
  r.engine = name.empty() ? std::string(engine::kDefaultEngine) : name;
  r.counts = {{"datasets", 0}, {"bytes read", 0}};
  try {
    FileOptions o;
    o.comm = MPI_COMM_SELF;
    o.engine = r.engine;
    auto f = File::open(location, Mode::Read, o);
    f.visit([&](const std::string& p, ObjectKind kind) {
      if (kind != ObjectKind::Dataset) return;
      auto ds = f.dataset(p);
      ElementBuffer buf(ds.dtype(), product(ds.shape()));
      ds.read_raw(Selection::all(), ds.dtype(), buf.data(), product(ds.shape()));
      r.add("datasets", 1);
      r.add("bytes read", buf.payload_bytes());
    });
  } catch (const Error& e) {
    r.errors.push_back(e.what());
  }
  return r;
}

}  // namespace h5loom
