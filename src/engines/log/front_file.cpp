#include "engines/log/front_file.hpp"

#include "h5loom/variable_length.hpp"

#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "engine/registry.hpp"
#include "h5loom/h5loom.hpp"
#include "engines/log/front_image.hpp"
#include "engines/log/front_plan.hpp"
#include "engines/log/held_values.hpp"
#include "engines/log/index.hpp"
#include "engines/log/log_store.hpp"

namespace h5loom::logengine {

using namespace logfmt;

namespace {

std::unique_ptr<engine::Engine> front_engine(uint64_t userblock = 0) {
  // One process writes it, built in memory and written out at once (HDF5's core
  // driver): through MPI-IO it cost about 15 % of a log-engine iotest write.
  // The newest format HDF5 1.10 writes has checksums on its metadata, so stock
  // readers notice a damaged front file instead of reading through it. Not
  // "latest": HDF5 1.14's newest format (virtual dataset mappings) is unreadable
  // to HDF5 1.10 and 1.12 readers.
  engine::Knobs knobs("hdf5", engine::Json{{"collective_metadata", false}, {"driver", "core"}, {"libver_low", "v110"},
                                           {"userblock", userblock}});
  // The bare hdf5 engine, through the engine interface: the front file's
  // datasets map the log with external storage or virtual datasets (DatasetSpec).
  return engine::registry().engines().at("hdf5")(knobs);
}

std::string hex_id(const unsigned char (&id)[16]) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : id) out += digits[b >> 4], out += digits[b & 15];
  return out;
}

// What the front file at `path` says about its log: nothing if it is HDF5 without
// the marker; throws h5loom::Error if it is not readable HDF5.
struct FrontMarks {
  bool marked = false;
  std::optional<std::string> id;
  std::optional<uint64_t> epoch;
};
FrontMarks read_front_marks(const std::string& path) {
  FrontMarks m;
  // The front engine opens over MPI_COMM_SELF; a probe (engine::detect_engine)
  // may come from a program that never started MPI (h5dump through the VOL connector).
  ensure_mpi();
  auto e = front_engine();
  auto h = e->open(path, engine::OpenMode::Read, MPI_COMM_SELF);
  m.marked = e->has_attribute(*h, "/", kFrontMarker);
  if (m.marked && e->has_attribute(*h, "/", kFrontId)) m.id = e->read_attribute(*h, "/", kFrontId).as_string();
  if (m.marked && e->has_attribute(*h, "/", kFrontEpoch))
    m.epoch = e->read_attribute(*h, "/", kFrontEpoch).as<uint64_t>();
  e->close(*h);
  return m;
}

std::string front_tmp_path(const std::string& path) { return directory_of(path) + "/front.tmp"; }

}  // namespace

bool front_is_marked(const std::string& path) { return read_front_marks(path).marked; }

void check_front_binding(LogStore& store, const std::string& path, const LogHeader& header,
                         uint64_t committed_epochs) {
  if (!store.exists(path)) return;  // crashed before its first close: the log alone is the file
  FrontMarks m;
  try {
    m = read_front_marks(path);
  } catch (const Error& e) {
    throw CorruptionError("file '" + path + "' is not readable HDF5 (" + e.what() + "), so it cannot be matched with " +
                          directory_of(path) + ", which may be left from an earlier log-engine file of that name. If '" +
                          path + "' is that log's damaged front file, remove it: a read-write open rebuilds it from the log");
  }
  if (!m.marked)
    throw ConfigError("file '" + path + "' was not written by the log engine (it is HDF5 without the log marker); " +
                      directory_of(path) + " is left from an earlier log-engine file of that name");
  if (m.id && *m.id != hex_id(header.file_id))
    throw CorruptionError("front file '" + path + "' belongs to another log (file id " + *m.id + ", the log in " +
                          directory_of(path) + " has " + hex_id(header.file_id) + ")");
  if (m.epoch && *m.epoch > committed_epochs)
    throw CorruptionError("front file '" + path + "' shows epoch " + std::to_string(*m.epoch) + " but the journal " +
                          commits_path(path) + " has " + std::to_string(committed_epochs) +
                          " intact epochs: committed epochs are missing or damaged");
}

