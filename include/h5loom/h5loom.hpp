// h5loom C++ API: files, groups, datasets, attributes and selections over MPI,
// with the storage engine chosen at run time. See docs/object-model.md.
//
// Collective contract: on a file opened over a communicator, every call below is
// collective (all ranks call it, on the same object, in the same order) except
// Dataset::write / write_copy, which each rank calls as often as it likes with
// its own selection. Dataset::read is collective, with a per-rank selection
// (Selection::none() for a rank that needs nothing). Set
// H5LOOM_CHECK_COLLECTIVE=1 to have mismatched calls reported instead of hanging.
//
// Deferred writes: Dataset::write only records the request; the data moves at
// the next flush point, and the buffer must stay valid and unchanged until that
// flush point returns. Flush points: File::flush, File::close (and the last
// File/Group/Dataset handle going away), Dataset::read and Dataset::extend on any
// dataset of the same file. Dataset::write_copy copies the buffer at once, so it
// can be reused immediately.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "h5loom/engine.hpp"
#include "h5loom/errors.hpp"
#include "h5loom/selection.hpp"
#include "h5loom/types.hpp"
#include "h5loom/variable_length.hpp"

namespace h5loom {

using Mode = engine::OpenMode;
// How far File::flush goes: Visible (later reads see the writes) or Durable (they also survive a crash).
using FlushLevel = engine::FlushLevel;

struct FileOptions {
  // The ranks that share the file. MPI is initialised on first use if the
  // program has not done it (a program started without mpirun is one rank).
  MPI_Comm comm = MPI_COMM_NULL;  // MPI_COMM_NULL means MPI_COMM_WORLD
  // Engine name or JSON configuration. Empty: $H5LOOM_ENGINE, else "hdf5".
  std::string engine;
};

// Initialises MPI if nobody has (and finalises it at exit). Called by File; call
// it yourself only to learn rank and size before opening a file.
void ensure_mpi();

namespace detail {
struct FileState;
}

// An operation that completes later (File::flush_async, File::close_async).
// With an engine that completes flushes at once a flush's is complete when
// made; with the async wrapper (docs/async.md) the flush completes at wait(),
// or in the next collective call on the file, whichever comes first. A close
// completes at wait() (or File::close()).
class Request {
 public:
  Request() = default;  // a completed request
  Request(Request&&) noexcept = default;
  Request& operator=(Request&&) noexcept = default;
  // Dropping a request does not cancel the operation: an error it meets is
  // raised by the next collective call on the file. A flush's request does
  // not keep its file open: the file closes when its last File, Group or
  // Dataset handle goes (completing the flush), and the request keeps the
  // outcome. A close's request is such a handle: dropped, the close
  // completes (collectively) when the file's last handle goes.
  ~Request() = default;

  // Local and non-blocking: has the operation completed? Never raises.
  bool test();
  // Waits for the operation and raises its error - on every rank: the wait
  // of a flush is collective (every rank waits, in the same order as its
  // other collective calls). Later calls return at once.
  void wait();

 private:
  friend class File;
  Request(std::weak_ptr<detail::FileState> file, std::string filename, engine::RequestPtr request)
      : file_(std::move(file)), filename_(std::move(filename)), request_(std::move(request)) {}
  std::weak_ptr<detail::FileState> file_;
  std::string filename_;  // for the message when the file went first
  engine::RequestPtr request_;
  bool closes_file_ = false;  // File::close_async's, not a flush's
};

// Anything that can carry attributes: the file's root group, a group, a dataset.
class Object {
 public:
  const std::string& path() const { return path_; }
  std::string name() const;  // last path component ("/" for the root)

  void set_attribute(const std::string& name, const AttributeValue& value);
  AttributeValue attribute(const std::string& name) const;
  bool has_attribute(const std::string& name) const;
  std::vector<std::string> attribute_names() const;  // sorted

  // ---- editing attributes (engines declaring "attribute_edit"); collective ----
  // Deletes the attribute `name` (NotFoundError if there is none).
  void remove_attribute(const std::string& name);
  // Renames attribute `from` to `to`: NotFoundError if `from` does not exist,
  // ExistsError if `to` does. The value and its place in creation order stay.
  void rename_attribute(const std::string& from, const std::string& to);
  // Attribute names in the order they were created; set_attribute on an
  // existing name makes it the newest (HDF5 and h5py replace an attribute so).
  std::vector<std::string> attribute_names_in_creation_order() const;

