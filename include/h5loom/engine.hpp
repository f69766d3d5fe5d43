// The engine interface (version 10): the one small set of operations every
// storage engine implements. The object model (h5loom.hpp) checks every
// argument once and then calls exactly one of these; an engine only does the
// work. docs/engines.md walks through writing an engine and a wrapper.
//
// Conventions every engine can rely on (the object model guarantees them):
//  * Paths are absolute and normalised ("/a/b"); the root group is "/".
//  * The parent group of a path to create exists; the name does not.
//  * Datasets, groups and attributes passed to non-create calls exist.
//  * Selections have been validated against the dataset's current shape,
//    memory types equal the dataset's type, buffers hold exactly the selection.
//  * Variable-length strings (conformance group "vlen_strings") are
//    std::string elements in memory: a write's buffer is always Owned (an
//    engine can keep it as it is), and read() assigns to the `out` strings.
//  * Elements with variable-length parts (conformance group "variable_length":
//    sequences, strings inside compounds; variable_length.hpp) have HDF5's
//    memory layout: a write's buffer is always Owned, parts included, and
//    read() allocates the parts it writes into `out` with malloc (the
//    program releases them with reclaim_variable_length).
//  * Every call on an open file is collective over the file's communicator
//    (all ranks make the same calls on the same objects in the same order),
//    except put() and prepare_flush(): each rank puts its own writes, as many
//    as it likes.
//  * Calls on one file never overlap. put() and prepare_flush() may come
//    from another thread than the other calls (the async wrapper's background
//    thread), so they make no MPI or HDF5 call, and what they share with
//    other open files (a cache, a pool) is guarded by a lock.
//
// The contract every engine keeps:
//  * Ownership: a Write's buffer is Owned (the engine may keep it, as long as
//    it likes), borrowed UntilFlush (valid until the next flush() on the file
//    has completed) or borrowed DuringCall (valid only inside put(): copy it or
//    write it out before returning). WriteBuffer::keep() turns any of them
//    into an owned one.
//  * Time: flush() and read() may return a Request that completes later (an
//    async engine); null means the operation is complete. Errors of a put()
//    are raised at the next flush's completion, and errors of an operation
//    that completes later at its wait(), on every rank.
//  * Visible vs durable: after flush(Visible) completes on every rank, reads
//    by any rank see every write put before it; flush(Durable) also makes them
//    survive a crash (as far as the engine's sync setting goes). Reads never
//    force durability. close() is a durable flush.
//  * Errors are h5loom errors naming the file and object (IOError for storage
//    failures, NotFoundError for a missing file, ExistsError for
//    CreateExclusive on an existing one, CorruptionError for damaged files),
//    raised on every rank when the call is collective.
//
// A wrapper engine (collcheck, trace) derives from ForwardingEngine
// (forwarding_engine.hpp) and overrides only what it changes.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "h5loom/selection.hpp"
#include "h5loom/types.hpp"

// Bumped when the Engine class changes incompatibly; plugins are refused if
// theirs differs (engine_plugin.hpp).
#define H5LOOM_ENGINE_ABI_VERSION 10

namespace h5loom::engine {

enum class OpenMode {
  Read,             // existing file, read-only
  ReadWrite,        // existing file
  Create,           // new file; an existing one is truncated
  CreateExclusive,  // new file; fails with ExistsError if it exists
};

// How far a flush goes (see the contract above).
enum class FlushLevel { Visible, Durable };

// What probe() says about a storage location.
enum class Claim {
  No,        // not this engine's (or nothing there)
  Readable,  // a format this engine reads, written by anyone (any HDF5 file, for hdf5)
  Mine,      // written by this engine (its own marker); wins over Readable
};

// Engine-specific state of one open file. Engines derive from it.
class FileHandle {
 public:
  virtual ~FileHandle() = default;
};

// ---- the memory of a write -------------------------------------------------

enum class Lifetime {
  Owned,       // shared ownership: valid while the engine holds the WriteBuffer
  UntilFlush,  // borrowed: valid until the next flush() on the file has completed
  DuringCall,  // borrowed: valid only during put()
};

class WriteBuffer {
 public:
  WriteBuffer() = default;
  static WriteBuffer owned(std::shared_ptr<const void> owner, const void* data) {
    return WriteBuffer(data, Lifetime::Owned, std::move(owner));
  }
  static WriteBuffer borrowed(const void* data, Lifetime lifetime) { return WriteBuffer(data, lifetime, nullptr); }

