// The object model: File, Group, Dataset and attributes. Every argument is
// checked here, once, before exactly one engine call, so that every engine
// reports misuse with the same error class and message (ADIOS2's Put/DoPut idea).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <set>

#include "core/file_state.hpp"
#include "core/mpi_util.hpp"
#include "profile/profiler.hpp"

namespace h5loom {

namespace detail {

std::string normalize_path(const std::string& path) {
  std::string out;
  std::size_t i = 0;
  while (i <= path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    std::string part = path.substr(i, j - i);
    if (part == "..") throw UsageError("path '" + path + "' contains '..', which h5loom does not resolve");
    if (!part.empty() && part != ".") out += "/" + part;
    i = j + 1;
  }
  return out.empty() ? "/" : out;
}

std::string parent_path(const std::string& abs_path) {
  auto pos = abs_path.rfind('/');
  return pos == 0 || pos == std::string::npos ? "/" : abs_path.substr(0, pos);
}

std::string join_path(const std::string& group, const std::string& name) {
  return normalize_path(group + "/" + name);
}

FileState::~FileState() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if ((open || closing) && finalized) {  // a close is collective: it cannot run any more
    std::fprintf(stderr, "h5loom: %s was not closed before MPI was finalised%s\n", describe_file().c_str(),
                 mode == Mode::Read ? "" : "; writes since its last flush are lost");
    open = closing = false, abandoned = true;
    (void)handle.release();  // as in close_on_error
  }
  try {
    if (std::uncaught_exceptions() > 0) close_on_error();  // this rank is leaving because of an error
    else close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "h5loom: error while closing %s: %s\n", describe_file().c_str(), e.what());
  }
  // An engine's background thread may still hold tasks of a file that could
  // not close (their handle leaked): the engine they use is leaked too.
  if (abandoned) (void)engine.release();
}

void FileState::close_on_error(const std::string& error) {
  if (!open && !closing) return;
  double seconds = 10;
  if (const char* t = std::getenv("H5LOOM_ERROR_TIMEOUT"); t && *t) seconds = std::atof(t);
  if (closing_comm == MPI_COMM_NULL || mpi::all_arrive_within(closing_comm, seconds)) {
    if (closing_comm != MPI_COMM_NULL) MPI_Comm_free(&closing_comm);  // the barrier is passed: close() skips it
    return close();
  }
  open = closing = false;
  if (!error.empty()) std::fprintf(stderr, "%s%s", error.c_str(), error.back() == '\n' ? "" : "\n");
  std::fprintf(stderr,
               "h5loom: rank %d leaves %s because of an error while the other ranks go on (they did not close it "
               "within %g s); it is not closed: writes since its last flush are lost%s\n",
               rank, describe_file().c_str(), seconds,
               mpi::abort_on_error() ? "; ending the job (MPI_Abort) so that no rank waits for this one forever"
                                     : " (H5LOOM_ABORT_ON_ERROR=0)");
  std::fflush(stderr);
  if (mpi::abort_on_error()) MPI_Abort(comm, 1);
  abandoned = true;
  (void)handle.release();  // its destructor may be collective: leaked, like the communicator
}

void FileState::require_open(const std::string& what) const {
  if (closing)
    throw UsageError("cannot " + what + ": " + describe_file() +
                     " is closing (close_async): its close completes at the request's wait()");
  if (!open) throw UsageError("cannot " + what + ": " + describe_file() + " is closed");
}

void FileState::agree(const std::function<void()>& check) const {
  if (size > 1 && open) mpi::agree(comm, check);
  else check();
}

void FileState::require_writable(const std::string& what) const {
  require_open(what);
  if (mode == Mode::Read) throw ReadOnlyError("cannot " + what + ": " + describe_file() + " is open read-only");
}

void FileState::flush(engine::FlushLevel level) { engine::wait(start_flush(level)); }

engine::RequestPtr FileState::start_flush(engine::FlushLevel level) {
  unflushed_puts = 0;  // even if it fails: the engine does not replay failed writes
  return engine->flush(*handle, level);
}

void FileState::begin_close() {
  if (!open) return;
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "close_async", filename);
  open = false, closing = true;
  unflushed_puts = 0;
  // An engine raises its errors on every rank; one that failed on one rank
  // alone (no memory) must not leave that rank in close() while the others
  // go on: the ranks agree on the outcome first.
  mpi::CaughtError failed;
  failed.run([&] { engine->begin_close(*handle); });
  if (size > 1) mpi::share_first_error(comm, rank, failed);
  if (!failed.code) return;
  try {  // the close completes now, on every rank
    close();
  } catch (...) {  // the handle is gone; the first error is the one to report
  }
  mpi::throw_error(failed.code, failed.msg);
}

void FileState::close() {
  if (!open && !closing) return;
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "close", filename);
  // Every rank closing tells a rank in close_on_error that it may close too.
  if (closing_comm != MPI_COMM_NULL) mpi::all_arrive_within(closing_comm, -1);
  open = closing = false;  // even if the engine fails below, the handle is gone
  struct FreeComm {
    MPI_Comm& c;
    ~FreeComm() {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized && c != MPI_COMM_NULL) MPI_Comm_free(&c);
    }
  } free_comm{comm}, free_closing{closing_comm};
  unflushed_puts = 0;
  // close() is the engine's last durable flush (engine.hpp): no flush before
  // it, which would place and write the data in a round of its own. The
  // handle goes whatever happens.
  struct Release {
    FileState& s;
    ~Release() {
      s.handle.reset();
      s.forget_datasets();
    }
  } release{*this};
  engine->close(*handle);
}