std::optional<FrontSum> checksum_file(LogStore& store, const std::string& path) {
  auto file = store.open(path, LogStore::Access::Read).file;
  if (!file) return std::nullopt;
  FrontSum sum;
  sum.size = file->size();
  std::vector<unsigned char> buf(std::min<uint64_t>(sum.size, 4 << 20));
  for (uint64_t at = 0; at < sum.size; at += buf.size()) {
    const uint64_t n = std::min<uint64_t>(buf.size(), sum.size - at);
    file->read(buf.data(), n, at, "reading '" + path + "'");
    sum.crc = crc32c(buf.data(), n, sum.crc);
  }
  return sum;
}

bool front_is_current(LogStore& store, const std::string& path, const Tree& tree, uint64_t epoch) {
  auto sum = checksum_file(store, path);
  if (!sum) return false;
  if (tree.fronts.empty()) return true;  // a file from before front checksums: keep its front file
  return tree.fronts.back().epoch == epoch && tree.fronts.back().matches(*sum);
}

namespace {

// Translates the log's reference tokens into the front file's (its objects'
// addresses): a token of an object no longer in the tree becomes null.
class FrontReferences {
 public:
  FrontReferences(const Tree& tree, engine::Engine& e, engine::FileHandle& h) : tree_(tree), e_(e), h_(h) {}

  AttributeValue translated(const AttributeValue& v) {
    return v.with_references_translated([&](ObjectRef& r) { translate_one(r); });
  }

  // The whole dataset at `path` as one owned write.
  engine::Write translated_write(const std::string& path, const DatasetInfo& info, const HeldValues& held) {
    engine::Write w;
    w.dataset = path;
    w.selection = Selection::all();
    w.dtype = info.dtype;
    w.elements = product(info.shape);
    // Dense for the front file: elements never written are "" and null references.
    if (info.dtype.is_varstring()) {
      auto strings = std::make_shared<std::vector<std::string>>(w.elements);
      for (const auto& [k, s] : held.strings) (*strings)[k] = s;
      const void* data = strings->data();
      w.buffer = engine::WriteBuffer::owned(std::move(strings), data);
    } else if (info.dtype.has_variable_length_parts()) {
      w.buffer = unpacked(info.dtype, w.elements, held);
    } else {
      const std::size_t es = info.dtype.size();
      auto bytes = std::make_shared<std::vector<unsigned char>>(w.elements * es);
      for (const auto& [k, e] : held.elements) std::copy(e.begin(), e.end(), bytes->begin() + std::ptrdiff_t(k * es));
      translate(info.dtype, bytes->data(), w.elements);
      const void* data = bytes->data();
      w.buffer = engine::WriteBuffer::owned(std::move(bytes), data);
    }
    return w;
  }

 private:
  // Held packed elements in HDF5's memory layout, dense (never written: empty),
  // their parts released with the buffer.
  static engine::WriteBuffer unpacked(const Datatype& t, uint64_t n, const HeldValues& held) {
    auto parts = std::make_shared<ElementBuffer>(t, std::size_t(n));
    auto* bytes = static_cast<unsigned char*>(parts->data());
    for (const auto& [k, e] : held.elements) unpack_variable_length(t, e.data(), e.size(), bytes + k * t.size(), 1);
    const void* data = parts->data();
    return engine::WriteBuffer::owned(std::move(parts), data);
  }

  void translate(const Datatype& t, void* data, std::size_t count) {
    for_each_reference(t, data, count, [&](ObjectRef& r) { translate_one(r); });
  }

