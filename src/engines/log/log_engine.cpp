// The log-structured engine (docs/engines/log.md; format: docs/formats/log.md).
// Writes are appended, never placed: each rank's writes go through its write
// pipeline (write_pipeline.hpp) to the log, and each flush ends an epoch with
// an index record and a commit record (commit.hpp). Reads find the blocks of
// a selection through the index (read_planner.hpp). This file adapts the
// engine interface to those parts; LogFile (log_file.hpp) holds them and
// opens and closes them.
#include <sys/stat.h>
#include <unistd.h>

#include "engine/registry.hpp"
#include "hdf5lib/chunking.hpp"
#include "hdf5lib/filters.hpp"
#include "engines/log/commit.hpp"
#include "engines/log/front_file.hpp"
#include "engines/log/held_values.hpp"
#include "engines/log/log_file.hpp"
#include "engines/log/read_planner.hpp"
#include "engines/log/verify.hpp"

namespace h5loom::logengine {

using engine::FileHandle;
using engine::OpenMode;
using namespace logfmt;

namespace {

// The rest of a commit begun by flush_in_stages: its commit record. Finished
// at wait() - or earlier by the file itself (its record written at the next
// flush in stages and confirmed at the one after, or at a flush or close), in
// which case wait() only reports the outcome (a commit the file dropped when
// it closed on an error reports that it was abandoned).
class CommitRequest final : public engine::Request {
 public:
  CommitRequest(LogFile& f, std::shared_ptr<CommitOutcome> outcome) : file_(f), outcome_(std::move(outcome)) {}
  bool test() override { return outcome_->done; }
  void wait() override {
    if (!outcome_->done) file_.writing_step([&] { finish_commit(file_); });  // raises its error here
    if (outcome_->error.code) mpi::throw_error(outcome_->error.code, outcome_->error.msg);
  }

 private:
  LogFile& file_;
  std::shared_ptr<CommitOutcome> outcome_;
};

}  // namespace

class LogEngine final : public engine::Engine {
 public:
  explicit LogEngine(Settings s) : settings_(std::move(s)) {}

  std::string name() const override { return "log"; }
  std::vector<std::string> conformance_groups() const override {
    return {"file",   "group",  "dataset", "attribute", "selection", "datatype", "extend", "errors",
            "series", "compound", "string", "enum",      "links",     "order",    "fill",
            "references", "reference_datasets", "vlen_strings", "variable_length", "attribute_edit", "arrays", "opaque",
            "null_spaces", "filters", "reference_counts", "independent_read", "shrink", "named_types", "hard_links", "external_links",
            "user_defined_links"};
  }

  // ---- storage ----
  engine::Claim probe(const std::string& location) const noexcept override {
    try {
      return is_log_file(location) ? engine::Claim::Mine : engine::Claim::No;
    } catch (...) {
      return engine::Claim::No;
    }
  }
  // The front file, the log, the journal and the writer's lock file (in NAME.loom/).
  std::vector<engine::StoragePiece> storage(const std::string& path) const override {
    std::vector<engine::StoragePiece> out;
    for (const auto& p : {path, log_path(path), commits_path(path), directory_of(path) + "/lock"}) {
      struct stat st {};
      if (::stat(p.c_str(), &st) == 0) out.push_back({p, static_cast<uint64_t>(st.st_size)});
    }
    return out;
  }
  void remove(const std::string& path) const override {
    Engine::remove(path);
    ::rmdir(directory_of(path).c_str());  // left if something else is in it
  }
  std::optional<engine::VerifyReport> verify(const std::string& path) const override {
    auto rep = verify_log(path);
    engine::VerifyReport r;
    r.engine = "log";
    r.counts = {{"committed epochs", rep.epochs}, {"blocks", rep.blocks}, {"data bytes checked", rep.data_bytes}};
    if (rep.torn_log_bytes || rep.torn_commit_bytes)
      r.notes.push_back("torn tail: " + std::to_string(rep.torn_log_bytes) + " log bytes and " +
                        std::to_string(rep.torn_commit_bytes) +
                        " journal bytes after the last commit (an interrupted flush; ignored)");
    r.errors = rep.errors;
    return r;
  }