bool FileState::link_exists(const std::string& abs_path) const {
  return engine->kind(*handle, abs_path) != ObjectKind::None || engine->soft_link(*handle, abs_path) ||
         engine->external_link(*handle, abs_path) || engine->user_defined_link(*handle, abs_path);
}

bool FileState::supports(const std::string& group) const {
  // The engine stack's groups do not change while the file is open; asking
  // it builds a list of strings (a create_dataset asks once).
  if (!conformance_groups) conformance_groups = engine->conformance_groups();
  return std::find(conformance_groups->begin(), conformance_groups->end(), group) != conformance_groups->end();
}

const DatasetInfo& FileState::dataset_info(const std::string& path) {
  auto it = datasets.find(path);
  if (it != datasets.end()) return *it->second;
  refresh_dataset(path);
  return *datasets.at(path);
}

void FileState::refresh_dataset(const std::string& path) {
  DatasetInfo info = engine->dataset_info(*handle, path);
  std::shared_ptr<DatasetInfo>& entry = datasets[path];
  if (!entry && supports("references")) {  // another name of it may be open
    std::weak_ptr<DatasetInfo>& by_token = datasets_by_token[engine->object_token(*handle, path)];
    entry = by_token.lock();
    if (!entry) by_token = entry = std::make_shared<DatasetInfo>();
  }
  if (!entry) entry = std::make_shared<DatasetInfo>();
  *entry = std::move(info);
}

void FileState::forget_datasets() {
  datasets.clear();
  datasets_by_token.clear();
}

}  // namespace detail

using detail::FileState;
using detail::join_path;
using detail::normalize_path;
using detail::kind_name;
using detail::parent_path;

// ---- Object (attributes) ---------------------------------------------------

FileState& Object::state() const { return *file_; }

std::string Object::name() const {
  if (path_ == "/") return "/";
  return path_.substr(path_.rfind('/') + 1);
}

static void check_attribute_name(const std::string& name, const std::string& object, const FileState& f) {
  if (name.empty() || name.find('/') != std::string::npos)
    throw UsageError("invalid attribute name '" + name + "' on '" + object + "' in " + f.describe_file() +
                     " (must be non-empty and contain no '/')");
}

// `named_type` given for a value or dataset of type `dtype` (`what`): a named
// datatype of the file describing that type. Returns its normalised path.
static std::string checked_named_type(const FileState& f, const std::string& named_type, const Datatype& dtype,
                                      const std::string& what) {
  if (!f.supports("named_types"))
    throw UsageError("cannot share named datatype '" + named_type + "' with " + what + ": engine '" +
                     f.engine->name() + "' has no named datatypes (conformance group 'named_types')");
  const std::string abs = detail::normalize_path(named_type);
  if (f.engine->kind(*f.handle, abs) != ObjectKind::Datatype)
    throw NotFoundError("cannot share named datatype '" + abs + "' with " + what + ": there is no named datatype of "
                        "that name in " + f.describe_file());
  const Datatype named = f.engine->named_datatype(*f.handle, abs);
  if (!(named == dtype))
    throw DatatypeError("cannot share named datatype '" + abs + "' with " + what + ": it describes " + named.name() +
                        ", not " + dtype.name());
  return abs;
}

void Object::set_attribute(const std::string& name, const AttributeValue& value) {
  auto& f = state();
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "set_attribute", f.filename, path_);
  std::string named_type;
  f.agree([&] {
    f.require_writable("write attribute '" + name + "' on '" + path_ + "'");
    check_attribute_name(name, path_, f);
    if (!value.named_type().empty() && (value.is_string() || value.is_string_array()))
      throw UsageError("cannot share named datatype '" + value.named_type() + "' with attribute '" + name + "' of '" +
                       path_ + "': a text attribute has its own string type");
    if (!value.named_type().empty())
      named_type = checked_named_type(f, value.named_type(), value.dtype(),
                                      "attribute '" + name + "' of '" + path_ + "'");
  });
  if (named_type == value.named_type()) {
    f.engine->write_attribute(*f.handle, path_, name, value);
  } else {  // (its path normalised)
    AttributeValue shared = value;
    f.engine->write_attribute(*f.handle, path_, name, shared.set_named_type(named_type));
  }
}

AttributeValue Object::attribute(const std::string& name) const {
  auto& f = state();
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "get_attribute", f.filename, path_);
  f.require_open("read attribute '" + name + "' of '" + path_ + "'");
  check_attribute_name(name, path_, f);
  if (!f.engine->has_attribute(*f.handle, path_, name))
    throw NotFoundError("attribute '" + name + "' not found on '" + path_ + "' in " + f.describe_file());
  return f.engine->read_attribute(*f.handle, path_, name);
}

bool Object::has_attribute(const std::string& name) const {
  auto& f = state();
  f.require_open("look up attribute '" + name + "' of '" + path_ + "'");
  check_attribute_name(name, path_, f);
  return f.engine->has_attribute(*f.handle, path_, name);
}

std::vector<std::string> Object::attribute_names() const {
  auto& f = state();
  f.require_open("list attributes of '" + path_ + "'");
  return f.engine->list_attributes(*f.handle, path_);
}

void Object::remove_attribute(const std::string& name) {
  auto& f = state();
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "remove_attribute", f.filename, path_);
  f.agree([&] {
    f.require_writable("delete attribute '" + name + "' of '" + path_ + "'");
    check_attribute_name(name, path_, f);
  });
  if (!f.engine->has_attribute(*f.handle, path_, name))
    throw NotFoundError("cannot delete attribute '" + name + "' of '" + path_ + "': it does not exist in " +
                        f.describe_file());
  f.engine->remove_attribute(*f.handle, path_, name);
}