  const void* data() const { return data_; }
  Lifetime lifetime() const { return lifetime_; }
  // What keeps an Owned buffer alive (null for borrowed ones).
  const std::shared_ptr<const void>& owner() const { return owner_; }
  // An owned buffer with the same bytes: shares the owner if there is one,
  // else copies `bytes` bytes (the only copy h5loom makes of a write).
  WriteBuffer keep(std::size_t bytes) const;

 private:
  WriteBuffer(const void* data, Lifetime lifetime, std::shared_ptr<const void> owner)
      : data_(data), lifetime_(lifetime), owner_(std::move(owner)) {}
  const void* data_ = nullptr;
  Lifetime lifetime_ = Lifetime::DuringCall;
  std::shared_ptr<const void> owner_;
};

// One write of one rank: `elements` elements of `dtype`, dense, row-major, for
// `selection` of dataset `dataset`.
struct Write {
  std::string dataset;
  Selection selection = Selection::none();
  Datatype dtype = Datatype::Float64;
  uint64_t elements = 0;
  WriteBuffer buffer;

  std::size_t bytes() const { return static_cast<std::size_t>(elements) * datatype_size(dtype); }
  const unsigned char* data() const { return static_cast<const unsigned char*>(buffer.data()); }
  // The same write with an owned buffer (see WriteBuffer::keep).
  Write kept() const;
};

// ---- operations that complete later -----------------------------------------

class Request {
 public:
  virtual ~Request() = default;
  // Local and non-blocking: has the operation finished on this rank? Never raises.
  virtual bool test() = 0;
  // Waits for the operation, and raises its error. Collective when the
  // operation was (flush, read): every rank waits, and an error on any rank
  // is raised on every rank. Called once.
  virtual void wait() = 0;
};
// Null: the operation completed when the call returned.
using RequestPtr = std::unique_ptr<Request>;

// Waits for `request` if there is one.
inline void wait(RequestPtr request) {
  if (request) request->wait();
}

// ---- what engines report about files -----------------------------------------

// Ordered key/value pairs, for people and tools (`h5loom info`, `describe()`).
using Properties = std::vector<std::pair<std::string, std::string>>;

// One piece of storage a file is made of (a local file, an object).
struct StoragePiece {
  std::string location;
  uint64_t bytes = 0;
};

// What verify() found. `counts` are engine-defined ("epochs", "blocks",
// "data_bytes", ...), `notes` things that are not errors (a torn tail a crash
// left, which readers ignore), `errors` what makes the file unsound.
struct VerifyReport {
  std::string engine;
  std::vector<std::pair<std::string, uint64_t>> counts;
  std::vector<std::string> notes;
  std::vector<std::string> errors;
  bool ok() const { return errors.empty(); }
  uint64_t count(const std::string& key) const;  // 0 if absent
  void add(const std::string& key, uint64_t n);  // adds to an existing count
};

class Engine {
 public:
  virtual ~Engine() = default;

  // The name this engine was registered under ("hdf5"); wrappers prefix theirs ("collcheck>hdf5").
  virtual std::string name() const = 0;
  // The conformance groups the engine claims to pass (tests/conformance); the
  // suite skips the others, and the table shows them as skipped, never passed.
  virtual std::vector<std::string> conformance_groups() const = 0;

  // ---- storage: whole files, not open (one process, no MPI) ------------------
  // A location is a path today; an object-store engine takes a URL. These
  // never need the file to be open, so tools ask every registered engine.

