// Group operations on links: deleting, renaming, soft links, creation order,
// and object references (which name objects whatever their links).
// As everywhere in the object model, every argument is checked here (the local
// checks agreed on by all ranks) before exactly one engine call.
#include "core/file_state.hpp"
#include "profile/profiler.hpp"

namespace h5loom {

using detail::FileState;

namespace {

// `path` is `base` or below it.
bool at_or_below(const std::string& path, const std::string& base) {
  return path == base || base == "/" || path.compare(0, base.size() + 1, base + "/") == 0;
}

// Shapes cached for datasets are stale once a link moves or goes: not only
// at or below it, but under any soft link that led there. All of them go
// (collectively: every rank makes the call); a dataset handle is opened again
// before its next write (Dataset::enqueue_write).
void forget_datasets(FileState& f) { f.forget_datasets(); }

}  // namespace

std::vector<std::string> Group::list_in_creation_order() const {
  auto& f = state();
  f.require_open("list group '" + path_ + "'");
  return f.engine->list_in_creation_order(*f.handle, path_);
}

int64_t Group::creation_order(const std::string& name) const {
  auto& f = state();
  const std::string abs = resolve(name);
  f.require_open("look up '" + abs + "'");
  if (abs == "/" || !f.link_exists(abs))
    throw NotFoundError("no member '" + abs + "' in " + f.describe_file() + " to give the creation order of");
  return f.engine->creation_order(*f.handle, abs);
}

int64_t Group::next_creation_order() const {
  auto& f = state();
  f.require_open("look up group '" + path_ + "'");
  return f.engine->next_creation_order(*f.handle, path_);
}

std::optional<std::string> Group::soft_link(const std::string& path) const {
  auto& f = state();
  std::string abs = resolve(path);
  f.require_open("look up '" + abs + "'");
  return f.engine->soft_link(*f.handle, abs);
}

void Group::remove(const std::string& path) {
  auto& f = state();
  std::string abs = resolve(path);
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "remove", f.filename, abs);
  f.agree([&] {
    f.require_writable("delete '" + abs + "'");
    if (abs == "/") throw UsageError("cannot delete the root group of " + f.describe_file());
  });
  if (!f.link_exists(abs))
    throw NotFoundError("cannot delete '" + abs + "': nothing of that name in " + f.describe_file());
  f.flush();  // writes put to it land first (they name it)
  f.engine->unlink(*f.handle, abs);
  forget_datasets(f);
}

void Group::move(const std::string& from, const std::string& to) {
  auto& f = state();
  std::string src = resolve(from), dst = resolve(to);
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "move", f.filename, src);
  f.agree([&] {
    f.require_writable("move '" + src + "'");
    if (src == "/") throw UsageError("cannot move the root group of " + f.describe_file());
    if (at_or_below(dst, src))
      throw UsageError("cannot move '" + src + "' to '" + dst + "' in " + f.describe_file() +
                       ": the destination is inside it");
  });
  if (!f.link_exists(src))
    throw NotFoundError("cannot move '" + src + "': nothing of that name in " + f.describe_file());
  require_absent(dst, "link");
  create_parents(dst);
  f.flush();  // writes put to it land under the old name first
  f.engine->move(*f.handle, src, dst);
  forget_datasets(f);
}

void Group::create_soft_link(const std::string& path, const std::string& target) {
  auto& f = state();
  std::string abs = resolve(path);
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "create_soft_link", f.filename, abs);
  std::string target_abs;
  f.agree([&] {
    f.require_writable("create soft link '" + abs + "'");
    if (target.empty()) throw UsageError("cannot create soft link '" + abs + "': the target is empty");
    target_abs = resolve(target);
  });
  create_parents(abs);
  require_absent(abs, "soft link");
  f.engine->create_soft_link(*f.handle, abs, target_abs);
}

void Group::create_hard_link(const std::string& path, const std::string& target) {
  auto& f = state();
  const std::string abs = resolve(path);
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "create_hard_link", f.filename, abs);
  std::string target_abs;
  f.agree([&] {
    f.require_writable("create hard link '" + abs + "'");
    if (target.empty()) throw UsageError("cannot create hard link '" + abs + "': the target is empty");
    target_abs = resolve(target);
    // Before any parent group is made: an engine without them would refuse only after.
    if (!f.supports("hard_links"))
      throw UsageError("cannot create hard link '" + abs + "' in " + f.describe_file() + ": engine '" +
                       f.engine->name() + "' gives each object one name (conformance group 'hard_links')");
  });
  if (f.engine->kind(*f.handle, target_abs) == ObjectKind::None)
    throw NotFoundError("cannot create hard link '" + abs + "' to '" + target_abs + "': nothing of that name in " +
                        f.describe_file());
  require_absent(abs, "hard link");
  create_parents(abs);
  f.engine->create_hard_link(*f.handle, abs, target_abs);
}

