// The zarr engine: h5loom's data model as a Zarr v3 hierarchy, each chunk an
// object (docs/engines/zarr.md). Metadata calls change the in-memory tree on
// every rank; a flush writes the chunks (chunk_writer.hpp), then rank 0 the
// zarr.json of every node that changed.
#include <algorithm>
#include <cstring>
#include <filesystem>

#include "core/mpi_util.hpp"
#include "engines/zarr/chunk_grid.hpp"
#include "engines/zarr/chunk_writer.hpp"
#include "engines/zarr/directory_store.hpp"
#include "engines/zarr/s3_store.hpp"
#include "engines/zarr/settings.hpp"
#include "engines/zarr/zarr_file.hpp"
#include "hdf5lib/chunking.hpp"
#include "h5loom/engine_plugin.hpp"

namespace h5loom::zarr {

namespace fs = std::filesystem;
using engine::FileHandle;
using engine::OpenMode;

// ---- the open store ----

ZarrFile::~ZarrFile() {
  if (comm != MPI_COMM_NULL) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm);
  }
}

Node& ZarrFile::node(const std::string& p) {
  auto it = nodes.find(p);
  if (it == nodes.end()) throw NotFoundError("no object '" + p + "' in " + where());
  return it->second;
}

void ZarrFile::add_node(const std::string& p, Node n) {
  if (n.kind == ObjectKind::Dataset) {
    dataset_ids.emplace(p, uint32_t(dataset_paths.size()));
    dataset_paths.push_back(p);
  }
  nodes[p] = std::move(n);
}

std::string metadata_key(const std::string& path) { return path == "/" ? "zarr.json" : path.substr(1) + "/zarr.json"; }

std::string chunk_key(const std::string& path, const Dims& chunk) {
  std::string key = path == "/" ? "c" : path.substr(1) + "/c";
  for (uint64_t c : chunk) key += "/" + std::to_string(c);
  return key;
}