 protected:
  Object(std::shared_ptr<detail::FileState> file, std::string path)
      : file_(std::move(file)), path_(std::move(path)) {}
  detail::FileState& state() const;
  std::shared_ptr<detail::FileState> file_;
  std::string path_;
};

class Dataset : public Object {
 public:
  Datatype dtype() const;
  Dims shape() const;
  Dims max_shape() const;
  Layout layout() const;
  Dims chunks() const;
  std::size_t ndim() const { return shape().size(); }
  // HDF5's null dataspace (DatasetSpec::null_space, h5py's Empty): no
  // elements and no shape - shape() is {0} and never changes.
  bool null_space() const;
  // The filters chunks pass through (DatasetSpec::filters), in the order they apply on writing.
  std::vector<Filter> filters() const;
  // The dimensions' names (DatasetSpec::dim_names); empty if it has none.
  std::vector<std::string> dim_names() const;
  // One element of dtype(): the value of elements never written (empty: zero).
  std::vector<unsigned char> fill_value() const;
  // The named datatype (absolute path) the dataset's type is shared from
  // (DatasetSpec::named_type); empty if its own, or if that type is gone.
  std::string named_type() const;

  // Grows the dataset (collective; a flush point). No dimension may shrink or pass max_shape.
  void extend(const Dims& new_shape);
  // Any shape within max_shape (collective; a flush point). Shrinking needs an
  // engine declaring "shrink": the elements outside the new shape are gone, and
  // growing again shows the fill value there (HDF5's H5Dset_extent).
  void resize(const Dims& new_shape);

  // Deferred write of `n` elements (must equal the selection's element count).
  template <class T>
  void write(const Selection& sel, const T* data, std::size_t n) {
    write_raw(sel, datatype_of<T>(), data, n, /*copy=*/false);
  }
  template <class T>
  void write(const Selection& sel, const std::vector<T>& data) {
    write(sel, data.data(), data.size());
  }
  // A temporary (or moved) vector is kept alive by h5loom until the flush: no copy, no dangling.
  template <class T>
  void write(const Selection& sel, std::vector<T>&& data) {
    auto owned = std::make_shared<std::vector<T>>(std::move(data));
    write_raw(sel, datatype_of<T>(), owned->data(), owned->size(), owned);
  }
  // Copying write: the buffer may be reused as soon as this returns.
  template <class T>
  void write_copy(const Selection& sel, const T* data, std::size_t n) {
    write_raw(sel, datatype_of<T>(), data, n, /*copy=*/true);
  }
  template <class T>
  void write_copy(const Selection& sel, const std::vector<T>& data) {
    write_copy(sel, data.data(), data.size());
  }
  void write_raw(const Selection& sel, Datatype dtype, const void* data, std::size_t n, bool copy);
  // Deferred write whose buffer is owned by `keep_alive`, released after the flush
  // (language bindings pass the object that owns the memory, e.g. a numpy array).
  void write_raw(const Selection& sel, Datatype dtype, const void* data, std::size_t n,
                 std::shared_ptr<const void> keep_alive);

  // Collective read into a dense buffer of `n` elements.
  template <class T>
  void read(const Selection& sel, T* out, std::size_t n) {
    read_raw(sel, datatype_of<T>(), out, n);
  }
  template <class T>
  std::vector<T> read(const Selection& sel = Selection::all()) {
    std::vector<T> out(sel.num_elements(shape()));
    read(sel, out.data(), out.size());
    return out;
  }
  void read_raw(const Selection& sel, Datatype dtype, void* out, std::size_t n);

  // NOT collective (engines declaring "independent_read"): this rank alone
  // reads, seeing what the last flush point made visible - as a rank of an MPI
  // program reads a parameter the others need not know about. This rank must
  // have written nothing since the last flush point (UsageError: flush first).
  template <class T>
  std::vector<T> read_independent(const Selection& sel = Selection::all()) {
    std::vector<T> out(sel.num_elements(shape()));
    read_raw_independent(sel, datatype_of<T>(), out.data(), out.size());
    return out;
  }
  void read_raw_independent(const Selection& sel, Datatype dtype, void* out, std::size_t n);

