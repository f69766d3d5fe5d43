// ForwardingEngine: every operation goes through around() to the inner engine.
#include "h5loom/forwarding_engine.hpp"

#include <sstream>

namespace h5loom::engine {

namespace {
const char* level_name(FlushLevel l) { return l == FlushLevel::Durable ? "durable" : "visible"; }
std::string quoted(const std::string& s) { return "'" + s + "'"; }
}  // namespace

std::string describe_spec(const DatasetSpec& s) {
  std::ostringstream os;
  os << datatype_name(s.dtype) << dims_to_string(s.shape);
  if (!s.max_shape.empty()) os << " max " << dims_to_string(s.max_shape);
  if (!s.layout_auto) os << (s.layout == Layout::Chunked ? " chunked" : " contiguous");
  if (!s.chunks.empty()) os << " chunks " << dims_to_string(s.chunks);
  if (!s.fill.empty() && s.fill.size() == datatype_size(s.dtype)) os << " fill " << format_element(s.dtype, s.fill.data());
  return os.str();
}

std::string describe_value(const AttributeValue& v) {
  std::string type = v.is_numeric() ? datatype_name(v.dtype()) : v.is_string() ? "string" : "strings";
  return type + " " + v.to_string();
}

ForwardingEngine::ForwardingEngine(std::unique_ptr<Engine> inner) : inner_(std::move(inner)) {}

std::string ForwardingEngine::name() const { return wrapper_name() + ">" + inner_->name(); }
std::vector<std::string> ForwardingEngine::conformance_groups() const { return inner_->conformance_groups(); }
Claim ForwardingEngine::probe(const std::string& location) const noexcept { return inner_->probe(location); }
std::vector<StoragePiece> ForwardingEngine::storage(const std::string& location) const {
  return inner_->storage(location);
}
void ForwardingEngine::remove(const std::string& location) const { inner_->remove(location); }
std::optional<VerifyReport> ForwardingEngine::verify(const std::string& location) const {
  return inner_->verify(location);
}

std::unique_ptr<FileHandle> ForwardingEngine::open(const std::string& location, OpenMode mode, MPI_Comm comm) {
  auto f = make_file();
  f->location = location;
  f->mode = mode;
  f->comm = comm;
  static const char* modes[] = {"read", "readwrite", "create", "create_exclusive"};
  around(*f, Call{"open", location, true, [&] { return quoted(location) + ", " + modes[int(mode)]; }},
         [&] { f->inner = inner_->open(location, mode, comm); });
  return f;
}

RequestPtr ForwardingEngine::flush(FileHandle& fh, FlushLevel level) {
  auto& f = wrapped(fh);
  RequestPtr r;
  around(f, Call{"flush", f.location, true, [&] { return std::string(level_name(level)); }},
         [&] { r = inner_->flush(*f.inner, level); });
  return r;
}

void ForwardingEngine::prepare_flush(FileHandle& fh, FlushLevel level) {
  auto& f = wrapped(fh);
  around(f, Call{"prepare_flush", f.location, false, [&] { return std::string(level_name(level)); }},
         [&] { inner_->prepare_flush(*f.inner, level); });
}

RequestPtr ForwardingEngine::flush_in_stages(FileHandle& fh) {
  auto& f = wrapped(fh);
  RequestPtr r;
  around(f, Call{"flush_in_stages", f.location, true, [] { return std::string("durable"); }},
         [&] { r = inner_->flush_in_stages(*f.inner); });
  return r;
}

void ForwardingEngine::close(FileHandle& fh) {
  auto& f = wrapped(fh);
  around(f, Call{"close", f.location, true, [] { return std::string(); }}, [&] { inner_->close(*f.inner); });
}

void ForwardingEngine::begin_close(FileHandle& fh) {
  auto& f = wrapped(fh);
  around(f, Call{"begin_close", f.location, true, [] { return std::string(); }},
         [&] { inner_->begin_close(*f.inner); });
}

Properties ForwardingEngine::describe(FileHandle& fh) {
  auto& f = wrapped(fh);
  Properties p;
  around(f, Call{"describe", f.location, true, [] { return std::string(); }},
         [&] { p = inner_->describe(*f.inner); });
  p.emplace_back("wrapper", wrapper_name());
  return p;
}

ObjectKind ForwardingEngine::kind(FileHandle& fh, const std::string& path) {
  auto& f = wrapped(fh);
  ObjectKind k = ObjectKind::None;
  around(f, Call{"kind", path, true, [&] { return quoted(path); }}, [&] { k = inner_->kind(*f.inner, path); });
  return k;
}

void ForwardingEngine::create_group(FileHandle& fh, const std::string& path) {
  auto& f = wrapped(fh);
  around(f, Call{"create_group", path, true, [&] { return quoted(path); }},
         [&] { inner_->create_group(*f.inner, path); });
}

std::vector<std::string> ForwardingEngine::list(FileHandle& fh, const std::string& group) {
  auto& f = wrapped(fh);
  std::vector<std::string> names;
  around(f, Call{"list", group, true, [&] { return quoted(group); }}, [&] { names = inner_->list(*f.inner, group); });
  return names;
}

void ForwardingEngine::unlink(FileHandle& fh, const std::string& path) {
  auto& f = wrapped(fh);
  around(f, Call{"unlink", path, true, [&] { return quoted(path); }}, [&] { inner_->unlink(*f.inner, path); });
}

void ForwardingEngine::move(FileHandle& fh, const std::string& from, const std::string& to) {
  auto& f = wrapped(fh);
  around(f, Call{"move", from, true, [&] { return quoted(from) + ", " + quoted(to); }},
         [&] { inner_->move(*f.inner, from, to); });
}

void ForwardingEngine::create_soft_link(FileHandle& fh, const std::string& path, const std::string& target) {
  auto& f = wrapped(fh);
  around(f, Call{"create_soft_link", path, true, [&] { return quoted(path) + ", " + quoted(target); }},
         [&] { inner_->create_soft_link(*f.inner, path, target); });
}

std::optional<std::string> ForwardingEngine::soft_link(FileHandle& fh, const std::string& path) {
  auto& f = wrapped(fh);
  std::optional<std::string> target;
  around(f, Call{"soft_link", path, true, [&] { return quoted(path); }},
         [&] { target = inner_->soft_link(*f.inner, path); });
  return target;
}

uint64_t ForwardingEngine::userblock(FileHandle& fh) { return inner_->userblock(*wrapped(fh).inner); }

void ForwardingEngine::create_hard_link(FileHandle& fh, const std::string& path, const std::string& target) {
  auto& f = wrapped(fh);
  around(f, Call{"create_hard_link", path, true, [&] { return quoted(path) + ", " + quoted(target); }},
         [&] { inner_->create_hard_link(*f.inner, path, target); });
}

uint64_t ForwardingEngine::link_count(FileHandle& fh, const std::string& path) {
  auto& f = wrapped(fh);
  uint64_t count = 0;
  around(f, Call{"link_count", path, true, [&] { return quoted(path); }},
         [&] { count = inner_->link_count(*f.inner, path); });
  return count;
}

uint64_t ForwardingEngine::change_reference_count(FileHandle& fh, const std::string& path, int delta) {
  auto& f = wrapped(fh);
  uint64_t count = 0;
  around(f, Call{"change_reference_count", path, true, [&] { return quoted(path) + ", " + std::to_string(delta); }},
         [&] { count = inner_->change_reference_count(*f.inner, path, delta); });
  return count;
}

void ForwardingEngine::create_external_link(FileHandle& fh, const std::string& path, const ExternalLink& link) {
  auto& f = wrapped(fh);
  around(f,
         Call{"create_external_link", path, true, [&] { return quoted(path) + ", " + quoted(link.file) + ", " + quoted(link.path); }},
         [&] { inner_->create_external_link(*f.inner, path, link); });
}

std::optional<ExternalLink> ForwardingEngine::external_link(FileHandle& fh, const std::string& path) {
  auto& f = wrapped(fh);
  std::optional<ExternalLink> link;
  around(f, Call{"external_link", path, true, [&] { return quoted(path); }},
         [&] { link = inner_->external_link(*f.inner, path); });
  return link;
}

void ForwardingEngine::create_user_defined_link(FileHandle& fh, const std::string& path, const UserDefinedLink& link) {
  auto& f = wrapped(fh);
  around(f,
         Call{"create_user_defined_link", path, true,
              [&] { return quoted(path) + ", class " + std::to_string(link.link_class) + ", " +
                           std::to_string(link.value ? link.value->size() : 0) + " bytes"; }},
         [&] { inner_->create_user_defined_link(*f.inner, path, link); });
}

std::optional<UserDefinedLink> ForwardingEngine::user_defined_link(FileHandle& fh, const std::string& path) {
  auto& f = wrapped(fh);
  std::optional<UserDefinedLink> link;
  around(f, Call{"user_defined_link", path, true, [&] { return quoted(path); }},
         [&] { link = inner_->user_defined_link(*f.inner, path); });
  return link;
}

std::vector<std::string> ForwardingEngine::list_in_creation_order(FileHandle& fh, const std::string& group) {
  auto& f = wrapped(fh);
  std::vector<std::string> names;
  around(f, Call{"list_in_creation_order", group, true, [&] { return quoted(group); }},
         [&] { names = inner_->list_in_creation_order(*f.inner, group); });
  return names;
}

int64_t ForwardingEngine::creation_order(FileHandle& fh, const std::string& path) {
  auto& f = wrapped(fh);
  int64_t value = 0;
  around(f, Call{"creation_order", path, true, [&] { return quoted(path); }},
         [&] { value = inner_->creation_order(*f.inner, path); });
  return value;
}

int64_t ForwardingEngine::next_creation_order(FileHandle& fh, const std::string& group) {
  auto& f = wrapped(fh);
  int64_t value = 0;
  around(f, Call{"next_creation_order", group, true, [&] { return quoted(group); }},
         [&] { value = inner_->next_creation_order(*f.inner, group); });
  return value;
}

uint64_t ForwardingEngine::object_token(FileHandle& fh, const std::string& path) {
  auto& f = wrapped(fh);
  uint64_t token = 0;
  around(f, Call{"object_token", path, true, [&] { return quoted(path); }},
         [&] { token = inner_->object_token(*f.inner, path); });
  return token;
}

void ForwardingEngine::commit_datatype(FileHandle& fh, const std::string& path, const Datatype& dtype) {
  auto& f = wrapped(fh);
  around(f, Call{"commit_datatype", path, true, [&] { return quoted(path) + ", " + dtype.name(); }},
         [&] { inner_->commit_datatype(*f.inner, path, dtype); });
}

Datatype ForwardingEngine::named_datatype(FileHandle& fh, const std::string& path) {
  auto& f = wrapped(fh);
  Datatype dtype;
  around(f, Call{"named_datatype", path, true, [&] { return quoted(path); }},
         [&] { dtype = inner_->named_datatype(*f.inner, path); });
  return dtype;
}

std::string ForwardingEngine::object_path(FileHandle& fh, uint64_t token) {
  auto& f = wrapped(fh);
  std::string path;
  around(f, Call{"object_path", "", true, [&] { return std::to_string(token); }},
         [&] { path = inner_->object_path(*f.inner, token); });
  return path;
}

void ForwardingEngine::create_dataset(FileHandle& fh, const std::string& path, const DatasetSpec& spec) {
  auto& f = wrapped(fh);
  around(f, Call{"create_dataset", path, true, [&] { return quoted(path) + ", " + describe_spec(spec); }},
         [&] { inner_->create_dataset(*f.inner, path, spec); });
}

DatasetInfo ForwardingEngine::dataset_info(FileHandle& fh, const std::string& path) {
  auto& f = wrapped(fh);
  DatasetInfo info;
  around(f, Call{"dataset_info", path, true, [&] { return quoted(path); }},
         [&] { info = inner_->dataset_info(*f.inner, path); });
  return info;
}

void ForwardingEngine::extend(FileHandle& fh, const std::string& path, const Dims& new_shape) {
  auto& f = wrapped(fh);
  around(f, Call{"extend", path, true, [&] { return quoted(path) + ", " + dims_to_string(new_shape); }},
         [&] { inner_->extend(*f.inner, path, new_shape); });
}

void ForwardingEngine::put(FileHandle& fh, Write write) {
  auto& f = wrapped(fh);
  // The call's description outlives the move of `write` into the inner call.
  const std::string dataset = write.dataset;
  const Selection selection = write.selection;
  around(f, Call{"put", dataset, false, [&] { return quoted(dataset) + ", " + selection.to_string(); }},
         [&] { inner_->put(*f.inner, std::move(write)); });
}

RequestPtr ForwardingEngine::read(FileHandle& fh, const std::string& path, const Selection& sel, Datatype dtype,
                                  void* out) {
  auto& f = wrapped(fh);
  RequestPtr r;
  // Selections differ between ranks: only the dataset is part of the call.
  around(f, Call{"read", path, true, [&] { return quoted(path); }},
         [&] { r = inner_->read(*f.inner, path, sel, dtype, out); });
  return r;
}

bool ForwardingEngine::has_attribute(FileHandle& fh, const std::string& object, const std::string& name) {
  auto& f = wrapped(fh);
  bool has = false;
  around(f, Call{"has_attribute", object, true, [&] { return quoted(object) + ", " + quoted(name); }},
         [&] { has = inner_->has_attribute(*f.inner, object, name); });
  return has;
}

void ForwardingEngine::write_attribute(FileHandle& fh, const std::string& object, const std::string& name,
                                       const AttributeValue& value) {
  auto& f = wrapped(fh);
  around(f,
         Call{"write_attribute", object, true,
              [&] { return quoted(object) + ", " + quoted(name) + ", " + describe_value(value); }},
         [&] { inner_->write_attribute(*f.inner, object, name, value); });
}

AttributeValue ForwardingEngine::read_attribute(FileHandle& fh, const std::string& object, const std::string& name) {
  auto& f = wrapped(fh);
  AttributeValue v;
  around(f, Call{"read_attribute", object, true, [&] { return quoted(object) + ", " + quoted(name); }},
         [&] { v = inner_->read_attribute(*f.inner, object, name); });
  return v;
}

std::vector<std::string> ForwardingEngine::list_attributes(FileHandle& fh, const std::string& object) {
  auto& f = wrapped(fh);
  std::vector<std::string> names;
  around(f, Call{"list_attributes", object, true, [&] { return quoted(object); }},
         [&] { names = inner_->list_attributes(*f.inner, object); });
  return names;
}

RequestPtr ForwardingEngine::read_independent(FileHandle& fh, const std::string& path, const Selection& sel,
                                              Datatype dtype, void* out) {
  auto& f = wrapped(fh);
  RequestPtr r;
  // Not collective: one rank's call, as put().
  around(f, Call{"read_independent", path, false, [&] { return quoted(path) + ", " + sel.to_string(); }},
         [&] { r = inner_->read_independent(*f.inner, path, sel, dtype, out); });
  return r;
}

void ForwardingEngine::remove_attribute(FileHandle& fh, const std::string& object, const std::string& name) {
  auto& f = wrapped(fh);
  around(f, Call{"remove_attribute", object, true, [&] { return quoted(object) + ", " + quoted(name); }},
         [&] { inner_->remove_attribute(*f.inner, object, name); });
}

void ForwardingEngine::rename_attribute(FileHandle& fh, const std::string& object, const std::string& from,
                                        const std::string& to) {
  auto& f = wrapped(fh);
  around(f,
         Call{"rename_attribute", object, true,
              [&] { return quoted(object) + ", " + quoted(from) + ", " + quoted(to); }},
         [&] { inner_->rename_attribute(*f.inner, object, from, to); });
}

std::vector<std::string> ForwardingEngine::list_attributes_in_creation_order(FileHandle& fh,
                                                                             const std::string& object) {
  auto& f = wrapped(fh);
  std::vector<std::string> names;
  around(f, Call{"list_attributes_in_creation_order", object, true, [&] { return quoted(object); }},
         [&] { names = inner_->list_attributes_in_creation_order(*f.inner, object); });
  return names;
}

}  // namespace h5loom::engine
