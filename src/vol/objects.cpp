// Objects and where they are: HDF5's location parameters (by self, name,
// index, token) as absolute h5loom paths; tokens; object info; and the H5O
// callbacks (open, get, exists, lookup, visit, flush).
#include <algorithm>
#include <cstring>
#include <functional>
#include <set>

#include "h5loom/tools.hpp"
#include "vol/vol.hpp"

namespace h5loom::vol {

// ---- the objects HDF5 holds ---------------------------------------------------------

Object::Object(H5I_type_t t, std::shared_ptr<OpenFile> f, std::string p)
    : Handle(Route::Engine), type(t), file(std::move(f)), path(std::move(p)) {
  if (type == H5I_DATASET && !path.empty()) dataset = file->file.dataset(path);
  serial = file->next_serial++;
  opener = serial;
  file->live[serial] = this;
}

Object::Object(H5I_type_t t, const Object& from, std::string p) : Object(t, from.file, std::move(p)) {
  if (t != H5I_FILE) opener = from.opener;
}

Object::~Object() {
  file->live.erase(serial);
  dataset.reset();
  if (access_plist >= 0) H5Pclose(access_plist);
  if (create_plist >= 0) H5Pclose(create_plist);
}

Dataset& Object::ds() {
  if (!dataset)
    throw UsageError("an anonymous dataset (H5Dcreate_anon) of file '" + file->name +
                     "' holds no data until H5Olink gives it a name");
  return *dataset;
}

// The hidden group goes with its last parked dataset. Like every move and
// removal, these reopen the other open datasets' handles (links_changed).
static void drop_empty_parking(OpenFile& f) {
  if (f.file.kind(kParkedGroup) != ObjectKind::Group || !f.file.group(kParkedGroup).list().empty()) return;
  f.file.remove(kParkedGroup);
  links_changed(f, kParkedGroup, "");
}

void drop_parked(Object& o) {
  if (!o.anonymous || o.anonymous->parked.empty() || !o.file->file.is_open()) return;
  const std::string parked = o.anonymous->parked;
  o.anonymous.reset();
  o.h5().remove(parked);
  links_changed(*o.file, parked, "");
  drop_empty_parking(*o.file);
}

void Object::name_anonymous(const std::string& p) {
  if (anonymous && !anonymous->parked.empty()) {  // made already: it moves to its name
    const std::string parked = anonymous->parked;
    h5().move(parked, p);  // (if this fails, the object stays parked, whole)
    anonymous.reset();
    links_changed(*file, parked, p);  // this object's path and handle, and attributes opened on it
    drop_empty_parking(*file);
    return;
  }
  switch (type) {
    case H5I_GROUP: h5().create_group(p); break;
    case H5I_DATASET: h5().create_dataset(p, anonymous->dataset); break;
    case H5I_DATATYPE: h5().commit_datatype(p, anonymous->dtype); break;
    default: throw UsageError("an anonymous object of HDF5 type " + std::to_string(int(type)));
  }
  path = p;
  anonymous.reset();
  if (type == H5I_DATASET) dataset = h5().dataset(path);
  if (type == H5I_GROUP && create_plist >= 0) {  // H5Gget_create_plist finds it by path
    hid_t& kept = file->group_plists[path];
    if (kept > 0) H5Pclose(kept);
    kept = H5Pcopy(create_plist);
  }
}

void Object::keep_access(hid_t plist) {
  if (plist != H5P_DEFAULT && plist >= 0) access_plist = H5Pcopy(plist);
}

void Object::keep_create(hid_t plist) {
  if (plist != H5P_DEFAULT && plist >= 0) create_plist = H5Pcopy(plist);
}

static bool at_or_below(const std::string& path, const std::string& base) {
  return path == base || base == "/" || path.compare(0, base.size() + 1, base + "/") == 0;
}

std::map<uint64_t, uint64_t> open_objects_below(OpenFile& f, const std::string& path) {
  std::map<uint64_t, uint64_t> tokens;
  if (!f.hard_links) return tokens;
  for (auto& [serial, obj] : f.live)
    if (!obj->path.empty() && at_or_below(obj->path, path) && f.file.kind(obj->path) != ObjectKind::None)
      tokens[serial] = f.file.reference(obj->path).token;
  return tokens;
}

void links_changed(OpenFile& f, const std::string& from, const std::string& to,
                   const std::map<uint64_t, uint64_t>& kept) {
  // Kept group creation properties follow their groups, or go with them.
  if (!from.empty() && from != "/") {
    std::map<std::string, hid_t> kept;
    for (auto& [path, gcpl] : f.group_plists) {
      if (!at_or_below(path, from)) kept.emplace(path, gcpl);
      else if (to.empty()) H5Pclose(gcpl);
      else kept.emplace(to + path.substr(from.size()), gcpl);
    }
    f.group_plists.swap(kept);
  }
  for (auto& [serial, obj] : f.live) {
    if (obj->path.empty()) continue;  // anonymous: no link to change
    if (!from.empty() && !to.empty() && from != "/" && at_or_below(obj->path, from))
      obj->path = to + obj->path.substr(from.size());
    if (to.empty() && at_or_below(obj->path, from)) obj->unlinked = true;  // unless another name keeps it
    // With hard links a path can change without being below `from` (it went
    // through another name of what moved): each object is found by its token.
    if (auto token = kept.find(serial); token != kept.end()) {
      const ObjectKind k = f.file.kind(obj->path);
      if (k != ObjectKind::None && f.file.reference(obj->path).token == token->second) {
        obj->unlinked = false;
      } else {
        try {
          obj->path = f.file.dereference(ObjectRef{token->second});
          obj->unlinked = false;
        } catch (const NotFoundError&) {  // gone with the link
          obj->unlinked = true;
        }
      }
    }
    if (at_or_below(obj->path, kParkedGroup)) obj->unlinked = true;  // kept, nameless (delete_link)
    if (obj->type == H5I_DATASET && f.file.kind(obj->path) == ObjectKind::Dataset)
      obj->dataset = f.file.dataset(obj->path);
  }
}

// Whether deleting the hard link `path` leaves an open object without a name:
// it is the object's only name and a handle of it, or of something below it,
// is open on some rank (every rank gets the same answer: collective).
static bool orphans_open_objects(OpenFile& f, const std::string& path) {
  if (!f.hard_links || f.file.kind(path) == ObjectKind::None || f.file.soft_link(path) ||
      (f.external_links && f.file.external_link(path)) || (f.user_defined_links && f.file.user_defined_link(path)) ||
      f.file.link_count(path) != 1)
    return false;
  int open_here = 0;
  for (auto& [serial, obj] : f.live)
    if (!obj->path.empty() && at_or_below(obj->path, path)) open_here = 1;
  if (f.file.size() > 1) MPI_Allreduce(MPI_IN_PLACE, &open_here, 1, MPI_INT, MPI_MAX, f.file.comm());
  return open_here != 0;
}

void delete_link(OpenFile& f, const std::string& path) {
  const auto open = open_objects_below(f, "/");
  if (!orphans_open_objects(f, path)) {
    f.file.remove(path);
    links_changed(f, path, "", open);
    return;
  }
  if (f.file.kind(kParkedGroup) == ObjectKind::None) f.file.create_group(kParkedGroup);
  std::string parked;
  do parked = std::string(kParkedGroup) + "/" + std::to_string(f.next_parked++);
  while (f.file.kind(parked) != ObjectKind::None);
  f.file.move(path, parked);
  links_changed(f, path, parked, open);
}

void relink_parked(Object& o, const std::string& path) {
  OpenFile& f = *o.file;
  const std::string from = o.path;
  if (parent_of(from) == kParkedGroup) {  // the parked link itself: it moves to its new name
    const auto open = open_objects_below(f, "/");
    f.file.move(from, path);
    links_changed(f, from, path, open);
    drop_empty_parking(f);
  } else {  // below a parked group: a new name; the group stays parked until the file closes
    f.file.create_hard_link(path, from);
    o.path = path;
    o.unlinked = false;
  }
}

void drop_parking(OpenFile& f) {
  if (f.file.mode() != Mode::Read && f.file.kind(kParkedGroup) == ObjectKind::Group) f.file.remove(kParkedGroup);
}

// ---- names -----------------------------------------------------------------------------

std::string join(const std::string& base, const std::string& name) {
  std::string out = !name.empty() && name[0] == '/' ? "" : (base == "/" ? "" : base);
  std::size_t i = 0;
  while (i <= name.size()) {
    std::size_t j = name.find('/', i);
    if (j == std::string::npos) j = name.size();
    std::string part = name.substr(i, j - i);
    if (part == "..") throw UsageError("name '" + name + "' contains '..', which h5loom does not resolve");
    if (!part.empty() && part != ".") out += "/" + part;
    i = j + 1;
  }
  return out.empty() ? "/" : out;
}

std::string parent_of(const std::string& path) {
  auto pos = path.rfind('/');
  return pos == 0 || pos == std::string::npos ? "/" : path.substr(0, pos);
}

std::string last_name(const std::string& path) {
  return path == "/" ? "/" : path.substr(path.rfind('/') + 1);
}

std::vector<std::string> members(OpenFile& f, const std::string& path, H5_index_t index, H5_iter_order_t order) {
  if (f.file.kind(path) != ObjectKind::Group) throw NotFoundError("group '" + path + "' not found in file '" + f.name + "'");
  std::vector<std::string> names;
  if (index == H5_INDEX_CRT_ORDER) {
    if (!f.order)
      throw UsageError("creation order is not tracked by this engine (group '" + path + "' in file '" + f.name + "')");
    names = f.file.group(path).list_in_creation_order();
  } else if (index == H5_INDEX_NAME) {
    names = f.file.group(path).list();
    std::sort(names.begin(), names.end());  // HDF5's name index: strcmp order
  } else {
    throw UsageError("invalid index type " + std::to_string(int(index)));
  }
  if (path == "/") {  // the parking group is the connector's, not the application's
    const auto parking = std::find(names.begin(), names.end(), std::string(kParkedGroup + 1));
    if (parking != names.end()) names.erase(parking);
  }
  if (order == H5_ITER_DEC) std::reverse(names.begin(), names.end());
  else if (order != H5_ITER_INC && order != H5_ITER_NATIVE)
    throw UsageError("invalid iteration order " + std::to_string(int(order)));
  return names;
}

std::string member_by_index(OpenFile& f, const std::string& path, H5_index_t index, H5_iter_order_t order,
                            hsize_t n) {
  auto names = members(f, path, index, order);
  if (n >= names.size())
    throw NotFoundError("index " + std::to_string(n) + " is out of range: group '" + path + "' has " +
                        std::to_string(names.size()) + " members (file '" + f.name + "')");
  return join(path, names[n]);
}

// ---- tokens -------------------------------------------------------------------------------

H5O_token_t token_of(OpenFile& f, const std::string& path) {
  uint64_t t = 0;
  if (f.references) {
    t = f.file.reference(path).token;
  } else {
    if (f.file.kind(path) == ObjectKind::None) throw NotFoundError("'" + path + "' not found in file '" + f.name + "'");
    // FNV-1a of the path: stable while the object keeps its name.
    t = 1469598103934665603ull;
    for (unsigned char c : path) t = (t ^ c) * 1099511628211ull;
    if (t == 0) t = 1;
    f.path_tokens[t] = path;
  }
  H5O_token_t token;
  std::memset(&token, 0, sizeof token);
  std::memcpy(token.__data, &t, sizeof t);
  return token;
}

std::string path_of_token(OpenFile& f, const H5O_token_t& token) {
  uint64_t t = 0;
  std::memcpy(&t, token.__data, sizeof t);
  if (f.references) return f.file.dereference(ObjectRef{t});
  auto it = f.path_tokens.find(t);
  if (it == f.path_tokens.end()) throw NotFoundError("no object of file '" + f.name + "' has this token");
  return it->second;
}

// ---- locations -------------------------------------------------------------------------------

std::string locate(const Object& obj, const H5VL_loc_params_t* loc) {
  if (!loc) return obj.path;
  switch (loc->type) {
    case H5VL_OBJECT_BY_SELF: return obj.path;
    case H5VL_OBJECT_BY_NAME:
      check_plist(loc->loc_data.loc_by_name.lapl_id, H5P_LINK_ACCESS, "link access");
      return join(obj.path, loc->loc_data.loc_by_name.name);
    case H5VL_OBJECT_BY_IDX: {
      const auto& by = loc->loc_data.loc_by_idx;
      check_plist(by.lapl_id, H5P_LINK_ACCESS, "link access");
      return member_by_index(*obj.file, join(obj.path, by.name), by.idx_type, by.order, by.n);
    }
    case H5VL_OBJECT_BY_TOKEN: return path_of_token(*obj.file, *loc->loc_data.loc_by_token.token);
  }
  throw UsageError("unknown location type " + std::to_string(int(loc->type)));
}

Located follow_external_links(const std::shared_ptr<OpenFile>& start, const std::string& path) {
  Located at{start, path};
  for (int hops = 0; hops <= 16; ++hops) {  // HDF5's default limit on links followed
    if (!at.file->external_links || at.file->file.kind(at.path) != ObjectKind::None) return at;
    bool followed = false;
    for (std::size_t end = at.path.find('/', 1);; end = at.path.find('/', end + 1)) {
      const std::string prefix = at.path.substr(0, end);
      if (auto link = at.file->file.external_link(prefix)) {
        const std::string rest = end == std::string::npos ? "" : at.path.substr(end);
        at.file = open_linked_file(*at.file, link->file);
        at.path = link->path == "/" ? (rest.empty() ? "/" : rest) : link->path + rest;
        followed = true;
        break;
      }
      if (end == std::string::npos || at.file->file.kind(prefix) == ObjectKind::None) break;
    }
    if (!followed) return at;
  }
  throw NotFoundError("more than 16 external links on the way to '" + path + "' from file '" + start->name + "'");
}

Object* opened_object(H5I_type_t type, const Object& from, const Located& at) {
  return at.file == from.file ? new Object(type, from, at.path) : new Object(type, at.file, at.path);
}

void require_parent(OpenFile& f, const std::string& path, hid_t lcpl) {
  const std::string parent = parent_of(path);
  const ObjectKind k = f.file.kind(parent);
  if (k == ObjectKind::Group) return;
  if (k == ObjectKind::Dataset)
    throw NotFoundError("cannot create '" + path + "': '" + parent + "' is a dataset, not a group (file '" + f.name + "')");
  unsigned intermediate = 0;
  if (lcpl != H5P_DEFAULT && lcpl >= 0 && H5Pget_create_intermediate_group(lcpl, &intermediate) < 0) intermediate = 0;
  if (!intermediate)
    throw NotFoundError("cannot create '" + path + "': its group '" + parent + "' does not exist in file '" + f.name +
                        "' (set H5Pset_create_intermediate_group to create it)");
}

hid_t register_object(const Object& like, H5I_type_t type, const std::string& path) {
  auto* obj = new Object(type, like, path);
  hid_t id = H5VLwrap_register(obj, type);
  if (id < 0) delete obj;
  return id;
}

void check_plist(hid_t plist, hid_t cls, const char* what) {
  if (plist == H5P_DEFAULT) return;
  if (H5Iget_type(plist) != H5I_GENPROP_LST || H5Pisa_class(plist, cls) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw UsageError(std::string("invalid ") + what + " property list");
  }
}

H5I_type_t id_type_of(ObjectKind k) {
  switch (k) {
    case ObjectKind::Group: return H5I_GROUP;
    case ObjectKind::Dataset: return H5I_DATASET;
    case ObjectKind::Datatype: return H5I_DATATYPE;
    case ObjectKind::None: break;
  }
  return H5I_BADID;
}

H5O_type_t object_type_of(ObjectKind k) {
  switch (k) {
    case ObjectKind::Group: return H5O_TYPE_GROUP;
    case ObjectKind::Dataset: return H5O_TYPE_DATASET;
    case ObjectKind::Datatype: return H5O_TYPE_NAMED_DATATYPE;
    case ObjectKind::None: break;
  }
  return H5O_TYPE_UNKNOWN;
}

void object_info(OpenFile& f, const std::string& path, unsigned fields, H5O_info2_t* info) {
  std::memset(info, 0, sizeof *info);
  const ObjectKind k = f.file.kind(path);
  if (k == ObjectKind::None) throw NotFoundError("object '" + path + "' not found in file '" + f.name + "'");
  if (fields & H5O_INFO_BASIC) {
    info->fileno = f.fileno;
    info->token = token_of(f, path);
    info->type = object_type_of(k);
    info->rc = f.hard_links || f.reference_counts ? unsigned(f.file.link_count(path)) : 1;
  }
  if (fields & H5O_INFO_NUM_ATTRS) {
    if (k == ObjectKind::Group) info->num_attrs = f.file.group(path).attribute_names().size();
    else if (k == ObjectKind::Datatype) info->num_attrs = f.file.named_datatype(path).attribute_names().size();
    else info->num_attrs = f.file.dataset(path).attribute_names().size();
  }
  // H5O_INFO_TIME: h5loom keeps no times; they stay 0 (HDF5's "not tracked").
}

// ---- H5O callbacks ------------------------------------------------------------------------------

namespace {

Object& as_object(void* obj) { return *static_cast<Object*>(obj); }

void* object_open(void* obj, const H5VL_loc_params_t* loc, H5I_type_t* opened_type, hid_t, void**) {
  return H5LOOM_VOL_GUARD((void*)nullptr, {
    Object& o = as_object(obj);
    const Located at = follow_external_links(o.file, locate(o, loc));
    const H5I_type_t type = id_type_of(at.file->file.kind(at.path));
    if (type == H5I_BADID) throw NotFoundError("object '" + at.path + "' not found in file '" + at.file->name + "'");
    if (type == H5I_DATATYPE) require_named_types(*at.file);
    *opened_type = type;
    return (void*)opened_object(type, o, at);
  });
}

// H5Ocopy over the object model's copy_object (tools.hpp), within a file or
// between two engine-route files; the flags h5loom has an equivalent of are
// honoured, the others refused.
herr_t object_copy(void* src_obj, const H5VL_loc_params_t* loc1, const char* src_name, void* dst_obj,
                   const H5VL_loc_params_t* loc2, const char* dst_name, hid_t ocpypl, hid_t lcpl, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& src = as_object(src_obj);
    if (!dst_obj || on_native_route(dst_obj))
      throw UsageError("cannot copy an object between files of different engines (h5loom convert copies files)");
    Object& dst = as_object(dst_obj);
    const std::string from = join(locate(src, loc1), src_name ? src_name : "");
    const std::string to = join(locate(dst, loc2), dst_name ? dst_name : "");
    unsigned flags = 0;
    if (ocpypl != H5P_DEFAULT && ocpypl >= 0 && H5Pget_copy_object(ocpypl, &flags) < 0)
      throw UsageError("invalid object copy property list");
    constexpr unsigned kKnown = H5O_COPY_SHALLOW_HIERARCHY_FLAG | H5O_COPY_WITHOUT_ATTR_FLAG |
                                H5O_COPY_EXPAND_SOFT_LINK_FLAG | H5O_COPY_PRESERVE_NULL_FLAG |
                                H5O_COPY_MERGE_COMMITTED_DTYPE_FLAG;
    if (flags & ~kKnown)
      unsupported("object copy flags " + std::to_string(flags & ~kKnown) +
                  " (external links, references or committed datatypes expanded)");
    CopyOptions options;
    options.shallow = flags & H5O_COPY_SHALLOW_HIERARCHY_FLAG;
    options.attributes = !(flags & H5O_COPY_WITHOUT_ATTR_FLAG);
    options.expand_soft_links = flags & H5O_COPY_EXPAND_SOFT_LINK_FLAG;
    if (dst.h5().mode() != Mode::Read) require_parent(*dst.file, to, lcpl);
    copy_object(src.h5(), from, dst.h5(), to, options);
    return herr_t(0);
  });
}