 private:
  friend class Group;
  Dataset(std::shared_ptr<detail::FileState> f, std::string p) : Object(std::move(f), std::move(p)) {}
  const DatasetInfo& info() const;
  void change_shape(const Dims& new_shape, bool may_shrink, const char* op);
  void enqueue_write(const Selection& sel, Datatype dtype, const void* data, std::size_t n,
                     std::shared_ptr<const void> keep_alive, bool copy);
};

// A named (committed) datatype: a datatype kept in the file under a name, as
// HDF5's H5Tcommit does, that carries attributes (engines declaring the
// conformance group "named_types"). Its datatype never changes.
class NamedDatatype : public Object {
 public:
  const Datatype& dtype() const { return dtype_; }

 private:
  friend class Group;
  NamedDatatype(std::shared_ptr<detail::FileState> f, std::string p, Datatype dtype)
      : Object(std::move(f), std::move(p)), dtype_(std::move(dtype)) {}
  Datatype dtype_;
};

class Group : public Object {
 public:
  // Paths may be relative to this group or absolute; missing parent groups are created.
  Group create_group(const std::string& path);
  Group group(const std::string& path) const;
  Dataset create_dataset(const std::string& path, const DatasetSpec& spec);
  template <class T>
  Dataset create_dataset(const std::string& path, const Dims& shape, const Dims& max_shape = {}) {
    DatasetSpec spec;
    spec.dtype = datatype_of<T>();
    spec.shape = shape;
    spec.max_shape = max_shape;
    return create_dataset(path, spec);
  }
  Dataset dataset(const std::string& path) const;

  bool exists(const std::string& path) const;
  ObjectKind kind(const std::string& path) const;
  std::vector<std::string> list() const;  // member names, sorted
  // Member names in the order they were created (engines declaring the conformance group "order").
  std::vector<std::string> list_in_creation_order() const;
  // HDF5's creation order value of the member `name` (engines declaring
  // "order"): each new member gets the group's next value, from 0; values are
  // not reused while the group has members, and start at 0 again when it has
  // none. A member moved here gets the next value.
  int64_t creation_order(const std::string& name) const;
  // The value the next member gets.
  int64_t next_creation_order() const;

  // ---- links (engines declaring "links"); collective, and flush points ----
  // Deletes the link `path`: a soft link, a hard link, or an object's name.
  // The object goes, a group with everything below it, when its last name
  // does (engines declaring "hard_links" can give objects several names).
  void remove(const std::string& path);
  // Renames `from` to `to` (missing parents of `to` are created; `to` must not exist).
  void move(const std::string& from, const std::string& to);
  // A soft link at `path` to `target` (absolute, or relative to this group; it need not exist).
  // Every other call follows soft links; list() names them; visit() does not follow them.
  void create_soft_link(const std::string& path, const std::string& target);
  // The target if `path` is a soft link.
  std::optional<std::string> soft_link(const std::string& path) const;
  // ---- external links (engines declaring "external_links"); collective ----
  // A link `path` to the object `target` of the file `file` (a name as HDF5
  // takes it: a relative one is found beside this file, then in the working
  // directory). h5loom does not follow it: kind() is None there, list() names
  // it, visit() passes it; remove() and move() handle it like a soft link.
  // HDF5 programs through the VOL connector, h5py and h5dump follow it.
  void create_external_link(const std::string& path, const std::string& file, const std::string& target);
  // The link if `path` is an external link.
  std::optional<ExternalLink> external_link(const std::string& path) const;
  // ---- user-defined links (engines declaring "user_defined_links"); collective ----
  // A link `path` of the user-defined class `link.link_class` (64..255) whose
  // value is `link.value`, kept as given: HDF5's H5Lcreate_ud, which the VOL
  // connector maps here (an external-class value that does not read as an
  // external link, or a class the application registered). h5loom never
  // follows it; kind(), list(), visit(), remove() and move() treat it as they
  // treat an external link. An external-class value that is empty, or starts
  // with a 0 byte without being an external link's, is refused: HDF5 readers
  // would follow it and read past its end (unsafe_user_defined_link).
  void create_user_defined_link(const std::string& path, const UserDefinedLink& link);
  // The link if `path` is a user-defined link.
  std::optional<UserDefinedLink> user_defined_link(const std::string& path) const;
  // ---- hard links (engines declaring "hard_links"); collective ----
  // A second name `path` for the group, dataset or named datatype `target`
  // (absolute, or relative to this group; links followed). Missing parents of
  // `path` are created; `path` must not exist. Every name of an object is
  // equal: writes, attributes and references through either reach the same
  // object, and remove() of one leaves the others.
  void create_hard_link(const std::string& path, const std::string& target);
  // How many names (hard links) the object at `path` has - 1 unless hard links
  // were made - plus the references held on it (below), plus for a named
  // datatype the datasets and attributes sharing it: HDF5's reference count.
  uint64_t link_count(const std::string& path) const;
  // HDF5's H5Oincr_refcount (delta +1) and H5Odecr_refcount (-1): a reference
  // held on the object at `path` besides its names, kept in the file (engines
  // declaring "reference_counts"); returns link_count afterwards. Collective.
  // Releasing a reference the object does not hold raises UsageError, as
  // does, with the log engine, removing an object's last name while it holds one.
  uint64_t change_reference_count(const std::string& path, int delta);
  // ---- named datatypes (engines declaring "named_types"); collective ----
  // Keeps `dtype` in the file as the named datatype `path` (missing parent
  // groups are created; `path` must not exist).
  NamedDatatype commit_datatype(const std::string& path, const Datatype& dtype);
  NamedDatatype named_datatype(const std::string& path) const;