  void translate_one(ObjectRef& r) {
    if (r.is_null()) return;
    auto known = front_.find(r.token);
    if (known == front_.end()) {
      const std::string path = tree_.path_of_token(r.token);
      uint64_t front = 0;  // null if the object is gone, or is data in the log only (a dangling link there)
      if (!path.empty() && e_.kind(h_, path) != ObjectKind::None) front = e_.object_token(h_, path);
      known = front_.emplace(r.token, front).first;
    }
    r.token = known->second;
  }

  const Tree& tree_;
  engine::Engine& e_;
  engine::FileHandle& h_;
  std::map<uint64_t, uint64_t> front_;  // log token -> front file token
};

// The application's bytes in the user block of the front file at `path` go
// to the same place of the new one, `tmp` (HDF5 leaves a user block zeroed).
void keep_user_block(LogStore& store, const std::string& path, const std::string& tmp, uint64_t size) {
  auto old = store.open(path, LogStore::Access::Read);
  if (!old.file) return;  // the first front file: nothing was written there yet
  std::vector<unsigned char> bytes(size);
  const uint64_t n = old.file->read_some(bytes.data(), size, 0);
  auto fresh = store.open(tmp, LogStore::Access::ReadWrite);
  if (!fresh.file) throw IOError(with_reason("cannot open the front file '" + tmp + "' being built", fresh.error));
  fresh.file->write(bytes.data(), n, 0, "keeping the user block of '" + path + "' in '" + tmp + "'");
}

// Every path of the tree, parents first, each group's members in the order
// they were created (the front file's groups record that order too).
std::vector<std::string> in_creation_order(const Tree& tree) {
  std::vector<std::string> out{"/"};
  std::vector<std::string> groups{"/"};
  for (std::size_t g = 0; g < groups.size(); ++g) {  // breadth first: no recursion on deep trees
    const std::string group = groups[g];  // a copy: groups grows below
    for (const auto& name : tree.nodes.at(group).order) {
      std::string p = (group == "/" ? "" : group) + "/" + name;
      if (tree.nodes.at(p).kind == ObjectKind::Group) groups.push_back(p);
      out.push_back(std::move(p));
    }
  }
  return out;
}

// The same paths with the named datatypes that datasets or attributes share,
// and the groups above them, first (each part in its order): the sharers are
// made after them. Without sharing, the order is the log's.
std::vector<std::string> types_first(const Tree& tree, std::vector<std::string> paths) {
  if (tree.type_users.empty()) return paths;
  std::set<std::string> early;
  for (const auto& p : paths)
    if (const Node& n = tree.nodes.at(p); n.kind == ObjectKind::Datatype && tree.type_users.count(n.token))
      for (std::string q = p; early.insert(q).second && q != "/";) q = q.substr(0, std::max<std::size_t>(1, q.rfind('/')));
  std::stable_partition(paths.begin(), paths.end(), [&](const std::string& p) { return early.count(p) > 0; });
  return paths;
}

// A virtual dataset's mappings: each of its boxes a run of one of the arrays.
std::vector<VirtualMapping> mappings_of(const FrontPlan& plan, const LogArrays& arrays, const Datatype& dtype) {
  std::vector<VirtualMapping> out;
  for (const auto& b : plan.boxes)
    for (auto& m : arrays.mappings(dtype, b)) out.push_back(std::move(m));
  return out;
}

// Whether FrontImage can encode the front file of this tree itself: groups
// and datasets only, each made once (no other links, no named datatypes),
// datasets in the log as external storage or virtual datasets, or never
// written, of types and with attributes it holds, no user block, no values
// held in the metadata.
bool can_encode_directly(const Tree& tree, const std::map<int, FrontPlan>& plans, const LogArrays& arrays,
                         const std::vector<std::string>& paths) {
  if (tree.userblock || !tree.held.empty() || !tree.type_users.empty()) return false;
  for (const auto& [name, spec] : arrays.arrays())
    if (!FrontImage::can_hold(spec.dtype)) return false;
  for (const auto& p : paths) {
    const Node& n = tree.nodes.at(p);
    if (n.kind == ObjectKind::Group) {
      // The root also gets the group of the arrays virtual datasets map.
      if (!FrontImage::can_hold_members(n.order.size() + (p == "/" ? 1 : 0))) return false;
    } else if (n.kind == ObjectKind::Dataset) {
      const DatasetInfo& info = tree.datasets[std::size_t(n.dataset)];
      const FrontPlan& plan = plans.at(n.dataset);
      if (info.null_space || info.shape.empty()) return false;
      if (plan.kind == FrontPlan::External) {
        if (!FrontImage::can_hold(info.dtype.in_memory()) || !FrontImage::can_hold_segments(plan.segments.size()))
          return false;
      } else if (plan.kind == FrontPlan::Virtual) {
        if (!FrontImage::can_hold(info.dtype.in_memory()) ||
            !FrontImage::can_hold_mappings(mappings_of(plan, arrays, info.dtype.in_memory())))
          return false;
      } else if (plan.kind != FrontPlan::Unwritten || !FrontImage::can_hold(info.dtype)) {
        return false;
      }
    } else {
      return false;  // a link, or a named datatype
    }
    if (p != "/" && !FrontImage::can_hold_name(p.substr(p.rfind('/') + 1))) return false;
    if (!FrontImage::can_hold_members(n.attrs.size() + (p == "/" ? 3 : 0))) return false;  // and the log's marks
    for (const auto& [name, value] : n.attrs)
      if (!FrontImage::can_hold(name, value)) return false;
  }
  return true;
}

// The front file of such a tree (can_encode_directly), encoded by FrontImage
// and written to `tmp`: the same groups, datasets and attributes, in the same
// order, as the library would make below.
FrontSum encode_front_file(LogStore& store, const std::string& tmp, const LogHeader& header, const Tree& tree,
                           const std::map<int, FrontPlan>& plans, const LogArrays& arrays,
                           const std::vector<std::string>& paths, const std::string& log_name, uint64_t epoch) {
  FrontImage image;
  image.add_attribute(FrontImage::kRoot, kFrontMarker, AttributeValue(log_name));
  image.add_attribute(FrontImage::kRoot, kFrontId, AttributeValue(hex_id(header.file_id)));
  image.add_attribute(FrontImage::kRoot, kFrontEpoch, AttributeValue(epoch));
  std::map<std::string, int> made{{"/", FrontImage::kRoot}};
  std::vector<std::pair<int, const Node*>> objects{{FrontImage::kRoot, &tree.nodes.at("/")}};
  for (const auto& p : paths) {
    if (p == "/") continue;
    const Node& node = tree.nodes.at(p);
    const std::size_t slash = p.rfind('/');
    const int parent = made.at(slash == 0 ? "/" : p.substr(0, slash));
    const std::string name = p.substr(slash + 1);
    int k;
    if (node.kind == ObjectKind::Group) {
      k = image.add_group(parent, name);
    } else {
      const DatasetInfo& info = tree.datasets[std::size_t(node.dataset)];
      const FrontPlan& plan = plans.at(node.dataset);
      const Datatype dtype = info.dtype.in_memory();  // the log's bytes as they were in memory (as below)
      if (plan.kind == FrontPlan::External)
        k = image.add_dataset(parent, name, dtype, info.shape, log_name, plan.segments, {});
      else if (plan.kind == FrontPlan::Virtual)
        k = image.add_virtual_dataset(parent, name, dtype, info.shape, mappings_of(plan, arrays, dtype), info.fill);
      else
        k = image.add_dataset(parent, name, info.dtype, info.shape, log_name, {}, info.fill);
    }
    made.emplace(p, k);
    objects.emplace_back(k, &node);
  }
  // The arrays the virtual datasets map, after the application's objects.
  if (auto specs = arrays.arrays(); !specs.empty()) {
    const int sources = image.add_group(FrontImage::kRoot, std::string(kFrontSources).substr(1));
    for (const auto& [path, spec] : specs) {
      std::vector<LogBytes> runs;  // (all in the log)
      for (const auto& seg : spec.external) runs.push_back({seg.offset, seg.size});
      image.add_dataset(sources, path.substr(path.rfind('/') + 1), spec.dtype, spec.shape, log_name, runs, {});
    }
  }
  for (const auto& [k, node] : objects)
    for (const auto& name : node->attr_order) {
      if (k == FrontImage::kRoot && (name == kFrontMarker || name == kFrontId || name == kFrontEpoch)) continue;
      image.add_attribute(k, name, node->attrs.at(name));
    }
  const std::vector<unsigned char> bytes = image.encode();
  auto file = store.open(tmp, LogStore::Access::Create, /*profiled=*/true);
  if (!file.file) throw IOError(with_reason("cannot create the front file '" + tmp + "'", file.error));
  file.file->write(bytes.data(), bytes.size(), 0, "writing the front file '" + tmp + "'");
  FrontSum sum;
  sum.size = bytes.size();
  sum.crc = crc32c(bytes.data(), bytes.size());
  sum.epoch = epoch;
  return sum;
}

}  // namespace