  std::unique_ptr<FileHandle> open(const std::string& path, OpenMode mode, MPI_Comm comm) override {
    return open_log_file(path, mode, comm, settings_);
  }

  // Visible: every rank's writes are placed, written and in every rank's
  // index, with no index record, commit record or sync (make_visible).
  // Durable: the epoch commits (commit.hpp).
  engine::RequestPtr flush(FileHandle& fh, engine::FlushLevel level) override {
    auto& f = cast(fh);
    if (!f.writable()) return nullptr;  // nothing was put: put() refuses a read-only file
    bring_in_for_flush(f);
    // After 2^24 - 1 visible flushes in one epoch the block entries' round
    // would overflow: the epoch commits instead.
    if (level == engine::FlushLevel::Durable || f.writing->pipeline->visible_round() >= logfmt::kMaxRound)
      f.writing_step([&] { commit(f); });
    else f.writing_step([&] { make_visible(f); });
    return nullptr;
  }

  // A durable flush whose commit record is left to the returned request: the
  // syncs of the epoch's data and index run on helper threads meanwhile, and
  // the next epoch is open (commit.hpp: begin_commit). The next flush in
  // stages writes the record and leaves its sync to a helper thread too; the
  // request completes by itself at the flush after that (or at its wait()).
  engine::RequestPtr flush_in_stages(FileHandle& fh) override {
    auto& f = cast(fh);
    if (!f.writable()) return nullptr;
    bring_in_for_flush(f, RecordSync::Later);
    bool begun = false;
    f.writing_step([&] { begun = begin_commit(f, {}, false, Urgency::Later); });
    if (begun) return std::make_unique<CommitRequest>(f, f.writing->committing->outcome);
    // Nothing new: this flush is durable once the record left syncing is
    // (it completes with that one, never before it).
    if (f.writing->syncing_record) return std::make_unique<CommitRequest>(f, f.writing->syncing_record->outcome);
    return nullptr;
  }

  // The local part of a flush, early (the async wrapper's background
  // thread): the writes borrowed until the flush join the write pipeline
  // now, so that a large one goes to the rank's region while the program
  // computes instead of at the flush; before a durable flush the region
  // writes are synced too, so that the commit's sync has little left to do.
  void prepare_flush(FileHandle& fh, engine::FlushLevel level) override {
    auto& f = cast(fh);
    if (!f.writable() || !f.failed.empty()) return;
    hand_over_deferred(f);
    if (level == engine::FlushLevel::Durable) f.writing->pipeline->sync_region_writes();
  }

  void close(FileHandle& fh) override {
    auto& f = static_cast<LogFile&>(fh);
    if (f.writing && f.failed.empty()) {  // what was put and not flushed
      share_held(f);
      hand_over_deferred(f);
    }
    close_log_file(f);
  }

  uint64_t userblock(FileHandle& fh) override { return cast(fh).catalog.tree.userblock; }