void Object::rename_attribute(const std::string& from, const std::string& to) {
  auto& f = state();
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "rename_attribute", f.filename, path_);
  f.agree([&] {
    f.require_writable("rename attribute '" + from + "' of '" + path_ + "'");
    check_attribute_name(from, path_, f);
    check_attribute_name(to, path_, f);
  });
  if (!f.engine->has_attribute(*f.handle, path_, from))
    throw NotFoundError("cannot rename attribute '" + from + "' of '" + path_ + "': it does not exist in " +
                        f.describe_file());
  if (from == to) return;
  if (f.engine->has_attribute(*f.handle, path_, to))
    throw ExistsError("cannot rename attribute '" + from + "' of '" + path_ + "' to '" + to +
                      "': an attribute of that name exists in " + f.describe_file());
  f.engine->rename_attribute(*f.handle, path_, from, to);
}

std::vector<std::string> Object::attribute_names_in_creation_order() const {
  auto& f = state();
  f.require_open("list attributes of '" + path_ + "'");
  return f.engine->list_attributes_in_creation_order(*f.handle, path_);
}

// ---- Group -------------------------------------------------------------------

std::string Group::resolve(const std::string& path) const {
  if (path.empty()) throw UsageError("empty path below '" + path_ + "' in " + state().describe_file());
  return path[0] == '/' ? normalize_path(path) : join_path(path_, path);
}

const char* detail::kind_name(ObjectKind k) {
  switch (k) {
    case ObjectKind::Group: return "group";
    case ObjectKind::Dataset: return "dataset";
    case ObjectKind::Datatype: return "named datatype";
    case ObjectKind::None: break;
  }
  return "nothing";
}

void Group::create_parents(const std::string& abs_path) {
  auto& f = state();
  std::string parent = parent_path(abs_path);
  if (parent == "/") return;
  std::string prefix;
  std::size_t i = 1;
  while (i <= parent.size()) {
    std::size_t j = parent.find('/', i);
    if (j == std::string::npos) j = parent.size();
    prefix = parent.substr(0, j);
    switch (const ObjectKind kind = f.engine->kind(*f.handle, prefix)) {
      case ObjectKind::None:
        if (f.engine->soft_link(*f.handle, prefix))
          throw ExistsError("cannot create '" + abs_path + "' in " + f.describe_file() + ": '" + prefix +
                            "' is a soft link whose target does not exist");
        if (f.engine->external_link(*f.handle, prefix))
          throw ExistsError("cannot create '" + abs_path + "' in " + f.describe_file() + ": '" + prefix +
                            "' is an external link (h5loom does not follow them)");
        if (f.engine->user_defined_link(*f.handle, prefix))
          throw ExistsError("cannot create '" + abs_path + "' in " + f.describe_file() + ": '" + prefix +
                            "' is a user-defined link (h5loom does not follow them)");
        f.engine->create_group(*f.handle, prefix);
        break;
      case ObjectKind::Dataset:
      case ObjectKind::Datatype:
        throw ExistsError("cannot create '" + abs_path + "' in " + f.describe_file() + ": '" + prefix + "' is a " +
                          kind_name(kind) + ", not a group");
      case ObjectKind::Group: break;
    }
    i = j + 1;
  }
}

void Group::require_absent(const std::string& abs, const char* what) const {
  auto& f = state();
  if (auto k = f.engine->kind(*f.handle, abs); k != ObjectKind::None)
    throw ExistsError(std::string("cannot create ") + what + " '" + abs + "' in " + f.describe_file() + ": a " +
                      kind_name(k) + " of that name exists");
  if (f.engine->soft_link(*f.handle, abs))  // a soft link whose target does not exist
    throw ExistsError(std::string("cannot create ") + what + " '" + abs + "' in " + f.describe_file() +
                      ": a soft link of that name exists");
  if (f.engine->external_link(*f.handle, abs))
    throw ExistsError(std::string("cannot create ") + what + " '" + abs + "' in " + f.describe_file() +
                      ": an external link of that name exists");
  if (f.engine->user_defined_link(*f.handle, abs))
    throw ExistsError(std::string("cannot create ") + what + " '" + abs + "' in " + f.describe_file() +
                      ": a user-defined link of that name exists");
}

void Group::require_kind(const std::string& abs, ObjectKind want) const {
  auto& f = state();
  auto k = f.engine->kind(*f.handle, abs);
  if (k == ObjectKind::None)
    throw NotFoundError(std::string(kind_name(want)) + " '" + abs + "' not found in " + f.describe_file());
  if (k != want)
    throw NotFoundError("'" + abs + "' in " + f.describe_file() + " is a " + kind_name(k) + ", not a " +
                        kind_name(want));
}

Group Group::create_group(const std::string& path) {
  auto& f = state();
  std::string abs = resolve(path);
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "create_group", f.filename, abs);
  // The agreed checks make no engine call: a wrapper (collcheck) counts
  // engine calls as collective, and they would differ between ranks.
  f.agree([&] {
    f.require_writable("create group '" + abs + "'");
    if (abs == "/") throw ExistsError("group '/' already exists in " + f.describe_file());
  });
  create_parents(abs);
  require_absent(abs, "group");
  f.engine->create_group(*f.handle, abs);
  return Group(file_, abs);
}

Group Group::group(const std::string& path) const {
  auto& f = state();
  std::string abs = resolve(path);
  f.require_open("open group '" + abs + "'");
  require_kind(abs, ObjectKind::Group);
  return Group(file_, abs);
}