  // ---- object references (engines declaring "references"); collective ----
  // A reference to the group, dataset or named datatype at `path` (soft links followed), to
  // store in datasets or attributes of reference type (Datatype::reference()).
  ObjectRef reference(const std::string& path) const;
  // The absolute path of the object `ref` names. NotFoundError for a null
  // reference, or one whose object is gone (or that this file never made).
  std::string dereference(ObjectRef ref) const;

  // Every group, dataset and named datatype below this group, depth first,
  // members in name order: fn(absolute path, kind). An object with several
  // names is visited once, by the first name met. Collective like list().
  void visit(const std::function<void(const std::string& path, ObjectKind kind)>& fn) const;

 protected:
  Group(std::shared_ptr<detail::FileState> f, std::string p) : Object(std::move(f), std::move(p)) {}
  std::string resolve(const std::string& path) const;
  void create_parents(const std::string& abs_path);
  void require_absent(const std::string& abs_path, const char* what) const;    // else ExistsError
  void require_kind(const std::string& abs_path, ObjectKind want) const;       // else NotFoundError
};

class File : public Group {
 public:
  // A new file (an existing one is truncated) / a new file that must not exist yet.
  static File create(const std::string& filename, const FileOptions& options = {});
  static File create_exclusive(const std::string& filename, const FileOptions& options = {});
  static File open(const std::string& filename, Mode mode = Mode::Read, const FileOptions& options = {});

  File(const File&) = default;
  File& operator=(const File&) = default;
  File(File&&) = default;
  File& operator=(File&&) = default;
  ~File();

  // Collective flush point: every write so far reaches the file, durably by default.
  void flush(FlushLevel level = FlushLevel::Durable);
  // The same flush point, returning at once: the request completes when every
  // write put before it is visible (or durable). Buffers lent with write()
  // stay in use until then. Collective.
  Request flush_async(FlushLevel level = FlushLevel::Durable);
  void close();  // collective; further calls on this file raise UsageError
  // A close that returns at once (collective): the engine may move the file's
  // data meanwhile (the async wrapper does, while the program computes), and
  // the close completes - collectively, raising its error on every rank - at
  // the request's wait() or at close(). Until then every other call on the
  // file raises UsageError and the file is not complete on storage. With
  // engines that cannot close in the background the data moves at wait().
  [[nodiscard]] Request close_async();
  // For a rank that handles an error (the destructor does this while an
  // exception unwinds): closes collectively if every rank does the same within
  // H5LOOM_ERROR_TIMEOUT seconds (10), else ends the job with a message
  // (MPI_Abort; H5LOOM_ABORT_ON_ERROR=0 leaves the file unclosed instead).
  void close_on_error(const std::string& error = {});  // `error`: what happened, for the message
  bool is_open() const;

  const std::string& filename() const;
  std::string engine_name() const;
  // Whether the file's engine stack declares the conformance group `group`
  // ("links", "independent_read", ...: docs/conformance.md).
  bool supports(const std::string& group) const;
  std::string describe() const;  // engine, layout and knobs in effect
  // The size of the file's user block (bytes at its start that are the
  // application's; the engine knob "userblock" makes one): 0 if none.
  uint64_t userblock() const;
  Mode mode() const;
  int rank() const;
  int size() const;
  MPI_Comm comm() const;
  std::size_t pending_writes() const;  // writes this rank made since the last flush point

 private:
  explicit File(std::shared_ptr<detail::FileState> f);
};

}  // namespace h5loom
