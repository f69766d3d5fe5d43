// The parts of the engine interface that are not pure declarations: owned
// write buffers, verify reports, and the storage operations' defaults (a file
// that is one local file).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/memory_copy.hpp"
#include "h5loom/engine.hpp"

namespace h5loom::engine {

WriteBuffer WriteBuffer::keep(std::size_t bytes) const {
  if (lifetime_ == Lifetime::Owned) return *this;
  auto copy = std::shared_ptr<unsigned char[]>(new unsigned char[bytes > 0 ? bytes : 1]);
  if (bytes > 0) copy_bytes(copy.get(), data_, bytes);
  const void* p = copy.get();
  return owned(std::shared_ptr<const void>(copy, p), p);
}

Write Write::kept() const {
  Write w = *this;
  w.buffer = buffer.keep(bytes());
  return w;
}

uint64_t VerifyReport::count(const std::string& key) const {
  for (const auto& [k, n] : counts)
    if (k == key) return n;
  return 0;
}

void VerifyReport::add(const std::string& key, uint64_t n) {
  for (auto& [k, have] : counts)
    if (k == key) {
      have += n;
      return;
    }
  counts.emplace_back(key, n);
}

std::vector<StoragePiece> Engine::storage(const std::string& location) const {
  struct stat st {};
  if (::stat(location.c_str(), &st) != 0) return {};
  return {{location, static_cast<uint64_t>(st.st_size)}};
}

void Engine::remove(const std::string& location) const {
  auto pieces = storage(location);
  if (pieces.empty()) throw NotFoundError("cannot remove file '" + location + "': nothing is there");
  for (const auto& p : pieces)
    if (::unlink(p.location.c_str()) != 0 && errno != ENOENT)
      throw IOError("cannot remove '" + p.location + "' (part of file '" + location + "'): " + std::strerror(errno));
}

namespace {
[[noreturn]] void unsupported(const Engine& e, const std::string& what, const char* group) {
  throw UsageError("engine '" + e.name() + "' cannot " + what + " (it does not declare the conformance group '" +
                   group + "')");
}
}  // namespace

void Engine::unlink(FileHandle&, const std::string& path) { unsupported(*this, "delete '" + path + "'", "links"); }
void Engine::move(FileHandle&, const std::string& from, const std::string& to) {
  unsupported(*this, "move '" + from + "' to '" + to + "'", "links");
}
void Engine::create_soft_link(FileHandle&, const std::string& path, const std::string&) {
  unsupported(*this, "create the soft link '" + path + "'", "links");
}
std::optional<std::string> Engine::soft_link(FileHandle&, const std::string&) { return std::nullopt; }
void Engine::create_hard_link(FileHandle&, const std::string& path, const std::string& target) {
  unsupported(*this, "create the hard link '" + path + "' to '" + target + "'", "hard_links");
}
uint64_t Engine::link_count(FileHandle&, const std::string&) { return 1; }
uint64_t Engine::change_reference_count(FileHandle&, const std::string& path, int) {
  unsupported(*this, "change the reference count of '" + path + "'", "reference_counts");
}
uint64_t Engine::userblock(FileHandle&) { return 0; }
void Engine::create_external_link(FileHandle&, const std::string& path, const ExternalLink&) {
  unsupported(*this, "create the external link '" + path + "'", "external_links");
}
std::optional<ExternalLink> Engine::external_link(FileHandle&, const std::string&) { return std::nullopt; }
void Engine::create_user_defined_link(FileHandle&, const std::string& path, const UserDefinedLink&) {
  unsupported(*this, "create the user-defined link '" + path + "'", "user_defined_links");
}
std::optional<UserDefinedLink> Engine::user_defined_link(FileHandle&, const std::string&) { return std::nullopt; }
int64_t Engine::creation_order(FileHandle& f, const std::string& path) {
  const auto slash = path.rfind('/');
  const auto names = list_in_creation_order(f, slash == 0 ? "/" : path.substr(0, slash));
  const auto at = std::find(names.begin(), names.end(), path.substr(slash + 1));
  return at == names.end() ? -1 : int64_t(at - names.begin());
}
int64_t Engine::next_creation_order(FileHandle& f, const std::string& group) {
  return int64_t(list_in_creation_order(f, group).size());
}
std::vector<std::string> Engine::list_in_creation_order(FileHandle&, const std::string& group) {
  unsupported(*this, "list group '" + group + "' in creation order", "order");
}
RequestPtr Engine::read_independent(FileHandle&, const std::string& path, const Selection&, Datatype, void*) {
  unsupported(*this, "read dataset '" + path + "' on one rank alone", "independent_read");
}
void Engine::remove_attribute(FileHandle&, const std::string& object, const std::string& name) {
  unsupported(*this, "delete attribute '" + name + "' of '" + object + "'", "attribute_edit");
}
void Engine::rename_attribute(FileHandle&, const std::string& object, const std::string& from, const std::string&) {
  unsupported(*this, "rename attribute '" + from + "' of '" + object + "'", "attribute_edit");
}
std::vector<std::string> Engine::list_attributes_in_creation_order(FileHandle&, const std::string& object) {
  unsupported(*this, "list the attributes of '" + object + "' in creation order", "attribute_edit");
}
void Engine::commit_datatype(FileHandle&, const std::string& path, const Datatype&) {
  unsupported(*this, "create the named datatype '" + path + "'", "named_types");
}
Datatype Engine::named_datatype(FileHandle&, const std::string& path) {
  unsupported(*this, "open the named datatype '" + path + "'", "named_types");
}
uint64_t Engine::object_token(FileHandle&, const std::string& path) {
  unsupported(*this, "make a reference to '" + path + "'", "references");
}
std::string Engine::object_path(FileHandle&, uint64_t token) {
  unsupported(*this, "resolve reference " + std::to_string(token), "references");
}

}  // namespace h5loom::engine
