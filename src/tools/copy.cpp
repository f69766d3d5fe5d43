// Copying objects between files, or within one (include/h5loom/tools.hpp):
// `h5loom convert` copies a whole file, copy_object one object with what is
// below it (HDF5's H5Ocopy, h5py's Group.copy). Written against the public
// object model, so that it works for every pair of engines.
#include <algorithm>
#include <map>

#include "core/file_state.hpp"  // normalize_path
#include "h5loom/tools.hpp"

namespace h5loom {

namespace {

std::string join(const std::string& group, const std::string& name) { return group == "/" ? "/" + name : group + "/" + name; }

bool at_or_below(const std::string& path, const std::string& base) {
  return path == base || base == "/" || path.compare(0, base.size() + 1, base + "/") == 0;
}

// Moves a dataset's values in rounds of slabs along the first dimension, each
// rank a slab of at most ~64 MiB per round.
void copy_values(Dataset& from, Dataset& to, File& to_file, int rank, int size) {
  const Dims shape = from.shape();
  if (shape.empty() || product(shape) == 0) return;
  const uint64_t row_bytes = product(shape) / shape[0] * datatype_size(from.dtype());
  const uint64_t rows_per_rank = std::max<uint64_t>(1, (64ull << 20) / std::max<uint64_t>(row_bytes, 1));
  ElementBuffer buf;
  for (uint64_t round_start = 0; round_start < shape[0]; round_start += rows_per_rank * uint64_t(size)) {
    uint64_t r0 = std::min(shape[0], round_start + uint64_t(rank) * rows_per_rank);
    uint64_t r1 = std::min(shape[0], r0 + rows_per_rank);
    Dims start(shape.size(), 0), count = shape;
    start[0] = r0, count[0] = r1 - r0;
    Selection sel = r1 > r0 ? Selection::box(start, count) : Selection::none();
    uint64_t n = r1 > r0 ? product(count) : 0;
    buf.resize(from.dtype(), n);
    from.read_raw(sel, from.dtype(), buf.data(), n);
    to.write_raw(sel, from.dtype(), buf.data(), n, /*copy=*/false);
    to_file.flush();  // buf is reused next round
  }
}

// Copies the object at `from_root` (with everything below it) to `to_root`.
// Collective: every rank makes the same calls. Objects first, in each group's
// creation order where the engine keeps it, with the attributes that hold no
// references; then, once every object exists, what refers to objects:
// attributes and datasets holding references. A reference to an object
// copied along names its copy; any other one stays as it is within one file
// and becomes null in another.
class Copier {
 public:
  Copier(File& from, File& to, const CopyOptions& options)
      : from_(from), to_(to), options_(options), same_file_(&from == &to || from.filename() == to.filename()),
        tokens_(from.supports("references")), order_(from.supports("order")) {}

  void copy(const std::string& from_root, const std::string& to_root) {
    copy_node(from_root, to_root, 0);
    if (!options_.attributes) return;
    for (const auto& [src, dst] : made_) {
      const ObjectKind kind = from_.kind(src);
      if (kind == ObjectKind::Group) {
        auto g = to_.group(dst);
        copy_attributes(from_.group(src), g, true);
      } else if (kind == ObjectKind::Datatype) {
        auto t = to_.named_datatype(dst);
        copy_attributes(from_.named_datatype(src), t, true);
      } else {
        auto ds = from_.dataset(src);
        auto copy = to_.dataset(dst);
        copy_attributes(ds, copy, true);
      }
    }
    for (const auto& [src, dst] : made_)
      if (from_.kind(src) == ObjectKind::Dataset && from_.dataset(src).dtype().has_references()) {
        auto ds = from_.dataset(src);
        auto copy = to_.dataset(dst);
        copy_reference_values(ds, copy);
      }
  }

