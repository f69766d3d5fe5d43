// Named (committed) datatypes: a datatype kept in the file under a name
// (HDF5's H5Tcommit), for engines declaring the conformance group
// "named_types". As everywhere in the object model, the arguments are checked
// here (agreed on by all ranks) before exactly one engine call.
#include "core/file_state.hpp"
#include "profile/profiler.hpp"

namespace h5loom {

using detail::FileState;

NamedDatatype Group::commit_datatype(const std::string& path, const Datatype& dtype) {
  auto& f = state();
  std::string abs = resolve(path);
  profile::Scope prof(profile::Layer::Api, profile::Kind::Meta, "commit_datatype", f.filename, abs);
  f.agree([&] {
    f.require_writable("create named datatype '" + abs + "'");
    if (abs == "/") throw ExistsError("cannot create named datatype '/' in " + f.describe_file() + ": it is the root group");
    // Before any parent group is made: an engine without them would refuse only after.
    if (!f.supports("named_types"))
      throw UsageError("cannot create named datatype '" + abs + "' in " + f.describe_file() + ": engine '" +
                       f.engine->name() + "' has no named datatypes (conformance group 'named_types')");
  });
  create_parents(abs);
  require_absent(abs, "named datatype");
  f.engine->commit_datatype(*f.handle, abs, dtype);
  return NamedDatatype(file_, abs, dtype);
}

NamedDatatype Group::named_datatype(const std::string& path) const {
  auto& f = state();
  std::string abs = resolve(path);
  f.require_open("open named datatype '" + abs + "'");
  require_kind(abs, ObjectKind::Datatype);
  return NamedDatatype(file_, abs, f.engine->named_datatype(*f.handle, abs));
}

}  // namespace h5loom