  engine::Properties describe(FileHandle& fh) override {
    auto& f = static_cast<LogFile&>(fh);
    const Committed& c = f.committed;
    auto text = [](auto v) { return std::to_string(v); };
    engine::Properties p = {
        {"engine", "log (log-structured), format version " + text(kVersion)},
        {"log", log_path(f.path) + ", " + text(c.log_end) + " bytes valid in " + text(c.epoch) + " epochs, " +
                    text(f.catalog.index->size()) + " blocks in " + text(f.catalog.tree.datasets.size()) + " datasets"},
        {"checksums", "CRC32C per " + text(c.header.checksum_unit) + " bytes of data, per block entry and per index"},
    };
    if (c.torn_bytes) p.emplace_back("torn tail", text(c.torn_bytes) + " bytes after the last commit (ignored)");
    if (!f.failed.empty()) p.emplace_back("unusable", f.failed);
    if (!c.damage.empty()) p.emplace_back("DAMAGED", c.damage + " (reading the " + text(c.epoch) + " intact epochs)");
    if (f.writing && f.writing->pipeline)
      p.emplace_back("writing", "buffer " + text(settings_.buffer_size) + " bytes per rank, " +
                                    text(f.writing->pipeline->transport().aggregators()) + " aggregator(s), regions of " +
                                    text(f.writing->pipeline->regions().size()) + " bytes per rank for writes of " +
                                    text(settings_.large_write) + " bytes or more (and buffers of " +
                                    text(settings_.spill_at) + " bytes as they fill, of " +
                                    text(settings_.own_region_min) + " bytes or more at a write-out), sync " +
                                    (settings_.sync ? "on" : "off"));
    return p;
  }

  // ---- tree ----
  // Links (soft and hard) are followed everywhere but at the last step of the path of
  // a link being created, deleted, moved or asked about.
  ObjectKind kind(FileHandle& fh, const std::string& path) override {
    const Node* n = cast(fh).catalog.tree.find(path);
    return n ? n->kind : ObjectKind::None;
  }
  void create_group(FileHandle& fh, const std::string& path) override {
    auto& f = writable(fh, "create group '" + path + "'");
    record(f, group_op(link_path(f, path)));
  }
  std::vector<std::string> list(FileHandle& fh, const std::string& group) override {
    const auto& c = node(cast(fh), group).children;
    return {c.begin(), c.end()};
  }
  std::vector<std::string> list_in_creation_order(FileHandle& fh, const std::string& group) override {
    return node(cast(fh), group).order;
  }
  int64_t creation_order(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    const std::string p = link_path(f, path);
    const auto slash = p.rfind('/');
    const Node& parent = node(f, slash == 0 ? "/" : p.substr(0, slash));
    auto it = parent.creation_order.find(p.substr(slash + 1));
    if (it == parent.creation_order.end()) throw NotFoundError("no link '" + path + "' in " + f.where());
    return it->second;
  }
  int64_t next_creation_order(FileHandle& fh, const std::string& group) override {
    return node(cast(fh), group).next_creation_order;
  }