// Copies `s` into a caller's buffer of `size` bytes (cut, NUL-terminated) and returns its length.
size_t copy_name(const std::string& s, char* buf, size_t size) {
  if (buf && size > 0) {
    const size_t n = std::min(s.size(), size - 1);
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
  return s.size();
}

herr_t object_get(void* obj, const H5VL_loc_params_t* loc, H5VL_object_get_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& o = as_object(obj);
    switch (args->op_type) {
      case H5VL_OBJECT_GET_FILE:
        *args->args.get_file.file = new Object(H5I_FILE, o.file, "/");
        return herr_t(0);
      case H5VL_OBJECT_GET_NAME: {
        const bool nameless = (o.unlinked || o.anonymous) && (!loc || loc->type == H5VL_OBJECT_BY_SELF);
        const size_t n = copy_name(nameless ? std::string() : locate(o, loc), args->args.get_name.buf,
                                   args->args.get_name.buf_size);
        if (args->args.get_name.name_len) *args->args.get_name.name_len = n;
        return herr_t(0);
      }
      case H5VL_OBJECT_GET_TYPE: {
        const ObjectKind k = o.h5().kind(locate(o, loc));
        if (k == ObjectKind::None) throw NotFoundError("object not found in file '" + o.file->name + "'");
        *args->args.get_type.obj_type = object_type_of(k);
        return herr_t(0);
      }
      case H5VL_OBJECT_GET_INFO:
        object_info(*o.file, locate(o, loc), args->args.get_info.fields, args->args.get_info.oinfo);
        return herr_t(0);
    }
    unsupported("object get operation " + std::to_string(int(args->op_type)));
  });
}

