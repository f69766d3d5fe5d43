// Whole-file tools (include/h5loom/tools.hpp): written against the public
// object model and the engines' storage operations, so that they work for
// every engine and name none.
#include <algorithm>
#include <functional>
#include <map>

#include "h5loom/engine.hpp"
#include "h5loom/tools.hpp"

namespace h5loom {

namespace {

// References name objects of one file: each is translated through its path
// (a null or dangling one stays null). Collective: every rank translates the same values.
class ReferenceTranslator {
 public:
  ReferenceTranslator(const File& from, const File& to) : from_(from), to_(to) {}
  void translate(const Datatype& t, void* data, std::size_t count) {
    for_each_reference(t, data, count, [&](ObjectRef& r) {
      if (r.is_null()) return;
      auto known = done_.find(r.token);
      if (known == done_.end()) {
        ObjectRef out;
        try {
          out = to_.reference(from_.dereference(r));
        } catch (const NotFoundError&) {  // dangling in the source: null in the copy
        }
        known = done_.emplace(r.token, out).first;
      }
      r = known->second;
    });
  }

 private:
  const File& from_;
  const File& to_;
  std::map<uint64_t, ObjectRef> done_;
};

// `with_references`: copy only the attributes that hold references (false: only the others).
void copy_attributes(const Object& from, Object& to, bool with_references, ReferenceTranslator& refs) {
  for (const auto& name : from.attribute_names()) {
    AttributeValue v = from.attribute(name);
    const bool has = !v.is_string() && !v.is_string_array() && v.dtype().has_references();
    if (has != with_references) continue;
    if (has) {
      std::vector<unsigned char> bytes(static_cast<const unsigned char*>(v.data()),
                                       static_cast<const unsigned char*>(v.data()) + v.size() * v.dtype().size());
      refs.translate(v.dtype(), bytes.data(), v.size());
      v = AttributeValue::from_raw(v.kind(), v.dtype(), v.size(), bytes.data());
    }
    to.set_attribute(name, v);
  }
}

// Moves a dataset's values in rounds of slabs along the first dimension, each
// rank a slab of at most ~64 MiB per round.
void copy_values(Dataset& from, Dataset& to, File& to_file, int rank, int size) {
  const Dims shape = from.shape();
  if (shape.empty() || product(shape) == 0) return;
  const uint64_t row_bytes = product(shape) / shape[0] * datatype_size(from.dtype());
  const uint64_t rows_per_rank = std::max<uint64_t>(1, (64ull << 20) / std::max<uint64_t>(row_bytes, 1));
  ElementBuffer buf;
  for (uint64_t round_start = 0; round_start < shape[0]; round_start += rows_per_rank * uint64_t(size)) {
    uint64_t r0 = std::min(shape[0], round_start + uint64_t(rank) * rows_per_rank);
    uint64_t r1 = std::min(shape[0], r0 + rows_per_rank);
    Dims start(shape.size(), 0), count = shape;
    start[0] = r0, count[0] = r1 - r0;
    Selection sel = r1 > r0 ? Selection::box(start, count) : Selection::none();
    uint64_t n = r1 > r0 ? product(count) : 0;
    buf.resize(from.dtype(), n);
    from.read_raw(sel, from.dtype(), buf.data(), n);
    to.write_raw(sel, from.dtype(), buf.data(), n, /*copy=*/false);
    to_file.flush();  // buf is reused next round
  }
}

// A dataset holding references: every rank reads it whole and translates it
// (the same calls on every rank), rank 0 writes it. Such datasets are small.
void copy_reference_values(Dataset& from, Dataset& to, File& to_file, int rank, ReferenceTranslator& refs) {
  const uint64_t n = product(from.shape());
  ElementBuffer buf(from.dtype(), n);
  from.read_raw(Selection::all(), from.dtype(), buf.data(), n);
  refs.translate(from.dtype(), buf.data(), n);
  if (rank == 0 && n) to.write_raw(Selection::all(), from.dtype(), buf.data(), n, /*copy=*/false);
  to_file.flush();
}

}  // namespace

void convert_file(const std::string& in, const std::string& out, const FileOptions& in_options,
                  const FileOptions& out_options) {
  FileOptions out_opts = out_options;
  if (out_opts.engine.empty()) out_opts.engine = "hdf5";
  if (out_opts.comm == MPI_COMM_NULL) out_opts.comm = in_options.comm;
  auto src = File::open(in, Mode::Read, in_options);
  auto dst = File::create(out, out_opts);
  ReferenceTranslator refs(src, dst);
  copy_attributes(src, dst, false, refs);
  std::vector<std::string> objects{"/"};
  src.visit([&](const std::string& path, ObjectKind kind) {
    objects.push_back(path);
    if (kind == ObjectKind::Group) {
      auto g = dst.create_group(path);
      copy_attributes(src.group(path), g, false, refs);
      return;
    }
    if (kind == ObjectKind::Datatype) {  // an engine without named datatypes refuses, naming it
      const auto from = src.named_datatype(path);
      auto t = dst.commit_datatype(path, from.dtype());
      copy_attributes(from, t, false, refs);
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
    copy_attributes(ds, copy, false, refs);
    if (!spec.dtype.has_references()) copy_values(ds, copy, dst, src.rank(), src.size());
  });
  // What refers to other objects, once every object exists.
  for (const auto& path : objects) {
    if (src.kind(path) == ObjectKind::Group) {
      auto g = dst.group(path);
      copy_attributes(src.group(path), g, true, refs);
      continue;
    }
    if (src.kind(path) == ObjectKind::Datatype) {
      auto t = dst.named_datatype(path);
      copy_attributes(src.named_datatype(path), t, true, refs);
      continue;
    }
    auto ds = src.dataset(path);
    auto copy = dst.dataset(path);
    copy_attributes(ds, copy, true, refs);
    if (ds.dtype().has_references()) copy_reference_values(ds, copy, dst, src.rank(), refs);
  }
  // Soft links (visit does not follow them) and the other names of objects
  // with several (visit meets each object once, by its first), once every
  // object exists.
  std::vector<std::string> groups;
  std::map<uint64_t, std::string> first_names;  // by token
  const bool hard_links = src.supports("hard_links");
  for (const auto& path : objects) {
    if (src.kind(path) == ObjectKind::Group) groups.push_back(path);
    if (hard_links) first_names.emplace(src.reference(path).token, path);
  }
  for (const auto& g : groups)
    for (const auto& name : src.group(g).list()) {
      const std::string member = g == "/" ? "/" + name : g + "/" + name;
      if (auto target = src.group(g).soft_link(name)) {
        dst.group(g).create_soft_link(name, *target);
      } else if (hard_links) {
        const std::string& first = first_names.at(src.reference(member).token);
        if (first != member) dst.create_hard_link(member, first);
      }
    }
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