static void validate_spec(const DatasetSpec& spec, const std::string& path, const FileState& f) {
  auto where = "dataset '" + path + "' in " + f.describe_file();
  if (!spec.filters.empty()) {
    if (!f.supports("filters"))
      throw UsageError("cannot create " + where + " with filters: engine '" + f.engine->name() +
                       "' does not declare the conformance group 'filters'");
    if (spec.null_space || !spec.external.empty() || !spec.virtual_map.empty())
      throw UsageError("cannot create " + where + " with filters: a dataset with a null dataspace, external storage or a "
                       "virtual mapping has no chunks to filter");
    if (!spec.layout_auto && spec.layout == Layout::Contiguous)
      throw UsageError("cannot create " + where + " with filters and a contiguous layout: filters apply to chunks "
                       "(as in HDF5); make it chunked");
    for (const auto& flt : spec.filters)
      if (flt.id == 0 || flt.id > 65535)
        throw UsageError("cannot create " + where + ": filter id " + std::to_string(flt.id) + " is not 1 to 65535");
  }
  if (!spec.dim_names.empty()) {
    if (!f.supports("dimension_names"))
      throw UsageError("cannot create " + where + " with dimension names: engine '" + f.engine->name() +
                       "' does not declare the conformance group 'dimension_names'");
    if (spec.dim_names.size() != spec.shape.size())
      throw SelectionError("cannot create " + where + ": " + std::to_string(spec.dim_names.size()) +
                           " dimension names for shape " + dims_to_string(spec.shape));
  }
  if (spec.null_space) {
    if (!f.supports("null_spaces"))
      throw UsageError("cannot create " + where + " with a null dataspace: engine '" + f.engine->name() +
                       "' does not declare the conformance group 'null_spaces'");
    if (!spec.shape.empty() || !spec.max_shape.empty() || !spec.chunks.empty())
      throw SelectionError("cannot create " + where + " with a null dataspace and shape " + dims_to_string(spec.shape) +
                           ", max_shape " + dims_to_string(spec.max_shape) + ", chunks " + dims_to_string(spec.chunks) +
                           ": a null dataspace has no shape (leave them empty)");
    if (!spec.layout_auto && spec.layout == Layout::Chunked)
      throw UsageError("cannot create " + where + ": a dataset with a null dataspace cannot be chunked");
    if (!spec.external.empty() || !spec.virtual_map.empty())
      throw UsageError("cannot create " + where + ": a dataset with a null dataspace has no storage to place");
    if (!spec.fill.empty() && spec.fill.size() != datatype_size(spec.dtype))
      throw DatatypeError("cannot create " + where + ": the fill value has " + std::to_string(spec.fill.size()) +
                          " bytes, not one element of " + datatype_name(spec.dtype));
    return;
  }
  if (spec.shape.empty())
    throw SelectionError("cannot create " + where + ": the shape must have at least one dimension");
  if (spec.shape.size() > kMaxRank)
    throw SelectionError("cannot create " + where + ": shape " + dims_to_string(spec.shape) + " has " +
                         std::to_string(spec.shape.size()) + " dimensions; at most " + std::to_string(kMaxRank) +
                         " are allowed (as in HDF5)");
  if (!spec.max_shape.empty()) {
    if (spec.max_shape.size() != spec.shape.size())
      throw SelectionError("cannot create " + where + ": max_shape " + dims_to_string(spec.max_shape) +
                           " and shape " + dims_to_string(spec.shape) + " differ in rank");
    for (std::size_t d = 0; d < spec.shape.size(); ++d)
      if (spec.max_shape[d] < spec.shape[d])
        throw SelectionError("cannot create " + where + ": max_shape " + dims_to_string(spec.max_shape) +
                             " is smaller than shape " + dims_to_string(spec.shape) + " in dimension " +
                             std::to_string(d));
  }
  if (!spec.chunks.empty()) {
    if (spec.chunks.size() != spec.shape.size())
      throw SelectionError("cannot create " + where + ": chunks " + dims_to_string(spec.chunks) +
                           " and shape " + dims_to_string(spec.shape) + " differ in rank");
    for (auto c : spec.chunks)
      if (c == 0) throw SelectionError("cannot create " + where + ": chunks " + dims_to_string(spec.chunks) + " contain a zero");
    if (!spec.layout_auto && spec.layout == Layout::Contiguous)
      throw UsageError("cannot create " + where + ": chunks " + dims_to_string(spec.chunks) +
                       " given for a contiguous layout");
  }
  if (references_with_parts(spec.dtype))
    throw DatatypeError("cannot create " + where + " of type " + datatype_name(spec.dtype) + ": " +
                        kVariableLengthPartsRefused);
  if (!spec.fill.empty() &&
      (spec.dtype.is_varstring() || spec.dtype.has_references() || spec.dtype.has_variable_length_parts()))
    throw DatatypeError("cannot create " + where + ": a " + datatype_name(spec.dtype) +
                        " dataset has no fill value (unwritten elements read as empty strings and sequences, and "
                        "null references)");
  if (!spec.fill.empty() && spec.fill.size() != datatype_size(spec.dtype))
    throw DatatypeError("cannot create " + where + ": the fill value has " + std::to_string(spec.fill.size()) +
                        " bytes, not one element of " + datatype_name(spec.dtype) + " (" +
                        std::to_string(datatype_size(spec.dtype)) + " bytes)");
  bool extendable = !spec.max_shape.empty() && spec.max_shape != spec.shape;
  if (extendable && !spec.layout_auto && spec.layout == Layout::Contiguous)
    throw UsageError("cannot create " + where + ": an extendable dataset (max_shape " +
                     dims_to_string(spec.max_shape) + ") needs a chunked layout, not contiguous");
}