// H5Ovisit: the start object (".") and everything below it, links not followed.
herr_t visit(Object& o, const std::string& start, H5VL_object_visit_args_t& v) {
  const H5I_type_t type = id_type_of(o.h5().kind(start));
  if (type == H5I_BADID) throw NotFoundError("object '" + start + "' not found");
  hid_t id = register_object(o, type, start);
  if (id < 0) throw UsageError("cannot register an identifier for '" + start + "'");
  struct Release {
    hid_t id;
    ~Release() { H5Idec_ref(id); }
  } release{id};
  std::vector<std::pair<std::string, std::string>> todo;  // (absolute path, name relative to start)
  todo.emplace_back(start, ".");
  // Depth first in the index asked for, as HDF5 does; each object once, by
  // the first of its names met (hard links can make cycles).
  std::set<std::vector<unsigned char>> met;
  std::function<herr_t(const std::string&, const std::string&)> walk = [&](const std::string& path,
                                                                           const std::string& rel) -> herr_t {
    H5O_info2_t info;
    object_info(*o.file, path, v.fields | H5O_INFO_BASIC, &info);
    if (!met.emplace(info.token.__data, info.token.__data + sizeof info.token.__data).second) return 0;
    herr_t r = v.op(id, rel.c_str(), &info, v.op_data);
    if (r != 0) return r;
    if (info.type != H5O_TYPE_GROUP) return 0;
    for (const auto& name : members(*o.file, path, v.idx_type, v.order)) {
      const std::string child = join(path, name);
      if (o.h5().soft_link(child) || o.h5().kind(child) == ObjectKind::None) continue;
      if ((r = walk(child, rel == "." ? name : rel + "/" + name)) != 0) return r;
    }
    return 0;
  };
  return walk(start, ".");
}