 private:
  void copy_node(const std::string& src, const std::string& dst, int depth) {
    if (tokens_) {  // an object met again (a hard link): another name of its copy
      auto [first, fresh] = copies_.emplace(from_.reference(src).token, dst);
      if (!fresh) {
        if (!to_.supports("hard_links"))
          throw UsageError("cannot copy '" + src + "' of " + describe(from_) + " to '" + dst + "' of " + describe(to_) +
                           ": it is another name of '" + first->second + "' there, and engine '" + to_.engine_name() +
                           "' gives each object one name (conformance group 'hard_links')");
        to_.create_hard_link(dst, first->second);
        return;
      }
    }
    made_.emplace_back(src, dst);
    switch (from_.kind(src)) {
      case ObjectKind::Group: {
        auto g = dst == "/" ? to_.group("/") : to_.create_group(dst);
        if (options_.attributes) copy_attributes(from_.group(src), g, false);
        if (options_.shallow && depth > 0) return;
        auto source = from_.group(src);
        for (const auto& name : in_creation_order([&] { return source.list_in_creation_order(); },
                                                  [&] { return source.list(); })) {
          const std::string child = join(src, name);
          if (auto external = source.external_link(name)) {  // kept: h5loom does not follow them
            g.create_external_link(name, external->file, external->path);
            continue;
          }
          if (auto ud = source.user_defined_link(name)) {  // kept as they are, like external links
            g.create_user_defined_link(name, *ud);
            continue;
          }
          auto target = source.soft_link(name);
          if (!target || (options_.expand_soft_links && from_.kind(child) != ObjectKind::None))
            copy_node(child, join(dst, name), depth + 1);
          else
            g.create_soft_link(name, *target);
        }
        return;
      }
      case ObjectKind::Datatype: {
        const auto type = from_.named_datatype(src);
        auto t = to_.commit_datatype(dst, type.dtype());  // an engine without named datatypes refuses, naming it
        if (options_.attributes) copy_attributes(type, t, false);
        return;
      }
      case ObjectKind::Dataset: {
        auto ds = from_.dataset(src);
        DatasetSpec spec;
        spec.dtype = ds.dtype();
        spec.shape = ds.shape();
        spec.max_shape = ds.max_shape();
        spec.layout = ds.layout();
        spec.layout_auto = false;
        spec.chunks = ds.chunks();
        spec.fill = ds.fill_value();
        spec.filters = ds.filters();
        if (to_.supports("dimension_names")) spec.dim_names = ds.dim_names();  // else they go (no engine but zarr keeps them yet)
        if (ds.null_space()) {  // no shape to give: the copy has none either
          spec.null_space = true;
          spec.shape.clear(), spec.max_shape.clear(), spec.chunks.clear();
          spec.layout_auto = true;
        }
        auto copy = to_.create_dataset(dst, spec);
        if (options_.attributes) copy_attributes(ds, copy, false);
        if (!spec.dtype.has_references()) copy_values(ds, copy, to_, from_.rank(), from_.size());
        return;
      }
      case ObjectKind::None: break;
    }
    throw NotFoundError("cannot copy '" + src + "': nothing of that name in " + describe(from_));
  }

  // `with_references`: copy only the attributes that hold references (false: only the others).
  void copy_attributes(const Object& from, Object& to, bool with_references) {
    for (const auto& name : in_creation_order([&] { return from.attribute_names_in_creation_order(); },
                                              [&] { return from.attribute_names(); })) {
      AttributeValue v = from.attribute(name);
      const bool has = v.is_numeric() && holds_references(v.dtype());  // (inside sequences too: DIMENSION_LIST)
      if (has != with_references) continue;
      if (has) v = v.with_references_translated([&](ObjectRef& r) { translate_one(r); });
      // The value and its type, not the sharing of a named datatype (which
      // may not be copied, or not yet), as for datasets.
      v.set_named_type({});
      to.set_attribute(name, v);
    }
  }