  // ---- links ----
  void unlink(FileHandle& fh, const std::string& path) override {
    auto& f = writable(fh, "delete '" + path + "'");
    const std::string link = link_path(f, path);
    refuse_losing_references(f, link);
    record(f, unlink_op(link));
    f.writing->last_dataset_id = -1;  // a path may name another dataset now
  }
  void move(FileHandle& fh, const std::string& from, const std::string& to) override {
    auto& f = writable(fh, "move '" + from + "'");
    const std::string src = link_path(f, from), dst = link_path(f, to);
    // Through a hard link, `to` may lie inside `from` although its path does not.
    if (dst == src || dst.compare(0, src.size() + 1, src + "/") == 0)
      throw UsageError("cannot move '" + from + "' to '" + to + "' in " + f.where() + ": the destination is inside it (" +
                       dst + ")");
    record(f, move_op(src, dst));
    f.writing->last_dataset_id = -1;
  }
  void create_soft_link(FileHandle& fh, const std::string& path, const std::string& target) override {
    auto& f = writable(fh, "create soft link '" + path + "'");
    record(f, softlink_op(link_path(f, path), target));
  }
  // A hard link is a node naming its object's token (a `hardlink` operation).
  void create_hard_link(FileHandle& fh, const std::string& path, const std::string& target) override {
    auto& f = writable(fh, "create hard link '" + path + "'");
    record(f, hardlink_op(link_path(f, path), node(f, target).token));
  }
  uint64_t link_count(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    return f.catalog.tree.link_count(node(f, path).token);
  }
  uint64_t change_reference_count(FileHandle& fh, const std::string& path, int delta) override {
    auto& f = writable(fh, "change the reference count of '" + path + "'");
    const uint64_t token = node(f, path).token;
    auto it = f.catalog.tree.references.find(token);
    const int64_t held = (it == f.catalog.tree.references.end() ? 0 : int64_t(it->second)) + delta;
    if (held < 0)
      throw UsageError("cannot release a reference to '" + path + "' in " + f.where() +
                       ": it holds none besides its names (HDF5 would delete an object its links name)");
    record(f, refcount_op(token, uint32_t(held)));
    return f.catalog.tree.link_count(token);
  }
  // An object goes with its last name - but not while references are held on
  // it (HDF5 would keep it, nameless, in the file; h5loom keeps nothing nameless).
  static void refuse_losing_references(LogFile& f, const std::string& link) {
    const Tree& tree = f.catalog.tree;
    if (tree.references.empty()) return;
    Tree after = tree;  // (references are rare: the copy is made only when some are held)
    apply_op(after, unlink_op(link), f.where());
    for (const auto& [token, count] : tree.references)
      if (after.path_of_token(token).empty())
        throw UsageError("cannot delete '" + link + "' in " + f.where() + ": object '" + tree.path_of_token(token) +
                         "' would go while " + std::to_string(count) +
                         " reference(s) are held on it (H5Oincr_refcount): release them first (H5Odecr_refcount)");
  }
  void create_external_link(FileHandle& fh, const std::string& path, const ExternalLink& link) override {
    auto& f = writable(fh, "create external link '" + path + "'");
    record(f, extlink_op(link_path(f, path), link));
  }
  std::optional<ExternalLink> external_link(FileHandle& fh, const std::string& path) override {
    const Node* n = link_node(cast(fh), path);
    if (!n || n->external.file.empty()) return std::nullopt;
    return n->external;
  }
  void create_user_defined_link(FileHandle& fh, const std::string& path, const UserDefinedLink& link) override {
    auto& f = writable(fh, "create user-defined link '" + path + "'");
    record(f, udlink_op(link_path(f, path), link));
  }
  std::optional<UserDefinedLink> user_defined_link(FileHandle& fh, const std::string& path) override {
    const Node* n = link_node(cast(fh), path);
    if (!n || !n->user_defined.link_class) return std::nullopt;
    return n->user_defined;
  }
  std::optional<std::string> soft_link(FileHandle& fh, const std::string& path) override {
    const Node* n = link_node(cast(fh), path);
    if (!n || n->link.empty()) return std::nullopt;
    return n->link;
  }

  // ---- named datatypes: `type` operations ----
  void commit_datatype(FileHandle& fh, const std::string& path, const Datatype& dtype) override {
    auto& f = writable(fh, "create named datatype '" + path + "'");
    record(f, type_op(link_path(f, path), dtype));
  }
  Datatype named_datatype(FileHandle& fh, const std::string& path) override { return node(cast(fh), path).type; }

  // ---- references: tokens the tree gives every group, dataset and named datatype ----
  uint64_t object_token(FileHandle& fh, const std::string& path) override { return node(cast(fh), path).token; }
  std::string object_path(FileHandle& fh, uint64_t token) override {
    auto& f = cast(fh);
    std::string path = f.catalog.tree.path_of_token(token);
    if (path.empty())
      throw NotFoundError("reference " + std::to_string(token) + " names no object of " + f.where() +
                          " (the object was removed, or the value is not a reference of this file)");
    return path;
  }