Dataset Group::create_dataset(const std::string& path, const DatasetSpec& given) {
  auto& f = state();
  std::string abs = resolve(path);
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "create_dataset", f.filename, abs);
  DatasetSpec spec = given;
  f.agree([&] {
    f.require_writable("create dataset '" + abs + "'");
    validate_spec(spec, abs, f);
    if (!spec.named_type.empty())
      spec.named_type = checked_named_type(f, spec.named_type, spec.dtype, "dataset '" + abs + "'");
  });
  create_parents(abs);
  require_absent(abs, "dataset");
  if (spec.null_space) {  // to the engine: no elements, in a fixed shape of {0}
    DatasetSpec null = spec;
    null.shape = null.max_shape = {0};
    null.layout = Layout::Contiguous;
    null.layout_auto = false;
    f.engine->create_dataset(*f.handle, abs, null);
  } else if (!spec.filters.empty() && spec.layout_auto) {  // filters apply to chunks: chunked, chunks automatic
    DatasetSpec chunked = spec;
    chunked.layout = Layout::Chunked;
    chunked.layout_auto = false;
    f.engine->create_dataset(*f.handle, abs, chunked);
  } else {
    f.engine->create_dataset(*f.handle, abs, spec);
  }
  f.datasets.erase(abs);  // (a new dataset: no name of it can be open)
  f.refresh_dataset(abs);
  return Dataset(file_, abs);
}

Dataset Group::dataset(const std::string& path) const {
  auto& f = state();
  std::string abs = resolve(path);
  f.require_open("open dataset '" + abs + "'");
  require_kind(abs, ObjectKind::Dataset);
  f.dataset_info(abs);
  return Dataset(file_, abs);
}

bool Group::exists(const std::string& path) const { return kind(path) != ObjectKind::None; }

ObjectKind Group::kind(const std::string& path) const {
  auto& f = state();
  std::string abs = resolve(path);
  f.require_open("look up '" + abs + "'");
  return f.engine->kind(*f.handle, abs);
}

std::vector<std::string> Group::list() const {
  auto& f = state();
  f.require_open("list group '" + path_ + "'");
  return f.engine->list(*f.handle, path_);
}

void Group::visit(const std::function<void(const std::string& path, ObjectKind kind)>& fn) const {
  auto& f = state();
  f.require_open("visit group '" + path_ + "'");  // before the engine call below
  // With hard links an object can be met twice, and a group can hold a name
  // of one above it: objects already met (by token) are skipped.
  const bool several_names = f.supports("hard_links");
  std::set<uint64_t> met;
  if (several_names) met.insert(f.engine->object_token(*f.handle, path_));
  std::function<void(const Group&)> walk = [&](const Group& g) {
    for (const auto& name : g.list()) {
      if (g.soft_link(name)) continue;  // not followed: a link to a group above would never end
      auto k = g.kind(name);
      if (k == ObjectKind::None) continue;  // an external link
      std::string path = g.path_ == "/" ? "/" + name : g.path_ + "/" + name;
      if (several_names && !met.insert(f.engine->object_token(*f.handle, path)).second) continue;
      fn(path, k);
      if (k == ObjectKind::Group) walk(g.group(name));
    }
  };
  walk(*this);
}

// ---- Dataset -------------------------------------------------------------------

const DatasetInfo& Dataset::info() const {
  auto& f = state();
  if (!f.open) f.require_open("use dataset '" + path_ + "'");  // the message only when it fails: a hot path
  return f.dataset_info(path_);
}

Datatype Dataset::dtype() const { return info().dtype; }
Dims Dataset::shape() const { return info().shape; }
Dims Dataset::max_shape() const { return info().max_shape; }
Layout Dataset::layout() const { return info().layout; }
Dims Dataset::chunks() const { return info().chunks; }
bool Dataset::null_space() const { return info().null_space; }
std::vector<Filter> Dataset::filters() const { return info().filters; }
std::vector<std::string> Dataset::dim_names() const { return info().dim_names; }
std::vector<unsigned char> Dataset::fill_value() const { return info().fill; }
std::string Dataset::named_type() const {
  auto& f = state();
  f.require_open("look up the named datatype of '" + path() + "'");
  return f.engine->dataset_info(*f.handle, path()).named_type;  // (asked afresh: the type may have moved)
}

static void check_extend(const FileState& f, const std::string& path, const DatasetInfo& cur, const Dims& new_shape,
                         bool may_shrink = false) {
  auto where = "dataset '" + path + "' in " + f.describe_file();
  if (cur.null_space)
    throw SelectionError("cannot change the shape of " + where + " to " + dims_to_string(new_shape) +
                         ": it has a null dataspace (no elements and no shape, for good)");
  if (new_shape.size() != cur.shape.size())
    throw SelectionError("cannot extend " + where + " of shape " + dims_to_string(cur.shape) + " to " +
                         dims_to_string(new_shape) + ": the rank differs");
  // As in HDF5: a contiguous dataset's bytes are laid out for its one shape.
  if (cur.layout == Layout::Contiguous && new_shape != cur.shape)
    throw SelectionError("cannot change the shape of " + where + " from " + dims_to_string(cur.shape) + " to " +
                         dims_to_string(new_shape) + ": its layout is contiguous (only chunked datasets change shape)");
  for (std::size_t d = 0; d < new_shape.size(); ++d) {
    if (new_shape[d] < cur.shape[d] && !may_shrink)
      throw SelectionError("cannot extend " + where + " from " + dims_to_string(cur.shape) + " to " +
                           dims_to_string(new_shape) + ": dimension " + std::to_string(d) + " would shrink" +
                           " (Dataset::resize shrinks, with engines that declare \"shrink\")");
    if (new_shape[d] > cur.max_shape[d])
      throw SelectionError("cannot extend " + where + " to " + dims_to_string(new_shape) + ": dimension " +
                           std::to_string(d) + " exceeds max_shape " + dims_to_string(cur.max_shape));
  }
}