  // A dataset holding references: every rank reads it whole and translates it
  // (the same calls on every rank), rank 0 writes it. Such datasets are small.
  void copy_reference_values(Dataset& from, Dataset& to) {
    const uint64_t n = product(from.shape());
    ElementBuffer buf(from.dtype(), n);
    from.read_raw(Selection::all(), from.dtype(), buf.data(), n);
    translate(from.dtype(), buf.data(), n);
    if (from_.rank() == 0 && n) to.write_raw(Selection::all(), from.dtype(), buf.data(), n, /*copy=*/false);
    to_.flush();
  }

  void translate(const Datatype& t, void* data, std::size_t count) {
    for_each_reference(t, data, count, [&](ObjectRef& r) { translate_one(r); });
  }

  void translate_one(ObjectRef& r) {
    if (r.is_null()) return;
    auto known = translated_.find(r.token);
    if (known == translated_.end()) {
      ObjectRef out = same_file_ ? r : ObjectRef{};
      if (auto copied = copies_.find(r.token); copied != copies_.end()) out = to_.reference(copied->second);
      known = translated_.emplace(r.token, out).first;
    }
    r = known->second;
  }

  static std::string describe(const File& f) { return "file '" + f.filename() + "'"; }

  // Names in creation order where the source keeps it, else by name (a group
  // or object of a file written elsewhere without creation-order tracking:
  // its listing in creation order raises UsageError, alike on every rank).
  template <class InOrder, class ByName>
  std::vector<std::string> in_creation_order(InOrder in_order, ByName by_name) const {
    if (!order_) return by_name();
    try {
      return in_order();
    } catch (const UsageError&) {
      return by_name();
    }
  }

  File& from_;
  File& to_;
  const CopyOptions options_;
  const bool same_file_, tokens_, order_;
  std::map<uint64_t, std::string> copies_;  // source token -> path of its copy
  std::vector<std::pair<std::string, std::string>> made_;  // (source, copy) of every object made
  std::map<uint64_t, ObjectRef> translated_;
};

}  // namespace

void copy_object(File& from, const std::string& from_path, File& to, const std::string& to_path,
                 const CopyOptions& options) {
  // Relative paths are taken from the root; ".." is refused (UsageError).
  const std::string src = detail::normalize_path(from_path), dst = detail::normalize_path(to_path);
  if (from.kind(src) == ObjectKind::None)
    throw NotFoundError("cannot copy '" + src + "': nothing of that name in file '" + from.filename() + "'");
  if (dst == "/" || to.kind(dst) != ObjectKind::None || to.soft_link(dst))
    throw ExistsError("cannot copy '" + src + "' to '" + dst + "' in file '" + to.filename() +
                      "': something of that name exists");
  // Inside it also through a link: a group of the destination's path is the source.
  bool inside = false;
  if (&from == &to || from.filename() == to.filename()) {
    inside = at_or_below(dst, src);
    if (!inside && from.supports("references") && from.kind(src) == ObjectKind::Group) {
      const ObjectRef source = from.reference(src);
      for (std::string up = dst; !inside && up != "/";) {
        up = up.substr(0, std::max<std::size_t>(1, up.rfind('/')));
        inside = to.kind(up) == ObjectKind::Group && to.reference(up) == source;
      }
    }
  }
  if (inside)
    throw UsageError("cannot copy '" + src + "' to '" + dst + "' in file '" + to.filename() +
                     "': the destination is inside it");
  Copier(from, to, options).copy(src, dst);
}

void convert_file(const std::string& in, const std::string& out, const FileOptions& in_options,
                  const FileOptions& out_options) {
  FileOptions out_opts = out_options;
  if (out_opts.engine.empty()) out_opts.engine = "hdf5";
  if (out_opts.comm == MPI_COMM_NULL) out_opts.comm = in_options.comm;
  auto src = File::open(in, Mode::Read, in_options);
  auto dst = File::create(out, out_opts);
  Copier(src, dst, {}).copy("/", "/");
  dst.close();
}

}  // namespace h5loom