namespace {

std::string parent_of(const std::string& p) {
  const auto slash = p.rfind('/');
  return slash == 0 ? "/" : p.substr(0, slash);
}

// The members of group `g`: nodes whose parent it is.
std::vector<std::string> members(const ZarrFile& f, const std::string& g) {
  std::vector<std::string> out;
  const std::string prefix = g == "/" ? "/" : g + "/";
  for (auto it = f.nodes.lower_bound(prefix); it != f.nodes.end() && it->first.compare(0, prefix.size(), prefix) == 0;
       ++it)
    if (it->first != g && it->first.find('/', prefix.size()) == std::string::npos)
      out.push_back(it->first.substr(prefix.size()));
  return out;
}

// The store at `location`: an S3 bucket for "s3://bucket/prefix", else a directory.
std::unique_ptr<ObjectStore> make_store(const std::string& location, const Settings& s, int writer) {
  if (S3Store::is_url(location)) return std::make_unique<S3Store>(location, s.s3);
  return std::make_unique<DirectoryStore>(location, s.sync, writer);
}

// Rank 0's part of opening: prepares the store (create modes) or reads every
// zarr.json (open modes), as a JSON object {path: zarr.json text}.
std::string prepare(const std::string& path, OpenMode mode, ObjectStore& store) {
  using Found = ObjectStore::Found;
  const Found found = store.look();
  if (mode == OpenMode::CreateExclusive && found != Found::Nothing)
    throw ExistsError("cannot create Zarr store '" + path + "' exclusively: it exists");
  if (mode == OpenMode::Create || mode == OpenMode::CreateExclusive) {
    if (found == Found::Other)
      throw UsageError("cannot create Zarr store '" + path + "': " + store.describe() +
                       " holds objects but no zarr.json, which h5loom will not remove");
    if (found == Found::Store) store.remove_all("");
    store.make_root();
    return "{}";
  }
  if (found == Found::Nothing) throw NotFoundError("cannot open Zarr store '" + path + "': it does not exist");
  if (found != Found::Store)
    throw ConfigError("'" + path + "' is not a Zarr store (no zarr.json at its root); open it with its own engine");
  Json texts = Json::object();
  for (const auto& [key, size] : store.list("")) {
    const std::string name = fs::path(key).filename().string();
    if (name != "zarr.json") continue;
    auto bytes = store.get(key);
    if (!bytes) continue;  // removed meanwhile
    const std::string dir = fs::path(key).parent_path().string();
    texts[dir.empty() ? "/" : "/" + dir] = std::string(bytes->begin(), bytes->end());
  }
  return texts.dump();
}

Node group_node() { return Node{}; }

void require_writable(const ZarrFile& f, const std::string& what) {
  if (!f.writable()) throw UsageError("cannot " + what + ": " + f.where() + " is open read-only");
}

const ArrayMeta& readable_array(ZarrFile& f, const std::string& path) {
  const Node& n = f.node(path);
  if (n.kind != ObjectKind::Dataset) throw UsageError("'" + path + "' in " + f.where() + " is not a dataset");
  if (!n.array.unsupported.empty())
    throw DatatypeError("array '" + path + "' of " + f.where() + ": " + n.array.unsupported);
  return n.array;
}

// This rank's read: every chunk the selection touches, decoded once.
void read_local(ZarrFile& f, const std::string& path, const Selection& sel, void* out) {
  const ArrayMeta& a = readable_array(f, path);
  if (sel.num_elements(a.shape) == 0) return;  // a rank taking part with nothing to read (0-d arrays too)
  const std::size_t es = datatype_size(a.dtype);
  auto* dst = static_cast<unsigned char*>(out);
  const auto slices = slice_by_chunks(sel, a.shape, a.chunk_shape);
  const Dims mem = sel.selected_shape(a.shape);
  std::vector<unsigned char> chunk(a.chunk_bytes());
  for_each_chunk(slices, [&](const ChunkPart& part) {
    Dims coords;
    for (const ChunkSlice* s : part) coords.push_back(s->index);
    const std::string key = chunk_key(path, coords);
    auto stored = f.store->get(key);
    if (!stored) {  // never written: the fill value
      for_each_row(part, a.chunk_shape, mem, [&](uint64_t, uint64_t m, uint64_t n) { a.fill_elements(dst + m * es, n); });
      return;
    }
    a.decode_chunk(*stored, chunk.data(), "chunk '" + key + "' of " + f.where());
    for_each_row(part, a.chunk_shape, mem, [&](uint64_t at, uint64_t m, uint64_t n) {
      std::memcpy(dst + m * es, chunk.data() + at * es, n * es);
    });
  });
}

// Collective: the chunks, then (rank 0) the metadata that changed; then,
// only if every rank got that far, every rank puts what it wrote in place -
// with `sync` durably, at every flush: an object replaced in place before its
// bytes are on storage could lose the old bytes to a power cut, and other
// ranks read what is in place. If any rank failed, nothing of this flush is
// put in place (its temporary objects go), the metadata stays to be written
// at the next flush, and the first failing rank's error is raised everywhere.
void flush_file(ZarrFile& f) {
  if (!f.writable()) return;
  mpi::CaughtError error;
  write_pending_chunks(f, error);
  if (f.rank == 0 && error.code == 0)
    error.run([&] {
      for (const auto& p : f.dirty) {
        const std::string text = encode_node(f.nodes.at(p), p == "/");
        f.store->put(metadata_key(p), text.data(), text.size());
      }
    });
  int mine = error.code == 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, f.comm);
  if (all) error.run([&] { f.store->publish(); });
  else f.store->discard();
  mpi::share_first_error(f.comm, f.rank, error);
  f.dirty.clear();
}

class ZarrEngine : public engine::Engine {
 public:
  explicit ZarrEngine(Settings s) : settings_(s) {}

  std::string name() const override { return "zarr"; }
  std::vector<std::string> conformance_groups() const override {
    return {"file", "group", "dataset", "attribute", "selection", "extend", "errors", "series", "fill",
            "independent_read", "filters", "dimension_names"};
  }

  // ---- storage ----
  engine::Claim probe(const std::string& location) const noexcept override {
    try {
      // The root zarr.json alone (no look() first: on S3 that would GET it twice).
      auto root = make_store(location, settings_, 0)->get("zarr.json");
      if (!root) return engine::Claim::No;
      const std::string text(root->begin(), root->end());
      if (is_h5loom_root(text)) return engine::Claim::Mine;
      decode_node(text, location);
      return engine::Claim::Readable;
    } catch (...) {
      return engine::Claim::No;
    }
  }