  // Is the file at `location` this engine's? Cheap (reads a few bytes), never throws.
  virtual Claim probe(const std::string& location) const noexcept = 0;
  // The pieces the file is made of (for sizes, copies, removal); empty if nothing is there.
  virtual std::vector<StoragePiece> storage(const std::string& location) const;
  // Removes every piece; NotFoundError if nothing is there.
  virtual void remove(const std::string& location) const;
  // The engine's own consistency checks (checksums, journals). nullopt: the
  // engine has none beyond reading every dataset, which the tools then do.
  virtual std::optional<VerifyReport> verify(const std::string& location) const { return std::nullopt; }

  // ---- open files --------------------------------------------------------------
  virtual std::unique_ptr<FileHandle> open(const std::string& location, OpenMode mode, MPI_Comm comm) = 0;
  virtual RequestPtr flush(FileHandle& f, FlushLevel level) = 0;
  // The local part of the next flush(level), done early: the async wrapper
  // calls it on its background thread, while the program computes, so that
  // the flush has only its collective part left. It moves the writes this
  // rank put so far towards storage - and for Durable syncs what it wrote, as
  // far as the engine's sync setting goes. NOT collective; no MPI or HDF5
  // call (see the conventions above). Like put(), it raises no storage error:
  // the next flush does, on every rank. The default does nothing: the data
  // then moves at flush().
  virtual void prepare_flush(FileHandle& f, FlushLevel level) {}
  // A durable flush whose last step may be left to the returned request (v9).
  // The async wrapper calls it where a flush's collective part runs; the
  // request may complete by itself at a later flush_in_stages (test() says
  // so), and the wrapper waits for it, on every rank, where a collective
  // call needs the flush complete. Any call may come meanwhile; an engine
  // finishes the pending stage itself where it must. The log engine leaves
  // its commit record to the request: its syncs run meanwhile, the next
  // flush in stages writes the record and syncs it on a helper thread, and
  // the one after that (or close, or wait()) confirms it on every rank.
  // The default: flush(f, Durable), complete.
  virtual RequestPtr flush_in_stages(FileHandle& f) { return flush(f, FlushLevel::Durable); }
  // Writes whatever was put and not flushed, durably, and releases the handle.
  virtual void close(FileHandle& f) = 0;
  // A close that the program completes later (File::close_async; v10): every
  // rank calls begin_close at the same point, and close() follows at a later
  // collective point, with no other call on the file in between. The engine
  // may start the close's local work meanwhile (the async wrapper moves the
  // file's writes and syncs them on its background thread while the program
  // computes). Collective; an error it raises is raised on every rank, and
  // close() still follows. The default does nothing: close() does it all.
  virtual void begin_close(FileHandle& f) {}
  // The engine's layout and knobs for this file ("engine", "ranks", ...), for `h5loom info`.
  virtual Properties describe(FileHandle& f) = 0;
  // The size of the file's user block: bytes at its start that belong to the
  // application, never touched by the engine (HDF5's H5Pset_userblock; the
  // engines' knob "userblock" sets it for a new file). The default: 0.
  virtual uint64_t userblock(FileHandle& f);

  // ---- groups --------------------------------------------------------------
  virtual ObjectKind kind(FileHandle& f, const std::string& path) = 0;
  virtual void create_group(FileHandle& f, const std::string& path) = 0;
  // Names (not paths) of the members of a group, sorted.
  virtual std::vector<std::string> list(FileHandle& f, const std::string& group) = 0;

  // ---- links (conformance group "links"; "order" for creation order) --------
  // An engine without them keeps these defaults, which raise UsageError.
  // Removes the link `path`: a dataset, a soft link, or a group with all below it.
  virtual void unlink(FileHandle& f, const std::string& path);
  // Renames `from` to `to` (the parent of `to` exists, `to` does not, and it is not below `from`).
  virtual void move(FileHandle& f, const std::string& from, const std::string& to);
  // A soft link `path` to the absolute path `target` (which need not exist).
  // kind() and every other call follow soft links; list() names them.
  virtual void create_soft_link(FileHandle& f, const std::string& path, const std::string& target);
  // The target if `path` is a soft link; nullopt if it is anything else or nothing.
  virtual std::optional<std::string> soft_link(FileHandle& f, const std::string& path);
  // Member names of a group in the order they were created.
  virtual std::vector<std::string> list_in_creation_order(FileHandle& f, const std::string& group);
  // HDF5's creation order values ("order"): each new link of a group gets
  // the group's next value, from 0; a link keeps its value while it stays,
  // values are not reused, and the next is 0 again when the group is empty (a
  // moved link gets its new group's next value). The value of the link
  // `path`; the defaults give positions in list_in_creation_order().
  virtual int64_t creation_order(FileHandle& f, const std::string& path);
  // The value the next link made in `group` gets.
  virtual int64_t next_creation_order(FileHandle& f, const std::string& group);