  // ---- datasets ----
  void create_dataset(FileHandle& fh, const std::string& path, const DatasetSpec& spec) override {
    auto& f = writable(fh, "create dataset '" + path + "'");
    if (!spec.external.empty() || !spec.virtual_map.empty())
      throw UsageError("cannot create dataset '" + path + "' in " + f.where() +
                       " with external storage or a virtual mapping: engine 'log' keeps data in its log "
                       "(conformance group 'external')");
    // The log has no chunks; they are chosen as the hdf5 engine would and kept
    // for conversion to native HDF5.
    const Dims chunks = hdf5lib::resolve_chunks(path, spec, /*chunked_by_default=*/false, MiB);
    // Filters are kept for conversion: one h5loom convert could not apply is refused now.
    hdf5lib::require_applicable(spec.filters, chunks, spec.shape, "dataset '" + path + "' in " + f.where());
    const Dims& max_shape = spec.max_shape.empty() ? spec.shape : spec.max_shape;
    Json op = dataset_op(link_path(f, path), spec.dtype, spec.shape, max_shape, chunks, spec.fill, spec.null_space,
                         spec.filters);
    std::optional<uint64_t> type_token;
    if (!spec.named_type.empty()) op["type_token"] = *(type_token = node(f, spec.named_type).token);
    // The tree gets the values the operation holds, as a replay of it would
    // (the type through its name), without parsing them back out of it.
    DatasetInfo info;
    info.dtype = datatype_from_name(op["dtype"].get_ref<const std::string&>());
    info.shape = spec.shape, info.max_shape = max_shape;
    info.layout = chunks.empty() ? Layout::Contiguous : Layout::Chunked, info.chunks = chunks;
    info.fill = spec.fill, info.null_space = spec.null_space, info.filters = spec.filters;
    record_dataset(f, std::move(op), std::move(info), type_token);
  }
  DatasetInfo dataset_info(FileHandle& fh, const std::string& path) override {
    const Tree& tree = cast(fh).catalog.tree;
    const int id = tree.dataset_id(path);
    DatasetInfo info = tree.datasets.at(std::size_t(id));
    if (auto shared = tree.dataset_named_types.find(id); shared != tree.dataset_named_types.end())
      info.named_type = tree.path_of_token(shared->second);  // (empty once the named datatype is gone)
    return info;
  }
  // Growing is an `extend`. Shrinking is a `resize` at the current (epoch,
  // round) after a visible flush: every block written before it is then of an
  // earlier round, and keeps only what lies inside the new shape (Tree::clipped).
  void extend(FileHandle& fh, const std::string& path, const Dims& new_shape) override {
    auto& f = writable(fh, "extend dataset '" + path + "'");
    const std::string p = f.catalog.tree.resolve(path);
    const Dims& shape = f.catalog.tree.datasets.at(std::size_t(f.catalog.tree.dataset_id(p))).shape;
    bool shrinks = false;
    for (std::size_t d = 0; d < new_shape.size() && d < shape.size(); ++d) shrinks |= new_shape[d] < shape[d];
    if (!shrinks) {
      record(f, extend_op(p, new_shape));
      return;
    }
    flush(fh, engine::FlushLevel::Visible);  // collective, as extend is
    const WritePipeline& pipe = *f.writing->pipeline;
    record(f, resize_op(p, new_shape, pipe.open_epoch(), pipe.visible_round()));
  }

  // ---- data ----
  // A write whose buffer is borrowed until the flush is read there (the value
  // at the flush point is what gets written), and so is every later write of
  // the rank until then, to keep its writes in order. Otherwise into the
  // write pipeline: a buffer valid only now is copied into the coalescing
  // buffer or written to the rank's region at once - or, if it can be
  // neither, copied and kept; an owned one is kept as long as needed.
  void put(FileHandle& fh, engine::Write w) override {
    auto& f = cast(fh);  // called once per write: no string is built unless something is wrong
    if (!f.writable()) writable(fh, "write to '" + w.dataset + "'");  // the object model refuses it first
    if (f.catalog.tree.held_datasets && held_in_metadata(w.dtype)) {  // kept in the metadata (held_values.hpp)
      w.dataset = f.catalog.tree.resolve(w.dataset);
      f.writing->held.push_back(w.kept());
      return;
    }
    using Hold = WritePipeline::Hold;
    auto& deferred = f.writing->deferred;
    const engine::Lifetime life = w.buffer.lifetime();
    if (life == engine::Lifetime::UntilFlush || !deferred.empty()) {
      deferred.push_back(life == engine::Lifetime::DuringCall ? w.kept() : std::move(w));
    } else if (life == engine::Lifetime::Owned || !put_one(f, w, Hold::DuringCall)) {
      engine::Write kept = w.kept();
      put_one(f, kept, Hold::Shared, kept.buffer.owner());
    }
  }

