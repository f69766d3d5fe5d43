// Whole-file tools (include/h5loom/tools.hpp): written against the public
// object model and the engines' storage operations, so that they work for
// every engine and name none.
#include <algorithm>
#include <functional>

#include "h5loom/engine.hpp"
#include "h5loom/tools.hpp"

namespace h5loom {

namespace {

void copy_attributes(const Object& from, Object& to) {
  for (const auto& name : from.attribute_names()) to.set_attribute(name, from.attribute(name));
}

// Moves a dataset's values in rounds of slabs along the first dimension, each
// rank a slab of at most ~64 MiB per round.
void copy_values(Dataset& from, Dataset& to, File& to_file, int rank, int size) {
  const Dims shape = from.shape();
  if (shape.empty() || product(shape) == 0) return;
  const uint64_t row_bytes = product(shape) / shape[0] * datatype_size(from.dtype());
  const uint64_t rows_per_rank = std::max<uint64_t>(1, (64ull << 20) / std::max<uint64_t>(row_bytes, 1));
  std::vector<unsigned char> buf;
  for (uint64_t round_start = 0; round_start < shape[0]; round_start += rows_per_rank * uint64_t(size)) {
    uint64_t r0 = std::min(shape[0], round_start + uint64_t(rank) * rows_per_rank);
    uint64_t r1 = std::min(shape[0], r0 + rows_per_rank);
    Dims start(shape.size(), 0), count = shape;
    start[0] = r0, count[0] = r1 - r0;
    Selection sel = r1 > r0 ? Selection::box(start, count) : Selection::none();
    uint64_t n = r1 > r0 ? product(count) : 0;
    buf.resize(n * datatype_size(from.dtype()));
    from.read_raw(sel, from.dtype(), buf.data(), n);
    to.write_raw(sel, from.dtype(), buf.data(), n, /*copy=*/false);
    to_file.flush();  // buf is reused next round
  }
}

}  // namespace

void convert_file(const std::string& in, const std::string& out, const FileOptions& in_options,
                  const FileOptions& out_options) {
  FileOptions out_opts = out_options;
  if (out_opts.engine.empty()) out_opts.engine = "hdf5";
  if (out_opts.comm == MPI_COMM_NULL) out_opts.comm = in_options.comm;
  auto src = File::open(in, Mode::Read, in_options);
  auto dst = File::create(out, out_opts);
  copy_attributes(src, dst);
  src.visit([&](const std::string& path, ObjectKind kind) {
    if (kind == ObjectKind::Group) {
      auto g = dst.create_group(path);
      copy_attributes(src.group(path), g);
      return;
    }
    auto ds = src.dataset(path);
    DatasetSpec spec;
    spec.dtype = ds.dtype();
    spec.shape = ds.shape();
    spec.max_shape = ds.max_shape();
    spec.layout = ds.layout();
    spec.layout_auto = false;
    spec.chunks = ds.chunks();
    spec.fill = ds.fill_value();
    auto copy = dst.create_dataset(path, spec);
    copy_attributes(ds, copy);
    copy_values(ds, copy, dst, src.rank(), src.size());
  });
  // Soft links (visit does not follow them), once every object exists.
  std::vector<std::string> groups{"/"};
  src.visit([&](const std::string& path, ObjectKind kind) {
    if (kind == ObjectKind::Group) groups.push_back(path);
  });
  for (const auto& g : groups)
    for (const auto& name : src.group(g).list())
      if (auto target = src.group(g).soft_link(name)) dst.group(g).create_soft_link(name, *target);
  dst.close();
}

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
      std::vector<unsigned char> buf(product(ds.shape()) * datatype_size(ds.dtype()));
      ds.read_raw(Selection::all(), ds.dtype(), buf.data(), product(ds.shape()));
      r.add("datasets", 1);
      r.add("bytes read", buf.size());
    });
  } catch (const Error& e) {
    r.errors.push_back(e.what());
  }
  return r;
}

}  // namespace h5loom