void Dataset::extend(const Dims& new_shape) { change_shape(new_shape, /*may_shrink=*/false, "extend"); }

void Dataset::resize(const Dims& new_shape) { change_shape(new_shape, /*may_shrink=*/true, "resize"); }

// extend and resize: checked on every rank, a flush point, then one engine call.
void Dataset::change_shape(const Dims& new_shape, bool may_shrink, const char* op) {
  auto& f = state();
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, op, f.filename, path_);
  f.require_writable(std::string(op) + " dataset '" + path_ + "'");
  const DatasetInfo& cur = info();
  f.agree([&] {
    check_extend(f, path_, cur, new_shape, may_shrink);
    bool shrinks = false;
    for (std::size_t d = 0; d < new_shape.size(); ++d) shrinks |= new_shape[d] < cur.shape[d];
    if (shrinks && !f.supports("shrink"))
      throw UsageError("cannot shrink dataset '" + path_ + "' of " + f.describe_file() + " from " +
                       dims_to_string(cur.shape) + " to " + dims_to_string(new_shape) + ": engine '" +
                       f.engine->name() + "' does not declare the conformance group 'shrink' (its datasets only grow)");
  });
  f.flush();
  f.engine->extend(*f.handle, path_, new_shape);
  f.refresh_dataset(path_);
}

// An owned copy of `n` strings for an engine; DatatypeError for a NUL inside
// one (variable-length strings end at their first NUL in HDF5 and C).
static engine::WriteBuffer own_strings(const std::string* data, std::size_t n, const std::string& path) {
  auto copy = std::make_shared<std::vector<std::string>>(data, data + n);
  for (std::size_t i = 0; i < n; ++i)
    if ((*copy)[i].find('\0') != std::string::npos)
      throw DatatypeError("cannot write dataset '" + path + "': string " + std::to_string(i) +
                          " of the buffer contains a NUL byte, which variable-length strings cannot hold");
  const void* p = copy->data();
  return engine::WriteBuffer::owned(std::move(copy), p);
}

// A write's own deep copy of elements with variable-length parts (the
// program may change or free its parts as soon as write() returns), released
// when the engine drops the buffer.
static engine::WriteBuffer own_parts(const Datatype& t, const void* data, std::size_t n) {
  auto copy = std::make_shared<ElementBuffer>(t, n);
  copy_variable_length(t, data, copy->data(), n);
  const void* p = copy->data();
  return engine::WriteBuffer::owned(std::move(copy), p);
}

static void check_transfer(const FileState& f, const std::string& path, const DatasetInfo& info,
                           const Selection& sel, Datatype dtype, const void* buf, std::size_t n,
                           const char* verb) {
  // std::string elements go to variable-length strings of either charset.
  // Memory is in the host's byte order whatever files store (Datatype::in_memory).
  if (dtype.in_memory() != info.dtype.in_memory() && !(dtype.is_varstring() && info.dtype.is_varstring()))
    throw DatatypeError(std::string("cannot ") + verb + " " + datatype_name(dtype) + " data " +
                        (verb[0] == 'w' ? "to" : "from") + " dataset '" + path + "' of type " +
                        datatype_name(info.dtype) + " in " + f.describe_file());
  sel.validate(info.shape, path);
  uint64_t want = sel.num_elements(info.shape);
  if (n != want)
    throw SelectionError(std::string("cannot ") + verb + " dataset '" + path + "' in " + f.describe_file() +
                         ": the buffer holds " + std::to_string(n) + " elements but the selection " +
                         sel.to_string() + " selects " + std::to_string(want));
  if (n > 0 && buf == nullptr)
    throw UsageError(std::string("cannot ") + verb + " dataset '" + path + "': the buffer pointer is null");
}

void Dataset::write_raw(const Selection& sel, Datatype dtype, const void* data, std::size_t n, bool copy) {
  if (!copy || data == nullptr) return write_raw(sel, dtype, data, n, std::shared_ptr<const void>());
  enqueue_write(sel, dtype, data, n, nullptr, /*copy=*/true);
}

void Dataset::write_raw(const Selection& sel, Datatype dtype, const void* data, std::size_t n,
                        std::shared_ptr<const void> keep_alive) {
  enqueue_write(sel, dtype, data, n, std::move(keep_alive), /*copy=*/false);
}