FrontSum build_front_file(LogStore& store, const std::string& path, const LogHeader& header, const Tree& tree,
                          const Index& index, uint64_t epoch, uint64_t max_segments, FrontEncoder encoder) {
  const std::string tmp = front_tmp_path(path);
  const std::string log_name = std::filesystem::path(path).filename().string() + ".loom/log";
  std::vector<std::string> log_only;
  std::vector<std::pair<std::string, const Node*>> made;  // objects made, for their attributes and held values below
  // An object with hard links is made at the first of its names met; the
  // others are hard links to it there (or, for data in the log only, the same
  // dangling soft link).
  std::map<uint64_t, std::string> made_at{{kRootToken, "/"}};  // by token
  std::map<uint64_t, std::string> dangling;                      // by token: the log-only soft link's target
  std::set<uint64_t> self_linked;  // groups holding a hard link to themselves (the hdf5 engine allows one)
  const std::vector<std::string> paths = types_first(tree, in_creation_order(tree));
  // Every dataset's plan first: the arrays virtual datasets map are made of
  // all their blocks. External storage may have more segments when the
  // engine encodes the file (FrontImage::kManySegments) than when the library
  // makes it, whose time per segment grows with their number.
  std::map<int, FrontPlan> plans;
  std::vector<LogArrays::Block> mapped;
  auto plan_all = [&](uint64_t max_runs) {
    plans.clear(), mapped.clear();
    for (const auto& p : paths) {
      const Node& entry = tree.nodes.at(p);
      if (!entry.link.empty() || !entry.external.file.empty() || entry.user_defined.link_class) continue;
      const Node& node = entry.hard ? tree.nodes.at(tree.path_of_token(entry.hard)) : entry;
      if (node.kind != ObjectKind::Dataset || plans.count(node.dataset)) continue;
      const auto& plan = plans[node.dataset] =
          plan_front_dataset(tree, index, node.dataset, log_name, max_segments, max_runs);
      const Datatype dtype = tree.datasets[std::size_t(node.dataset)].dtype.in_memory();
      for (const auto& b : plan.boxes)
        for (uint64_t k = 0; k < b.repeat; ++k) mapped.push_back({dtype, b.offset + k * b.stride, product(b.count)});
    }
  };
  if (encoder == FrontEncoder::Direct) {
    plan_all(FrontImage::kManySegments);
    const LogArrays arrays(log_name, std::move(mapped));
    if (can_encode_directly(tree, plans, arrays, paths))
      return encode_front_file(store, tmp, header, tree, plans, arrays, paths, log_name, epoch);
  }
  plan_all(kFewExternalSegments);
  const LogArrays arrays(log_name, std::move(mapped));
  auto e = front_engine(tree.userblock);
  auto h = e->open(tmp, engine::OpenMode::Create, MPI_COMM_SELF);
  e->write_attribute(*h, "/", kFrontMarker, AttributeValue(log_name));
  e->write_attribute(*h, "/", kFrontId, AttributeValue(hex_id(header.file_id)));
  e->write_attribute(*h, "/", kFrontEpoch, AttributeValue(epoch));
  for (const auto& p : paths) {
    const Node& entry = tree.nodes.at(p);
    if (!entry.link.empty()) {
      e->create_soft_link(*h, p, entry.link);
      continue;
    }
    if (!entry.external.file.empty()) {
      e->create_external_link(*h, p, entry.external);
      continue;
    }
    if (entry.user_defined.link_class) {
      // HDF5 takes a link of a class registered in this process (the external
      // class always is); the others stay in the log, listed like log-only data.
      if (H5Lis_registered(H5L_type_t(entry.user_defined.link_class)) > 0)
        e->create_user_defined_link(*h, p, entry.user_defined);
      else
        log_only.push_back(p);
      continue;
    }
    const Node& node = entry.hard ? tree.nodes.at(tree.path_of_token(entry.hard)) : entry;
    if (p != "/") {
      if (auto first = made_at.find(node.token); first != made_at.end()) {
        if (auto d = dangling.find(node.token); d != dangling.end()) {
          e->create_soft_link(*h, p, d->second);
          log_only.push_back(p);
        } else if (tree.find(p.substr(0, std::max<std::size_t>(1, p.rfind('/'))))->token == node.token &&
                   !self_linked.insert(node.token).second) {
          // A group's second name inside itself: a soft link there (the hdf5
          // engine refuses a second such hard link, which HDF5 1.14.5 would
          // corrupt the group with once deleted; readers go the same way).
          e->create_soft_link(*h, p, first->second);
        } else {
          e->create_hard_link(*h, p, first->second);
        }
        continue;
      }
      made_at[node.token] = p;
      if (node.kind == ObjectKind::Group) {
        e->create_group(*h, p);
      } else if (node.kind == ObjectKind::Datatype) {
        e->commit_datatype(*h, p, node.type);
      } else {
        const DatasetInfo& info = tree.datasets[std::size_t(node.dataset)];
        const FrontPlan& plan = plans.at(node.dataset);
        // Shared from a named datatype already made, if the type here is that type.
        auto shared = [&](const Datatype& dtype) {
          auto type = tree.dataset_named_types.find(node.dataset);
          auto at = type == tree.dataset_named_types.end() ? made_at.end() : made_at.find(type->second);
          return at != made_at.end() && dtype == info.dtype ? at->second : std::string();
        };
        if (plan.kind == FrontPlan::Unwritten) {
          DatasetSpec spec;  // nothing written: the native dataset reads as the fill value, like the log
          spec.dtype = info.dtype, spec.shape = info.shape, spec.layout = Layout::Contiguous, spec.layout_auto = false;
          spec.fill = info.fill, spec.null_space = info.null_space, spec.named_type = shared(spec.dtype);
          e->create_dataset(*h, p, spec);
        } else if (plan.kind == FrontPlan::External) {
          // The log holds the bytes as they were in memory: the type says so
          // (a big-endian dataset shows as little-endian here, values the same).
          DatasetSpec spec;
          spec.dtype = info.dtype.in_memory(), spec.shape = info.shape;
          for (const auto& b : plan.segments) spec.external.push_back({log_name, b.offset, b.size});
          spec.named_type = shared(spec.dtype);
          e->create_dataset(*h, p, spec);
        } else if (plan.kind == FrontPlan::Virtual) {
          // Each block a run of one of the arrays (made below), mapped onto its box.
          DatasetSpec spec;
          spec.dtype = info.dtype.in_memory(), spec.shape = info.shape, spec.fill = info.fill;  // what no box covers
          for (const auto& b : plan.boxes)
            for (auto& m : arrays.mappings(spec.dtype, b)) spec.virtual_map.push_back(std::move(m));
          spec.named_type = shared(spec.dtype);
          e->create_dataset(*h, p, spec);
        } else {
          // A dangling link: stock HDF5 tools report it instead of showing wrong values.
          const std::string target = "/h5loom: data in the log only (" + plan.why_not + "); run: h5loom convert";
          e->create_soft_link(*h, p, target);
          dangling[node.token] = target;
          log_only.push_back(p);
          continue;
        }
      }
    }
    made.emplace_back(p, &node);
  }
  // The arrays the virtual datasets map, after the application's objects (a
  // virtual dataset finds its source when it is read).
  if (auto specs = arrays.arrays(); !specs.empty()) {
    e->create_group(*h, kFrontSources);
    for (const auto& [name, spec] : specs) e->create_dataset(*h, name, spec);
  }
  // Then what may refer to any object: attributes, and the datasets the
  // metadata holds (their references translated to the front file's).
  FrontReferences refs(tree, *e, *h);
  for (const auto& [p, object] : made) {
    const Node& node = *object;
    for (const auto& name : node.attr_order) {  // in creation order, which the front file keeps
      if (p == "/" && (name == kFrontMarker || name == kFrontId || name == kFrontEpoch)) continue;
      AttributeValue value = refs.translated(node.attrs.at(name));
      if (auto type = node.attr_named_types.find(name); type != node.attr_named_types.end())
        if (auto at = made_at.find(type->second); at != made_at.end()) value.set_named_type(at->second);
      e->write_attribute(*h, p, name, value);
    }
    auto held = node.kind == ObjectKind::Dataset ? tree.held.find(node.dataset) : tree.held.end();
    if (held != tree.held.end()) e->put(*h, refs.translated_write(p, tree.datasets[std::size_t(node.dataset)], held->second));
  }
  if (!log_only.empty()) e->write_attribute(*h, "/", "_h5loom_log_only", AttributeValue(log_only));
  e->close(*h);
  if (tree.userblock) keep_user_block(store, path, tmp, tree.userblock);
  auto sum = checksum_file(store, tmp);
  if (!sum) throw IOError("the front file '" + tmp + "' vanished while it was built");
  sum->epoch = epoch;
  return *sum;
}