herr_t object_specific(void* obj, const H5VL_loc_params_t* loc, H5VL_object_specific_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& o = as_object(obj);
    switch (args->op_type) {
      case H5VL_OBJECT_EXISTS: {
        const std::string path = locate(o, loc);
        if (o.h5().kind(parent_of(path)) != ObjectKind::Group)
          throw NotFoundError("cannot look up '" + path + "': its group does not exist in file '" + o.file->name + "'");
        *args->args.exists.exists = o.h5().kind(path) != ObjectKind::None;
        return herr_t(0);
      }
      case H5VL_OBJECT_LOOKUP:
        *args->args.lookup.token_ptr = token_of(*o.file, locate(o, loc));
        return herr_t(0);
      case H5VL_OBJECT_VISIT: return visit(o, locate(o, loc), args->args.visit);
      case H5VL_OBJECT_FLUSH:
        if (o.file->intent & H5F_ACC_RDWR) o.h5().flush();
        return herr_t(0);
      case H5VL_OBJECT_REFRESH: return herr_t(0);  // every read already sees the file as it is
      case H5VL_OBJECT_CHANGE_REF_COUNT: {
        if (!o.file->reference_counts)
          unsupported("changing an object's reference count (H5Oincr_refcount) with an engine without the "
                      "conformance group 'reference_counts'");
        const std::string path = locate(o, loc);
        if (path.empty() || o.unlinked)
          unsupported("changing the reference count of an object without a name (link it first)");
        o.h5().change_reference_count(path, args->args.change_rc.delta);
        return herr_t(0);
      }
    }
    unsupported("object operation " + std::to_string(int(args->op_type)));
  });
}

herr_t object_optional(void*, const H5VL_loc_params_t*, H5VL_optional_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    unsupported("native object operation " + std::to_string(args->op_type));
    return herr_t(0);
  });
}

}  // namespace

const H5VL_object_class_t kObjectClass = {object_open, object_copy, object_get, object_specific, object_optional};

}  // namespace h5loom::vol