  std::vector<engine::StoragePiece> storage(const std::string& location) const override {
    auto store = make_store(location, settings_, 0);
    if (store->look() != ObjectStore::Found::Store) return {};
    std::vector<engine::StoragePiece> out;
    for (const auto& [key, size] : store->list("")) out.push_back({store->location_of(key), size});
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.location < b.location; });
    return out;
  }

  void remove(const std::string& location) const override {
    auto store = make_store(location, settings_, 0);
    if (store->look() != ObjectStore::Found::Store)
      throw NotFoundError("cannot remove Zarr store '" + location + "': nothing is there");
    store->remove_all("");
    if (!S3Store::is_url(location)) {  // the emptied directory too
      std::error_code ec;
      fs::remove(location, ec);
      if (ec) throw IOError("cannot remove Zarr store '" + location + "': " + ec.message());
    }
  }

  // ---- open files ----
  std::unique_ptr<FileHandle> open(const std::string& location, OpenMode mode, MPI_Comm comm) override {
    auto f = std::make_unique<ZarrFile>();
    f->path = location;
    f->mode = mode;
    MPI_Comm_dup(comm, &f->comm);
    MPI_Comm_rank(f->comm, &f->rank);
    MPI_Comm_size(f->comm, &f->size);
    mpi::CaughtError error;
    std::unique_ptr<ObjectStore> store;
    error.run([&] { store = make_store(location, settings_, f->rank); });
    std::string texts;
    if (f->rank == 0 && error.code == 0) error.run([&] { texts = prepare(location, mode, *store); });
    mpi::share_first_error(f->comm, f->rank, error);
    texts = mpi::bcast_string(f->comm, 0, texts);
    f->store = std::move(store);
    const Json all = Json::parse(texts);
    if (mode == OpenMode::Create || mode == OpenMode::CreateExclusive) {
      f->add_node("/", group_node());
      f->dirty.insert("/");
      return f;
    }
    if (!all.contains("/")) throw CorruptionError("Zarr store '" + location + "' has no zarr.json at its root");
    for (const auto& [p, text] : all.items()) {  // parents come before their members (sorted keys)
      Node n = decode_node(text.get<std::string>(), "'" + f->store->location_of(metadata_key(p)) + "'");
      if (p != "/") {
        for (std::string up = parent_of(p); !f->nodes.count(up); up = parent_of(up)) f->add_node(up, group_node());
        if (f->nodes.at(parent_of(p)).kind != ObjectKind::Group) continue;  // below an array: not a node
      }
      f->add_node(p, std::move(n));
    }
    if (f->nodes.at("/").kind != ObjectKind::Group)
      throw ConfigError("Zarr store '" + location + "' is a single array; h5loom opens hierarchies (a root group)");
    return f;
  }

  engine::RequestPtr flush(FileHandle& fh, engine::FlushLevel level) override {
    flush_file(cast(fh));  // every flush is durable (with sync): see flush_file
    return nullptr;
  }

  void close(FileHandle& fh) override { flush_file(cast(fh)); }

  engine::Properties describe(FileHandle& fh) override {
    auto& f = cast(fh);
    const std::string codecs = settings_.compression.on() ? "bytes, " + settings_.compression.describe() + ", crc32c"
                                                          : "bytes, crc32c";
    return {{"engine", "zarr (Zarr v3)"},
            {"store", f.store->describe()},
            {"nodes", std::to_string(f.nodes.size()) + " (" + std::to_string(f.dataset_paths.size()) + " arrays)"},
            {"chunks", settings_.chunk_target_bytes
                           ? "about " + std::to_string(settings_.chunk_target_bytes) + " bytes where the program gives none"
                           : std::string("one per dataset where the program gives none")},
            {"codecs of new arrays", codecs + " (unless the program gives HDF5 filters)"},
            {"sync", settings_.sync ? "on" : "off"}};
  }

  // ---- groups ----
  ObjectKind kind(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    auto it = f.nodes.find(path);
    return it == f.nodes.end() ? ObjectKind::None : it->second.kind;
  }

  void create_group(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    require_writable(f, "create group '" + path + "'");
    check_name(f, path);
    f.add_node(path, group_node());
    f.dirty.insert(path);
  }

  std::vector<std::string> list(FileHandle& fh, const std::string& group) override {
    return members(cast(fh), group);
  }

  // ---- datasets ----
  void create_dataset(FileHandle& fh, const std::string& path, const DatasetSpec& spec) override {
    auto& f = cast(fh);
    require_writable(f, "create dataset '" + path + "'");
    check_name(f, path);
    const std::string what = "dataset '" + path + "' in " + f.where();
    if (!spec.dtype.is_scalar())
      throw DatatypeError("cannot create " + what + " of type " + spec.dtype.name() +
                          ": the zarr engine stores numbers (int8 to uint64, float16 to float64) so far");
    if (spec.null_space || !spec.external.empty() || !spec.virtual_map.empty() || !spec.named_type.empty())
      throw UsageError("cannot create " + what + ": the zarr engine keeps no null dataspaces, external storage, "
                       "virtual datasets or named datatypes");
    if (!spec.fill.empty() && spec.fill.size() != datatype_size(spec.dtype))
      throw DatatypeError("cannot create " + what + ": a fill value of " + std::to_string(spec.fill.size()) +
                          " bytes for elements of " + std::to_string(datatype_size(spec.dtype)) + " (" +
                          spec.dtype.name() + ")");
    Node n;
    n.kind = ObjectKind::Dataset;
    ArrayMeta& a = n.array;
    a.dtype = spec.dtype;
    a.shape = spec.shape;
    a.max_shape = spec.max_shape.empty() ? spec.shape : spec.max_shape;
    a.fill = spec.fill;
    a.codecs.element_size = datatype_size(spec.dtype);
    a.codecs.big_endian = spec.dtype.byte_order() == ByteOrder::Big;
    a.codecs.compression = spec.filters.empty() ? settings_.compression : compression_for_filters(spec.filters, "cannot create " + what);
    a.filters = spec.filters;
    a.dim_names = spec.dim_names;
    a.layout = !spec.layout_auto ? spec.layout
                                 : (a.max_shape != a.shape || !spec.chunks.empty() || !spec.filters.empty())
                                       ? Layout::Chunked
                                       : Layout::Contiguous;
    if (!spec.chunks.empty()) {
      if (spec.chunks.size() != spec.shape.size())
        throw SelectionError("cannot create " + what + ": chunks " + dims_to_string(spec.chunks) + " for shape " +
                             dims_to_string(spec.shape));
      for (std::size_t d = 0; d < spec.chunks.size(); ++d)
        if (spec.chunks[d] == 0 || (a.max_shape[d] != kUnlimited && spec.chunks[d] > std::max<uint64_t>(1, a.max_shape[d])))
          throw SelectionError("cannot create " + what + ": chunks " + dims_to_string(spec.chunks) +
                               " do not fit max_shape " + dims_to_string(a.max_shape) + " in dimension " + std::to_string(d));
      a.chunk_shape = spec.chunks;
    } else if (settings_.chunk_target_bytes == 0) {  // one chunk: the dataset (its first extent if it grows)
      for (uint64_t s : a.shape) a.chunk_shape.push_back(std::max<uint64_t>(1, s));
    } else {
      a.chunk_shape = hdf5lib::auto_chunk_dims(a.shape, a.max_shape, datatype_size(a.dtype), settings_.chunk_target_bytes);
    }
    shard(a);
    f.add_node(path, std::move(n));
    f.dirty.insert(path);
  }

  DatasetInfo dataset_info(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    const ArrayMeta& a = readable_array(f, path);
    DatasetInfo info;
    info.dtype = a.dtype;
    info.shape = a.shape;
    info.max_shape = a.max_shape;
    info.layout = a.layout;
    if (a.layout == Layout::Chunked) info.chunks = a.logical_chunks();
    info.fill = a.fill;
    info.filters = a.filters;
    info.dim_names = a.dim_names;
    return info;
  }

  void extend(FileHandle& fh, const std::string& path, const Dims& new_shape) override {
    auto& f = cast(fh);
    require_writable(f, "extend '" + path + "'");
    Node& n = f.node(path);
    n.array.shape = new_shape;
    f.dirty.insert(path);
  }

  // ---- data ----
  void put(FileHandle& fh, engine::Write w) override {
    auto& f = cast(fh);
    // Kept until the flush: a buffer valid only during the call is copied now.
    if (w.buffer.lifetime() == engine::Lifetime::DuringCall) w.buffer = w.buffer.keep(w.bytes());
    f.pending.push_back(std::move(w));
  }

  engine::RequestPtr read(FileHandle& fh, const std::string& path, const Selection& sel, Datatype,
                          void* out) override {
    auto& f = cast(fh);
    mpi::agree(f.comm, [&] { read_local(f, path, sel, out); });
    return nullptr;
  }

  // Every flush leaves whole chunks in the store, so one rank reads alone what it sees there.
  engine::RequestPtr read_independent(FileHandle& fh, const std::string& path, const Selection& sel, Datatype,
                                      void* out) override {
    read_local(cast(fh), path, sel, out);
    return nullptr;
  }

  // ---- attributes ----
  bool has_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    const Node& n = cast(fh).node(object);
    return n.attributes.count(name) || n.foreign.contains(name);
  }

  void write_attribute(FileHandle& fh, const std::string& object, const std::string& name,
                       const AttributeValue& value) override {
    auto& f = cast(fh);
    require_writable(f, "write attribute '" + name + "' of '" + object + "'");
    if (name == kH5loomKey)
      throw UsageError("cannot write attribute '" + name + "' of '" + object + "' in " + f.where() +
                       ": the zarr engine keeps its own records under that name");
    Node& n = f.node(object);
    Node probe;  // refuses a value zarr.json cannot hold before anything changes
    probe.attributes.emplace(name, value);
    try {
      encode_node(probe, false);
    } catch (const DatatypeError& e) {
      throw DatatypeError("cannot write " + std::string(e.what()) + " (on '" + object + "' in " + f.where() + ")");
    }
    n.foreign.erase(name);
    n.attributes.insert_or_assign(name, value);
    f.dirty.insert(object);
  }

  AttributeValue read_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    auto& f = cast(fh);
    const Node& n = f.node(object);
    if (auto it = n.attributes.find(name); it != n.attributes.end()) return it->second;
    if (n.foreign.contains(name)) return AttributeValue(n.foreign[name].dump());
    throw NotFoundError("no attribute '" + name + "' on '" + object + "' in " + f.where());
  }

  std::vector<std::string> list_attributes(FileHandle& fh, const std::string& object) override {
    const Node& n = cast(fh).node(object);
    std::vector<std::string> out;
    for (const auto& [name, v] : n.attributes) out.push_back(name);
    for (const auto& [name, v] : n.foreign.items()) out.push_back(name);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  static ZarrFile& cast(FileHandle& fh) { return static_cast<ZarrFile&>(fh); }

  // Small chunks are stored in shards of about shard_target_bytes: shards
  // are whole numbers of chunks, chosen by the automatic chunking rule over
  // the grid of chunks (its "elements" a chunk each).
  void shard(ArrayMeta& a) const {
    const uint64_t chunk_bytes = a.chunk_bytes();
    if (settings_.shard_target_bytes == 0 || 2 * chunk_bytes > settings_.shard_target_bytes) return;
    Dims grid, grid_max;
    for (std::size_t d = 0; d < a.shape.size(); ++d) {
      const uint64_t c = a.chunk_shape[d];
      grid.push_back((a.shape[d] + c - 1) / c);
      grid_max.push_back(a.max_shape[d] == kUnlimited ? kUnlimited : (a.max_shape[d] + c - 1) / c);
    }
    const Dims per_shard = hdf5lib::auto_chunk_dims(grid, grid_max, chunk_bytes, settings_.shard_target_bytes);
    if (product(per_shard) < 2) return;
    a.sharding.inner = a.chunk_shape;
    for (std::size_t d = 0; d < a.shape.size(); ++d) a.chunk_shape[d] *= per_shard[d];
  }

  // Names a Zarr store cannot hold: "zarr.json" would be the metadata of the group it is in.
  static void check_name(const ZarrFile& f, const std::string& path) {
    const std::string name = path.substr(path.rfind('/') + 1);
    if (name == "zarr.json" || name.rfind(".tmp-") != std::string::npos)
      throw UsageError("cannot create '" + path + "' in " + f.where() + ": the name '" + name +
                       "' is taken by the store's own files");
  }

  Settings settings_;
};

}  // namespace

}  // namespace h5loom::zarr

namespace h5loom::engine {

std::unique_ptr<Engine> make_zarr_engine(Knobs& knobs) {
  return std::make_unique<zarr::ZarrEngine>(zarr::Settings::from(knobs));
}

}  // namespace h5loom::engine