// Every write ends here: checked, then put() to the engine with its buffer's
// lifetime - copied by whoever keeps it (write_copy), borrowed until the next
// flush point (write), or owned (moved vectors, Python arrays).
void Dataset::enqueue_write(const Selection& sel, Datatype dtype, const void* data, std::size_t n,
                            std::shared_ptr<const void> keep_alive, bool copy) {
  auto& f = state();
  // Called once per row by codes that write row by row: no string is built
  // unless something fails or profiling is on.
  if (!f.open || f.mode == Mode::Read) f.require_writable("write dataset '" + path_ + "'");
  // A write is not collective: it must not ask the engine (the other ranks
  // would not), so the shape comes from the cache, which every collective
  // call that opens or changes a dataset fills - and a remove or move empties.
  auto cached = f.datasets.find(path_);
  if (cached == f.datasets.end())
    throw UsageError("cannot write dataset '" + path_ + "' in " + f.describe_file() +
                     ": objects of the file were moved or removed since this handle was made; open it again "
                     "(File::dataset, collective) before writing");
  const DatasetInfo& inf = *cached->second;
  check_transfer(f, path_, inf, sel, dtype, data, n, "write");
  const bool profiling = profile::enabled();
  profile::Scope prof(profile::Layer::Api, profile::Kind::Write, "write", f.filename, path_,
                      profiling ? profile::byte_offset(sel, inf) : 0, uint64_t(n) * datatype_size(dtype));
  if (n == 0) return;  // nothing to move; the rank still joins the collective flush
  engine::Write w;
  w.dataset = path_;
  w.selection = sel;
  w.dtype = dtype;
  w.elements = n;
  using engine::Lifetime;
  using engine::WriteBuffer;
  if (dtype.is_varstring()) {
    // std::string objects cannot be copied as bytes: engines always get their
    // own deep copy (owned), checked once here.
    w.dtype = inf.dtype;
    w.buffer = own_strings(static_cast<const std::string*>(data), n, path_);
  } else if (dtype.has_variable_length_parts()) {
    w.buffer = own_parts(dtype, data, n);  // (pointers cannot be copied as bytes either)
  } else {
    w.buffer = copy ? WriteBuffer::borrowed(data, Lifetime::DuringCall)
               : keep_alive ? WriteBuffer::owned(std::move(keep_alive), data)
                            : WriteBuffer::borrowed(data, Lifetime::UntilFlush);
  }
  f.engine->put(*f.handle, std::move(w));
  ++f.unflushed_puts;
}

void Dataset::read_raw(const Selection& sel, Datatype dtype, void* out, std::size_t n) {
  auto& f = state();
  f.require_open("read dataset '" + path_ + "'");
  const DatasetInfo& inf = info();
  // A read is collective: a bad selection on one rank fails it on all.
  f.agree([&] { check_transfer(f, path_, inf, sel, dtype, out, n, "read"); });
  profile::Scope prof(profile::Layer::Api, profile::Kind::Read, "read", f.filename, path_,
                      profile::byte_offset(sel, info()), uint64_t(n) * datatype_size(dtype));
  f.flush();  // a read sees every write issued before it (visible, not necessarily durable)
  if (dtype.is_varstring()) dtype = inf.dtype;  // into std::string, whatever the charset
  engine::wait(f.engine->read(*f.handle, path_, sel, dtype, out));
}

void Dataset::read_raw_independent(const Selection& sel, Datatype dtype, void* out, std::size_t n) {
  auto& f = state();
  f.require_open("read dataset '" + path_ + "'");
  const DatasetInfo& inf = info();
  check_transfer(f, path_, inf, sel, dtype, out, n, "read");  // this rank's own call: no agreement
  if (f.unflushed_puts > 0)
    throw UsageError("cannot read dataset '" + path_ + "' of " + f.describe_file() + " on one rank alone: this rank " +
                     "has " + std::to_string(f.unflushed_puts) + " write(s) not yet flushed, which the read would " +
                     "not see; flush the file (collective) first, or read collectively");
  profile::Scope prof(profile::Layer::Api, profile::Kind::Read, "read_independent", f.filename, path_,
                      profile::byte_offset(sel, inf), uint64_t(n) * datatype_size(dtype));
  if (dtype.is_varstring()) dtype = inf.dtype;
  engine::wait(f.engine->read_independent(*f.handle, path_, sel, dtype, out));
}

// ---- File -------------------------------------------------------------------------

File::File(std::shared_ptr<FileState> f) : Group(std::move(f), "/") {}
File::~File() = default;

// The engine: the one asked for, else $H5LOOM_ENGINE, else for an existing file
// the one that wrote it, else hdf5. Collective: every rank must ask for the
// same engine, and rank 0's view of the file decides what wrote it (ranks that
// built different engine stacks would wait for each other forever).
static std::string resolve_engine_config(const FileOptions& options, const std::string& filename, Mode mode,
                                         MPI_Comm comm, int rank) {
  std::string want = options.engine;
  if (const char* env = std::getenv("H5LOOM_ENGINE"); want.empty() && env && *env) want = env;
  // Each rank compares its file name, mode and engine with rank 0's (one
  // broadcast); the lowest rank that differs names itself in the error every
  // rank raises.
  // NUL separates the fields: no C string (a path, a JSON configuration) holds one.
  const std::string mine = std::to_string(int(mode)) + '\0' + want + '\0' + filename;
  const std::string first = mpi::bcast_string(comm, 0, mine);
  mpi::agree(comm, [&] {
    if (mine == first) return;
    const std::size_t a = first.find('\0'), b = first.find('\0', a + 1);
    const std::string first_mode = first.substr(0, a), first_want = first.substr(a + 1, b - a - 1),
                      first_file = first.substr(b + 1);
    const std::string who = "rank " + std::to_string(rank);
    if (filename != first_file)
      throw CollectiveMismatchError("cannot open files: " + who + " opens '" + filename + "' and rank 0 '" +
                                    first_file + "' (a file is opened by every rank of the communicator)");
    if (std::to_string(int(mode)) != first_mode)
      throw CollectiveMismatchError("cannot open file '" + filename + "': " + who +
                                    " opens it in another mode than rank 0 (every rank must use the same mode)");
    throw ConfigError("cannot open file '" + filename + "': " + who + " asks for engine '" + want +
                      "' and rank 0 for '" + first_want + "' (every rank must choose the same engine)");
  });
  if (mode != Mode::Read && mode != Mode::ReadWrite) return want.empty() ? engine::kDefaultEngine : want;
  // Which engine's the file is: rank 0 probes every engine (empty: none claims it).
  // (Probing may load plugins and make engines, which may fail: on rank 0
  // alone, so its error is raised on every rank.)
  std::string detected;
  mpi::CaughtError failed;
  if (rank == 0) failed.run([&] { detected = engine::detect_engine(filename); });
  mpi::share_error(comm, 0, failed);
  detected = mpi::bcast_string(comm, 0, detected);
  if (want.empty()) return detected.empty() ? engine::kDefaultEngine : detected;
  if (mode == Mode::ReadWrite && !detected.empty()) {
    // Writing through another engine would replace or corrupt the file: refuse.
    std::string base = engine::make_engine(want)->name();
    base = base.substr(base.rfind('>') + 1);
    if (base != detected)
      throw ConfigError("cannot open file '" + filename + "' for writing with engine '" + base + "': it was written by engine '" +
                        detected + "'. Open it without choosing an engine (unset H5LOOM_ENGINE), or copy it with h5loom convert");
  }
  return want;
}