uint64_t Group::change_reference_count(const std::string& path, int delta) {
  auto& f = state();
  const std::string abs = resolve(path);
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "change_reference_count", f.filename, abs);
  f.agree([&] {
    f.require_writable("change the reference count of '" + abs + "'");
    if (delta != 1 && delta != -1)
      throw UsageError("cannot change the reference count of '" + abs + "' by " + std::to_string(delta) +
                       ": one at a time (+1 or -1), as H5Oincr_refcount and H5Odecr_refcount do");
    if (!f.supports("reference_counts"))
      throw UsageError("cannot change the reference count of '" + abs + "' in " + f.describe_file() + ": engine '" +
                       f.engine->name() + "' does not declare the conformance group 'reference_counts'");
  });
  if (f.engine->kind(*f.handle, abs) == ObjectKind::None)
    throw NotFoundError("cannot change the reference count of '" + abs + "': nothing of that name in " +
                        f.describe_file());
  return f.engine->change_reference_count(*f.handle, abs, delta);
}

uint64_t Group::link_count(const std::string& path) const {
  auto& f = state();
  const std::string abs = resolve(path);
  f.require_open("count the links to '" + abs + "'");
  if (f.engine->kind(*f.handle, abs) == ObjectKind::None)
    throw NotFoundError("cannot count the links to '" + abs + "': nothing of that name in " + f.describe_file());
  return f.engine->link_count(*f.handle, abs);
}

void Group::create_external_link(const std::string& path, const std::string& file, const std::string& target) {
  auto& f = state();
  const std::string abs = resolve(path);
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "create_external_link", f.filename, abs);
  ExternalLink link;
  f.agree([&] {
    f.require_writable("create external link '" + abs + "'");
    if (file.empty()) throw UsageError("cannot create external link '" + abs + "': the file name is empty");
    if (target.empty()) throw UsageError("cannot create external link '" + abs + "': the target path is empty");
    link.file = file;
    link.path = detail::normalize_path(target);  // a path in that file: from its root
    if (!f.supports("external_links"))
      throw UsageError("cannot create external link '" + abs + "' in " + f.describe_file() + ": engine '" +
                       f.engine->name() + "' has no external links (conformance group 'external_links')");
  });
  require_absent(abs, "external link");
  create_parents(abs);
  f.engine->create_external_link(*f.handle, abs, link);
}

std::optional<ExternalLink> Group::external_link(const std::string& path) const {
  auto& f = state();
  const std::string abs = resolve(path);
  f.require_open("look up '" + abs + "'");
  return f.engine->external_link(*f.handle, abs);
}

void Group::create_user_defined_link(const std::string& path, const UserDefinedLink& link) {
  auto& f = state();
  const std::string abs = resolve(path);
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "create_user_defined_link", f.filename, abs);
  f.agree([&] {
    f.require_writable("create user-defined link '" + abs + "'");
    if (link.link_class < kUserDefinedLinkClassMin || link.link_class > kUserDefinedLinkClassMax)
      throw UsageError("cannot create user-defined link '" + abs + "': its class " + std::to_string(link.link_class) +
                       " is not a user-defined link class (" + std::to_string(kUserDefinedLinkClassMin) + " to " +
                       std::to_string(kUserDefinedLinkClassMax) + ")");
    if (!link.value)
      throw UsageError("cannot create user-defined link '" + abs + "': it has no value (a link its engine could not "
                       "describe cannot be copied)");
    if (const std::string why = unsafe_user_defined_link(link); !why.empty())
      throw UsageError("cannot create user-defined link '" + abs + "': " + why);
    if (!f.supports("user_defined_links"))
      throw UsageError("cannot create user-defined link '" + abs + "' in " + f.describe_file() + ": engine '" +
                       f.engine->name() + "' has no user-defined links (conformance group 'user_defined_links')");
  });
  require_absent(abs, "user-defined link");
  create_parents(abs);
  f.engine->create_user_defined_link(*f.handle, abs, link);
}

std::optional<UserDefinedLink> Group::user_defined_link(const std::string& path) const {
  auto& f = state();
  const std::string abs = resolve(path);
  f.require_open("look up '" + abs + "'");
  return f.engine->user_defined_link(*f.handle, abs);
}

ObjectRef Group::reference(const std::string& path) const {
  auto& f = state();
  std::string abs = resolve(path);
  f.require_open("make a reference to '" + abs + "'");
  if (f.engine->kind(*f.handle, abs) == ObjectKind::None)
    throw NotFoundError("cannot make a reference to '" + abs + "': nothing of that name in " +
                        f.describe_file());
  return ObjectRef{f.engine->object_token(*f.handle, abs)};
}

std::string Group::dereference(ObjectRef ref) const {
  auto& f = state();
  f.require_open("resolve a reference");
  if (ref.is_null()) throw NotFoundError("cannot resolve a null reference in " + f.describe_file());
  return f.engine->object_path(*f.handle, ref.token);
}

}  // namespace h5loom