  engine::RequestPtr read(FileHandle& fh, const std::string& path, const Selection& sel, Datatype,
                          void* out) override {
    auto& f = cast(fh);
    const int id = f.catalog.tree.dataset_id(path);
    if (held_in_metadata(f.catalog.tree.datasets[std::size_t(id)].dtype)) {
      read_held(f.catalog.tree, id, sel, out);
      return nullptr;
    }
    // The object model made every write visible first (flush(Visible)); a
    // read never commits. A damaged block found by one rank is raised on every rank.
    mpi::agree(f.team.comm, [&] {
      ReadPlanner(f.catalog.tree, *f.catalog.index, *f.log, f.committed.header.checksum_unit, f.where())
          .read(path, sel, out);
    });
    return nullptr;
  }

  // Every rank holds the whole index of what the last flush made visible, and
  // reads the log itself: one rank can read alone.
  engine::RequestPtr read_independent(FileHandle& fh, const std::string& path, const Selection& sel, Datatype,
                                      void* out) override {
    auto& f = cast(fh);
    const int id = f.catalog.tree.dataset_id(path);
    if (held_in_metadata(f.catalog.tree.datasets[std::size_t(id)].dtype)) read_held(f.catalog.tree, id, sel, out);
    else ReadPlanner(f.catalog.tree, *f.catalog.index, *f.log, f.committed.header.checksum_unit, f.where()).read(path, sel, out);
    return nullptr;
  }