static std::shared_ptr<FileState> open_state(const std::string& filename, Mode mode, const FileOptions& options) {
  ensure_mpi();
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta,
                      mode == Mode::Create || mode == Mode::CreateExclusive ? "create" : "open", filename);
  if (filename.empty()) throw UsageError("empty file name");
  auto st = std::make_shared<FileState>();
  st->filename = filename;
  st->mode = mode;
  MPI_Comm user = options.comm == MPI_COMM_NULL ? MPI_COMM_WORLD : options.comm;
  MPI_Comm_dup(user, &st->comm);
  MPI_Comm_rank(st->comm, &st->rank);
  MPI_Comm_size(st->comm, &st->size);
  if (st->size > 1) MPI_Comm_dup(st->comm, &st->closing_comm);
  try {
    st->engine = engine::make_engine(resolve_engine_config(options, filename, mode, st->comm, st->rank));
    st->handle = st->engine->open(filename, mode, st->comm);
  } catch (...) {
    MPI_Comm_free(&st->comm);
    if (st->closing_comm != MPI_COMM_NULL) MPI_Comm_free(&st->closing_comm);
    throw;
  }
  st->open = true;
  return st;
}

File File::create(const std::string& filename, const FileOptions& options) {
  return File(open_state(filename, Mode::Create, options));
}

File File::create_exclusive(const std::string& filename, const FileOptions& options) {
  return File(open_state(filename, Mode::CreateExclusive, options));
}

File File::open(const std::string& filename, Mode mode, const FileOptions& options) {
  return File(open_state(filename, mode, options));
}

void File::flush(FlushLevel level) {
  auto& f = state();
  f.require_open("flush");
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "flush", f.filename);
  f.flush(level);
}

Request File::flush_async(FlushLevel level) {
  auto& f = state();
  f.require_open("flush");
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "flush_async", f.filename);
  return Request(file_, f.filename, f.start_flush(level));
}

// A close begun with File::close_async: it completes at wait(), or - if
// the request is dropped - when the last handle of the file goes. It keeps
// the file's state until then.
class CloseRequest final : public engine::Request {
 public:
  explicit CloseRequest(std::shared_ptr<detail::FileState> f) : file_(std::move(f)) {}
  bool test() override { return !file_->closing; }
  void wait() override {
    file_->close();
    if (file_->abandoned)  // left unclosed by close_on_error: nothing was closed
      throw IOError("the close of " + file_->describe_file() +
                    " did not complete: the file was left unclosed on an error (close_on_error); writes since its "
                    "last flush are lost");
  }

 private:
  std::shared_ptr<detail::FileState> file_;
};

Request File::close_async() {
  auto& f = state();
  if (!f.open && !f.closing) return Request();  // closing twice is harmless, as close()
  f.require_open("close");                      // raises for a close already begun
  f.begin_close();
  Request closing(file_, f.filename, std::make_unique<CloseRequest>(file_));
  closing.closes_file_ = true;
  return closing;
}

bool Request::test() { return !request_ || request_->test(); }

void Request::wait() {
  if (!request_) return;
  const std::shared_ptr<detail::FileState> f = file_.lock();
  // A flush of a closing file completes with its close (close_async):
  // nothing else may touch the file until then. The request stays, to be
  // waited for after the close, with the flush's outcome.
  if (f && f->closing && !closes_file_ && !request_->test())
    throw UsageError("cannot wait for a flush of " + f->describe_file() +
                     ": it is closing (close_async), and its close completes the flush: wait for the close");
  engine::RequestPtr r = std::move(request_);  // later waits return at once, whatever this one raises
  // A flush the file's close completed has its outcome (and touches nothing
  // else); one the file lost (left unclosed on an error) cannot complete any more.
  if (!r->test() && (!f || (!f->open && !f->closing)))
    throw UsageError("cannot wait for a flush of file '" + filename_ + "': the file was closed before it completed");
  r->wait();
}

void File::close() { state().close(); }
void File::close_on_error(const std::string& error) { state().close_on_error(error); }
bool File::is_open() const { return state().open; }
const std::string& File::filename() const { return state().filename; }
std::string File::engine_name() const { return state().engine->name(); }

bool File::supports(const std::string& group) const { return state().supports(group); }
uint64_t File::userblock() const {
  auto& f = state();
  f.require_open("read the user block size of " + f.describe_file());
  return f.engine->userblock(*f.handle);
}
std::string File::describe() const {
  auto& f = state();
  f.require_open("describe");
  std::string text;
  for (const auto& [key, value] : f.engine->describe(*f.handle)) text += key + ": " + value + "\n";
  return text;
}
Mode File::mode() const { return state().mode; }
int File::rank() const { return state().rank; }
int File::size() const { return state().size; }
MPI_Comm File::comm() const { return state().comm; }
std::size_t File::pending_writes() const { return state().unflushed_puts; }

}  // namespace h5loom