  // ---- object references (conformance group "references") -------------------
  // An engine without them keeps these defaults, which raise UsageError.
  // A token for the group, dataset or named datatype `path` (links followed): not 0, the same
  // on every rank, unchanged while the object exists (moves included), and
  // what the engine stores for an ObjectRef in datasets and attributes.
  virtual uint64_t object_token(FileHandle& f, const std::string& path);
  // A path of the object `token` names; NotFoundError if it names none (it was
  // removed, or the value was never a token of this file).
  virtual std::string object_path(FileHandle& f, uint64_t token);

  // ---- hard links (conformance group "hard_links"; with "links" and "references") --
  // A second name `path` for the existing group, dataset or named datatype
  // `target` (links followed; the parent of `path` exists, `path` does not).
  // Every name of an object is equal: unlink() of one removes that name, and
  // the object goes (with everything below it) with its last name. The default
  // raises UsageError.
  virtual void create_hard_link(FileHandle& f, const std::string& path, const std::string& target);
  // How many hard links name the object at `path` (links followed), plus the
  // references held on it (change_reference_count), plus - for a named
  // datatype - the datasets and attributes sharing it (DatasetSpec::named_type,
  // AttributeValue::named_type): HDF5's reference count.
  // The default, for engines whose objects have one name each, is 1.
  virtual uint64_t link_count(FileHandle& f, const std::string& path);

  // ---- reference counts (conformance group "reference_counts") --------------------
  // HDF5's H5Oincr_refcount (delta +1) and H5Odecr_refcount (-1): a reference
  // the application holds on the object at `path` besides its names; returns
  // link_count afterwards. Releasing one the object does not hold raises
  // UsageError (HDF5 would delete an object its links still name). The
  // default raises UsageError.
  virtual uint64_t change_reference_count(FileHandle& f, const std::string& path, int delta);

  // ---- external links (conformance group "external_links"; with "links") ---------
  // An external link `path` to the object `link.path` of the file `link.file`
  // (the parent of `path` exists, `path` does not). No call follows it:
  // kind() is None for it and for paths through it, list() names it, and
  // unlink() and move() handle it like a soft link. The default raises UsageError.
  virtual void create_external_link(FileHandle& f, const std::string& path, const ExternalLink& link);
  // The link if `path` is an external link; nullopt if it is anything else or nothing.
  virtual std::optional<ExternalLink> external_link(FileHandle& f, const std::string& path);

  // ---- user-defined links (conformance group "user_defined_links"; with "links") --
  // A link `path` of a user-defined class (HDF5's H5Lcreate_ud) whose value is
  // kept as the bytes given. Like an external link, no call follows it: kind()
  // is None for it, list() names it, unlink() and move() handle it like a soft
  // link. The default raises UsageError.
  virtual void create_user_defined_link(FileHandle& f, const std::string& path, const UserDefinedLink& link);
  // The link if `path` is a user-defined link (not an external link with a
  // well-formed value: external_link() gives those); nullopt otherwise.
  virtual std::optional<UserDefinedLink> user_defined_link(FileHandle& f, const std::string& path);

  // ---- named datatypes (conformance group "named_types") ----------------------
  // An engine without them keeps these defaults, which raise UsageError.
  // A named (committed) datatype `path` describing `dtype`: an object that
  // kind() reports as ObjectKind::Datatype, that carries attributes, that
  // unlink() and move() handle like a dataset and that object_token() names.
  virtual void commit_datatype(FileHandle& f, const std::string& path, const Datatype& dtype);
  // The datatype the named datatype `path` describes.
  virtual Datatype named_datatype(FileHandle& f, const std::string& path);