  // ---- attributes ----
  bool has_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    return node(cast(fh), object).attrs.count(name) > 0;
  }
  void write_attribute(FileHandle& fh, const std::string& object, const std::string& name,
                       const AttributeValue& value) override {
    auto& f = writable(fh, "write attribute '" + name + "' on '" + object + "'");
    Json op = attribute_op(f.catalog.tree.resolve(object), name, value);
    if (!value.named_type().empty()) op["type_token"] = node(f, value.named_type()).token;
    record(f, std::move(op));
  }
  AttributeValue read_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    const Tree& tree = cast(fh).catalog.tree;
    const Node& n = node(cast(fh), object);
    AttributeValue value = n.attrs.at(name);
    if (auto shared = n.attr_named_types.find(name); shared != n.attr_named_types.end())
      value.set_named_type(tree.path_of_token(shared->second));
    return value;
  }
  std::vector<std::string> list_attributes(FileHandle& fh, const std::string& object) override {
    std::vector<std::string> out;
    for (const auto& [name, _] : node(cast(fh), object).attrs) out.push_back(name);
    return out;
  }
  void remove_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    auto& f = writable(fh, "delete attribute '" + name + "' of '" + object + "'");
    record(f, attribute_remove_op(f.catalog.tree.resolve(object), name));
  }
  void rename_attribute(FileHandle& fh, const std::string& object, const std::string& from,
                        const std::string& to) override {
    auto& f = writable(fh, "rename attribute '" + from + "' of '" + object + "'");
    record(f, attribute_rename_op(f.catalog.tree.resolve(object), from, to));
  }
  std::vector<std::string> list_attributes_in_creation_order(FileHandle& fh, const std::string& object) override {
    return node(cast(fh), object).attr_order;
  }

 private:
  // Every call but close and describe goes through here: a failed handle raises.
  static LogFile& cast(FileHandle& fh) {
    auto& f = static_cast<LogFile&>(fh);
    f.require_usable();
    return f;
  }
  // The node at an existing path (links followed).
  static const Node& node(LogFile& f, const std::string& path) {
    const Node* n = f.catalog.tree.find(path);
    if (!n) throw NotFoundError("no object '" + path + "' in " + f.where());
    return *n;
  }
  // The node of the link `path` itself (its last step not followed), or null.
  static const Node* link_node(LogFile& f, const std::string& path) {
    if (path == "/") return nullptr;
    const std::string p = link_path(f, path);
    auto it = p.empty() ? f.catalog.tree.nodes.end() : f.catalog.tree.nodes.find(p);
    return it == f.catalog.tree.nodes.end() ? nullptr : &it->second;
  }
  // A link's own path: its parent's links followed, not its last step.
  static std::string link_path(LogFile& f, const std::string& path) {
    const auto slash = path.rfind('/');
    const std::string parent = slash == 0 ? "/" : f.catalog.tree.resolve(path.substr(0, slash));
    return parent.empty() ? std::string() : (parent == "/" ? "" : parent) + path.substr(slash);
  }

  static LogFile& writable(FileHandle& fh, const std::string& what) {
    auto& f = cast(fh);
    if (!f.writable()) throw ReadOnlyError("cannot " + what + ": " + f.where() + " is open read-only");
    return f;
  }

  // What every flush does first: a commit begun by flush_in_stages finishes,
  // and the writes held back join the epoch. For a flush in stages its
  // record's sync is left to a helper thread, confirmed at the next flush.
  static void bring_in_for_flush(LogFile& f, RecordSync record_sync = RecordSync::Now) {
    f.writing_step([&] { finish_commit(f, {}, record_sync); });
    share_held(f);
    hand_over_deferred(f);
  }

  // Every rank's writes of datasets the metadata holds become metadata operations (collective).
  static void share_held(LogFile& f) {
    if (!f.catalog.tree.held_datasets) return;  // the same on every rank: none can have such writes
    f.writing_step([&] { share_held_writes(f.team.comm, f.writing->held, [&](Json op) { record(f, std::move(op)); }); });
  }

  // The deferred writes join the pipeline, in order, at the flush: borrowed
  // ones stay uncopied until the write-out that follows.
  static void hand_over_deferred(LogFile& f) {
    std::vector<engine::Write> deferred = std::move(f.writing->deferred);
    f.writing->deferred.clear();
    for (const auto& w : deferred) {
      if (w.buffer.lifetime() == engine::Lifetime::Owned)
        put_one(f, w, WritePipeline::Hold::Shared, w.buffer.owner());
      else
        put_one(f, w, WritePipeline::Hold::UntilWriteOut);
    }
  }

  // One write into the pipeline, by dataset path; the last dataset's id is
  // remembered (writes come in runs).
  static bool put_one(LogFile& f, const engine::Write& w, WritePipeline::Hold hold,
                      std::shared_ptr<const void> keep = {}) {
    Writing& wr = *f.writing;
    if (wr.last_dataset_id < 0 || w.dataset != wr.last_dataset) {
      wr.last_dataset_id = f.catalog.tree.dataset_id(w.dataset);
      wr.last_dataset = w.dataset;
    }
    const DatasetInfo& info = f.catalog.tree.datasets[std::size_t(wr.last_dataset_id)];
    return wr.pipeline->put(uint32_t(wr.last_dataset_id), w.dataset, info, w.selection, w.data(), hold,
                            std::move(keep));
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
  s.own_region_min = knobs.get<uint64_t>("aggregate_below", s.own_region_min);
  s.spill_at = knobs.get<uint64_t>("spill_at", s.spill_at);
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
  s.front_encoder = knobs.get<std::string>("front_encoder", s.front_encoder);
  if (s.front_encoder != "auto" && s.front_encoder != "hdf5")
    knobs.bad_value("front_encoder", "'" + s.front_encoder + "' is not 'auto' or 'hdf5'");
  s.userblock = engine::userblock_knob(knobs);
  s.max_external_segments = knobs.get<uint64_t>("max_external_segments", s.max_external_segments);
  return std::make_unique<logengine::LogEngine>(s);
}
}  // namespace h5loom::engine