namespace {

void sync_path(LogStore& store, const std::string& p, LogStore::Access access) {
  if (const int err = fsync_path(store, p, access)) throw IOError(with_reason("cannot sync '" + p + "'", err));
}

}  // namespace

void sync_front_file(LogStore& store, const std::string& path) {
  sync_path(store, front_tmp_path(path), LogStore::Access::Read);
}

void publish_front_file(LogStore& store, const std::string& path, bool sync) {
  // Durable before it replaces the old one (sync_front_file), and the rename
  // durable before we return: a crash leaves the old front file or the new one, whole.
  if (int err = store.rename(front_tmp_path(path), path))
    throw IOError(with_reason("cannot replace front file '" + path + "'", err));
  if (sync) sync_front_directory(store, path);
}

void sync_front_directory(LogStore& store, const std::string& path) {
  sync_path(store, std::filesystem::absolute(path).parent_path().string(), LogStore::Access::Directory);
}

// The engine's probe() asks it.
bool is_log_file(const std::string& path) {
  LogStore& store = posix_store();
  if (!store.exists(commits_path(path))) return false;
  if (!store.exists(path)) return true;  // not closed yet (or crashed before its first close)
  try {
    return front_is_marked(path);  // HDF5 without the marker: another engine's file; the log is stale
  } catch (const Error&) {
    return true;  // not HDF5: the log engine's open tells why it cannot use the log
  }
}

}  // namespace h5loom::logengine