  // ---- datasets ------------------------------------------------------------
  // A non-empty spec.fill needs conformance group "fill"; an engine without it raises UsageError.
  virtual void create_dataset(FileHandle& f, const std::string& path, const DatasetSpec& spec) = 0;
  virtual DatasetInfo dataset_info(FileHandle& f, const std::string& path) = 0;
  // New shape: none exceeds max_shape, and none shrinks unless the engine
  // declares the conformance group "shrink" (then the elements outside the new
  // shape are gone: growing again shows the fill value there).
  virtual void extend(FileHandle& f, const std::string& path, const Dims& new_shape) = 0;

  // ---- data ------------------------------------------------------------------
  // NOT collective: one write of this rank. The engine may write it now, copy
  // it, or keep it (by the buffer's lifetime) until a flush. It must not raise
  // storage errors here (the other ranks would not know): they are raised at
  // the next flush, on every rank.
  virtual void put(FileHandle& f, Write write) = 0;
  // Each rank reads its own selection (possibly none) into a dense buffer,
  // which must stay valid until the returned request (if any) completes.
  // The object model flushes (Visible) before it, so the engine sees every
  // write put before the read.
  virtual RequestPtr read(FileHandle& f, const std::string& path, const Selection& sel, Datatype dtype,
                          void* out) = 0;
  // NOT collective (conformance group "independent_read"; the default raises
  // UsageError): this rank alone reads its selection, seeing every write the
  // last completed flush made visible. This rank has put nothing since (the
  // object model checks). Errors are raised on this rank only.
  virtual RequestPtr read_independent(FileHandle& f, const std::string& path, const Selection& sel, Datatype dtype,
                                      void* out);

  // ---- attributes (on "/", a group or a dataset) --------------------------------
  virtual bool has_attribute(FileHandle& f, const std::string& object, const std::string& name) = 0;
  // Creates or overwrites. Every rank passes the same value.
  virtual void write_attribute(FileHandle& f, const std::string& object, const std::string& name,
                               const AttributeValue& value) = 0;
  virtual AttributeValue read_attribute(FileHandle& f, const std::string& object, const std::string& name) = 0;
  virtual std::vector<std::string> list_attributes(FileHandle& f, const std::string& object) = 0;

  // ---- editing attributes (conformance group "attribute_edit") ---------------
  // An engine without them keeps these defaults, which raise UsageError.
  // Deletes the existing attribute `name`.
  virtual void remove_attribute(FileHandle& f, const std::string& object, const std::string& name);
  // Renames the existing attribute `from` to `to` (which does not exist); its
  // value and its place in creation order stay.
  virtual void rename_attribute(FileHandle& f, const std::string& object, const std::string& from,
                                const std::string& to);
  // Attribute names in the order they were created; an overwritten attribute
  // counts as created again (it is last), as in HDF5, where overwriting is
  // deleting and creating.
  virtual std::vector<std::string> list_attributes_in_creation_order(FileHandle& f, const std::string& object);
};

// The engine of new files when nobody chose one.
inline constexpr const char* kDefaultEngine = "hdf5";

// Builds an engine stack from a configuration: an engine name ("hdf5") or a JSON
// object ({"engine": "hdf5", "wrappers": ["collcheck"], "hdf5": {...knobs}}).
// Throws ConfigError naming the unknown engine or key.
std::unique_ptr<Engine> make_engine(const std::string& config);
// The engine that wrote an existing file: every registered engine is probed,
// and the strongest claim wins (Mine over Readable). Empty if none claims it
// (nothing there, or a format no engine reads).
std::string detect_engine(const std::string& location);
// The engine named `name`, with default knobs: for storage operations
// (probe, storage, remove, verify) on files it wrote.
std::unique_ptr<Engine> storage_engine(const std::string& name);
// Names of the registered base engines and wrappers (built in and plugins).
std::vector<std::string> engine_names();
std::vector<std::string> wrapper_names();

}  // namespace h5loom::engine
