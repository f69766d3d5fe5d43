// Links: soft links, existence, deletion, renaming, copying, information and
// iteration, over the object model's link operations (engines declaring the
// conformance group "links"), and hard links - second names for objects - for
// engines declaring "hard_links" too (else only the first name of an
// anonymous object, H5Olink, is made).
#include <cstring>
#include <functional>
#include <set>

#include "vol/vol.hpp"

namespace h5loom::vol {

namespace {

Object& as_object(void* obj) { return *static_cast<Object*>(obj); }

void require_links(const OpenFile& f, const std::string& what) {
  if (!f.links) unsupported(what + " with an engine without the conformance group 'links'");
}

// Is there a link `path` (a dangling soft link, external and user-defined links count)?
bool link_exists(OpenFile& f, const std::string& path) {
  if (path == "/") return true;
  return f.file.kind(path) != ObjectKind::None || (f.links && f.file.soft_link(path)) ||
         (f.external_links && f.file.external_link(path)) ||
         (f.user_defined_links && f.file.user_defined_link(path));
}

// An external link's value as HDF5 packs it (H5Lunpack_elink_val reads it):
// a version and flags byte (0), the file name and the object's path, each NUL-terminated.
std::string packed_external_link(const ExternalLink& link) {
  std::string value(1, '\0');
  value += link.file;
  value += '\0';
  value += link.path;
  value += '\0';
  return value;
}

// Whether HDF5 would give the links of `group` creation order values: as its
// creation properties asked, for a group made in this session (the root: the
// file's); else - unknown, h5loom keeping no creation properties - yes.
bool tracks_creation_order(OpenFile& f, const std::string& group) {
  hid_t cpl = H5I_INVALID_HID;
  if (group == "/") cpl = f.created ? f.fcpl : H5I_INVALID_HID;
  else if (auto kept = f.group_plists.find(group); kept != f.group_plists.end()) cpl = kept->second;
  unsigned flags = H5P_CRT_ORDER_TRACKED;
  if (cpl >= 0 && H5Pget_link_creation_order(cpl, &flags) < 0) H5Eclear2(H5E_DEFAULT);
  return flags & H5P_CRT_ORDER_TRACKED;
}

// A user-defined link the engine holds but cannot describe (HDF5, under the
// hdf5 engine, for an external-class value that is not an external link's)
// fails as it fails in HDF5 programs.
// HDF5 describes an external-class value only if its first byte says version
// 0 without unknown flags (H5L__extern_query), whatever the rest: so does h5loom.
void require_described(const OpenFile& f, const std::string& path, const UserDefinedLink& link) {
  const bool external_header_ok = link.link_class != H5L_TYPE_EXTERNAL ||
                                  (link.value && !link.value->empty() &&
                                   (uint8_t(link.value->front()) >> 4) == H5L_EXT_VERSION &&
                                   !(uint8_t(link.value->front()) & 0x0F & ~H5L_EXT_FLAGS_ALL));
  if (!link.described() || !external_header_ok)
    throw UsageError("user-defined link '" + path + "' in file '" + f.name +
                     "' cannot be described: HDF5 cannot read its class or value (its link class's query fails)");
}

H5L_info2_t link_info(OpenFile& f, const std::string& path) {
  H5L_info2_t info;
  std::memset(&info, 0, sizeof info);
  info.cset = H5T_CSET_ASCII;
  if (!link_exists(f, path)) throw NotFoundError("link '" + path + "' not found in file '" + f.name + "'");
  if (f.order && path != "/" && tracks_creation_order(f, parent_of(path))) {
    info.corder_valid = true;
    info.corder = f.file.creation_order(path);
  }
  if (auto target = f.links ? f.file.soft_link(path) : std::nullopt) {
    info.type = H5L_TYPE_SOFT;
    info.u.val_size = target->size() + 1;
  } else if (auto external = f.external_links ? f.file.external_link(path) : std::nullopt) {
    info.type = H5L_TYPE_EXTERNAL;
    info.u.val_size = packed_external_link(*external).size();
  } else if (auto ud = f.user_defined_links ? f.file.user_defined_link(path) : std::nullopt) {
    require_described(f, path, *ud);
    info.type = H5L_type_t(ud->link_class);
    info.u.val_size = ud->value->size();
  } else {
    info.type = H5L_TYPE_HARD;
    info.u.token = token_of(f, path);
  }
  return info;
}

herr_t link_create(H5VL_link_create_args_t* args, void* obj, const H5VL_loc_params_t* loc, hid_t lcpl, hid_t,
                   hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    // H5Lcreate_hard(cur, name, H5L_SAME_LOC, new_name) passes no object: the new link is relative to the target's.
    if (!obj && args->op_type == H5VL_LINK_CREATE_HARD) obj = args->args.hard.curr_obj;
    if (!obj) throw UsageError("no location for the new link");
    Object& o = as_object(obj);
    switch (args->op_type) {
      case H5VL_LINK_CREATE_SOFT: {
        require_links(*o.file, "soft links");
        const std::string path = locate(o, loc);
        if (o.h5().mode() != Mode::Read) require_parent(*o.file, path, lcpl);
        // A relative target is relative to the link's group (HDF5's rule); h5loom keeps it absolute.
        o.h5().group(parent_of(path)).create_soft_link(last_name(path), args->args.soft.target);
        return herr_t(0);
      }
      case H5VL_LINK_CREATE_HARD: {
        // The target: curr_loc_params from curr_obj (null: the same location as the new link).
        void* curr = args->args.hard.curr_obj;
        const std::string path = locate(o, loc);
        if (curr && on_native_route(curr))
          throw UsageError("cannot create hard link '" + path + "' in file '" + o.file->name +
                           "' to an object of another file");
        Object& target = curr ? as_object(curr) : o;
        if (target.file != o.file)
          throw UsageError("cannot create hard link '" + path + "' in file '" + o.file->name +
                           "' to an object of file '" + target.file->name + "': a hard link stays in its file");
        // The first name of an anonymous object (H5Olink) creates it there.
        if (target.anonymous && args->args.hard.curr_loc_params.type == H5VL_OBJECT_BY_SELF) {
          if (o.h5().mode() != Mode::Read) require_parent(*o.file, path, lcpl);
          target.name_anonymous(path);
          return herr_t(0);
        }
        if (!o.file->hard_links)
          unsupported("a second name for an object (H5Lcreate_hard, H5Olink) with an engine without the conformance "
                      "group 'hard_links'");
        const std::string to = locate(target, &args->args.hard.curr_loc_params);
        if (o.h5().mode() != Mode::Read) require_parent(*o.file, path, lcpl);
        if (target.unlinked && to == target.path) {  // kept since its last link went: named again
          relink_parked(target, path);
          return herr_t(0);
        }
        o.h5().create_hard_link(path, to);
        return herr_t(0);
      }
      case H5VL_LINK_CREATE_UD: {
        // H5Lcreate_external packs an external link's value; H5Lcreate_ud
        // passes any value of any registered class, which HDF5 keeps unchecked.
        const auto& ud = args->args.ud;
        check_plist(lcpl, H5P_LINK_CREATE, "link creation");
        const std::string path = locate(o, loc);
        unsigned flags = 0;
        const char* file = nullptr;
        const char* object = nullptr;
        herr_t unpacked = -1;
        if (ud.type == H5L_TYPE_EXTERNAL) {
          H5E_BEGIN_TRY { unpacked = H5Lunpack_elink_val(ud.buf, ud.buf_size, &flags, &file, &object); }
          H5E_END_TRY
          if (unpacked < 0) H5Eclear2(H5E_DEFAULT);
        }
        if (unpacked >= 0) {
          if (!o.file->external_links)
            unsupported("external links with an engine without the conformance group 'external_links'");
          if (o.h5().mode() != Mode::Read) require_parent(*o.file, path, lcpl);
          o.h5().create_external_link(path, file, object);
          return herr_t(0);
        }
        if (!o.file->user_defined_links)
          unsupported("user-defined links (H5Lcreate_ud) with an engine without the conformance group "
                      "'user_defined_links'");
        if (H5Lis_registered(ud.type) <= 0)
          throw UsageError("cannot create user-defined link '" + path + "' in file '" + o.file->name +
                           "': link class " + std::to_string(int(ud.type)) + " is not registered (H5Lregister)");
        if (o.h5().mode() != Mode::Read) require_parent(*o.file, path, lcpl);
        const auto* bytes = static_cast<const char*>(ud.buf);
        o.h5().create_user_defined_link(
            path, UserDefinedLink{int(ud.type), bytes ? std::string(bytes, ud.buf_size) : std::string()});
        return herr_t(0);
      }
    }
    unsupported("link type " + std::to_string(int(args->op_type)));
  });
}

// The two ends of H5Lcopy or H5Lmove (`doing` says which), checked: one file
// with links, an existing link `from`, the group of `to` there.
struct LinkEnds {
  Object& src;
  std::string from, to;
};
LinkEnds link_ends(void* src_obj, const H5VL_loc_params_t* loc1, void* dst_obj, const H5VL_loc_params_t* loc2,
                   hid_t lcpl, const std::string& doing) {
  Object& src = as_object(src_obj);
  Object& dst = dst_obj ? as_object(dst_obj) : src;
  require_links(*src.file, doing + " links");
  if (src.file.get() != dst.file.get()) unsupported(doing + " links between files");
  LinkEnds ends{src, locate(src, loc1), locate(dst, loc2)};
  if (!link_exists(*src.file, ends.from))
    throw NotFoundError("link '" + ends.from + "' not found in file '" + src.file->name + "'");
  if (src.h5().mode() != Mode::Read) require_parent(*src.file, ends.to, lcpl);
  return ends;
}

// H5Lcopy: a new link like `from` - a soft link to the same target, or a
// hard link to the same object. The object is not copied (that is H5Ocopy).
herr_t link_copy(void* src_obj, const H5VL_loc_params_t* loc1, void* dst_obj, const H5VL_loc_params_t* loc2,
                 hid_t lcpl, hid_t, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    const auto [src, from, to] = link_ends(src_obj, loc1, dst_obj, loc2, lcpl, "copying");
    if (auto target = src.h5().soft_link(from)) {
      src.h5().create_soft_link(to, *target);
    } else if (auto external = src.file->external_links ? src.h5().external_link(from) : std::nullopt) {
      src.h5().create_external_link(to, external->file, external->path);
    } else if (auto ud = src.file->user_defined_links ? src.h5().user_defined_link(from) : std::nullopt) {
      require_described(*src.file, from, *ud);
      src.h5().create_user_defined_link(to, *ud);
    } else {
      if (!src.file->hard_links)
        unsupported("copying hard link '" + from + "' (a second name for its object) with an engine without the "
                    "conformance group 'hard_links'");
      src.h5().create_hard_link(to, from);
    }
    return herr_t(0);
  });
}

herr_t link_move(void* src_obj, const H5VL_loc_params_t* loc1, void* dst_obj, const H5VL_loc_params_t* loc2,
                 hid_t lcpl, hid_t, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    const auto [src, from, to] = link_ends(src_obj, loc1, dst_obj, loc2, lcpl, "moving");
    const auto open = open_objects_below(*src.file, "/");
    src.h5().move(from, to);
    links_changed(*src.file, from, to, open);
    return herr_t(0);
  });
}

herr_t link_get(void* obj, const H5VL_loc_params_t* loc, H5VL_link_get_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& o = as_object(obj);
    const std::string path = locate(o, loc);
    switch (args->op_type) {
      case H5VL_LINK_GET_INFO: *args->args.get_info.linfo = link_info(*o.file, path); return herr_t(0);
      case H5VL_LINK_GET_NAME: {
        auto& a = args->args.get_name;
        const std::string name = last_name(path);
        if (a.name && a.name_size > 0) {
          const size_t n = std::min(name.size(), a.name_size - 1);
          std::memcpy(a.name, name.data(), n);
          a.name[n] = '\0';
        }
        if (a.name_len) *a.name_len = name.size();
        return herr_t(0);
      }
      case H5VL_LINK_GET_VAL: {
        auto target = o.file->links ? o.h5().soft_link(path) : std::nullopt;
        auto& a = args->args.get_val;
        if (auto external = !target && o.file->external_links ? o.h5().external_link(path) : std::nullopt) {
          const std::string value = packed_external_link(*external);
          if (a.buf && a.buf_size > 0) std::memcpy(a.buf, value.data(), std::min(value.size(), a.buf_size));
          return herr_t(0);
        }
        if (auto ud = !target && o.file->user_defined_links ? o.h5().user_defined_link(path) : std::nullopt) {
          require_described(*o.file, path, *ud);
          if (a.buf && a.buf_size > 0) std::memcpy(a.buf, ud->value->data(), std::min(ud->value->size(), a.buf_size));
          return herr_t(0);
        }
        if (!target)
          throw UsageError("'" + path + "' is not a soft, external or user-defined link (file '" + o.file->name + "')");
        if (a.buf && a.buf_size > 0) {
          const size_t n = std::min(target->size(), a.buf_size - 1);
          std::memcpy(a.buf, target->data(), n);
          static_cast<char*>(a.buf)[n] = '\0';
        }
        return herr_t(0);
      }
    }
    unsupported("link get operation " + std::to_string(int(args->op_type)));
  });
}

// H5Literate / H5Lvisit: the links of `group` (recursively for visit: names
// relative to it, soft links not followed) in the index and order asked for,
// from *idx_p on.
herr_t iterate(Object& o, const std::string& group, H5VL_link_iterate_args_t& it) {
  if (o.h5().kind(group) != ObjectKind::Group) throw NotFoundError("group '" + group + "' not found");
  hid_t id = register_object(o, H5I_GROUP, group);
  if (id < 0) throw UsageError("cannot register an identifier for group '" + group + "'");
  struct Release {
    hid_t id;
    ~Release() { H5Idec_ref(id); }
  } release{id};
  if (!it.recursive) {
    const auto names = members(*o.file, group, it.idx_type, it.order);
    hsize_t i = it.idx_p ? *it.idx_p : 0;
    herr_t r = 0;
    for (; i < names.size() && r == 0; ++i) {
      const H5L_info2_t info = link_info(*o.file, join(group, names[i]));
      r = it.op(id, names[i].c_str(), &info, it.op_data);
    }
    if (it.idx_p) *it.idx_p = i;
    return r;
  }
  // Every link once; a group's links once, by the first of its names met (hard links can make cycles).
  std::set<uint64_t> groups_met;
  if (o.file->hard_links) groups_met.insert(o.h5().reference(group).token);
  std::function<herr_t(const std::string&, const std::string&)> walk = [&](const std::string& path,
                                                                           const std::string& rel) -> herr_t {
    for (const auto& name : members(*o.file, path, it.idx_type, it.order)) {
      const std::string child = join(path, name), child_rel = rel.empty() ? name : rel + "/" + name;
      const H5L_info2_t info = link_info(*o.file, child);
      if (herr_t r = it.op(id, child_rel.c_str(), &info, it.op_data); r != 0) return r;
      if (info.type != H5L_TYPE_HARD || o.h5().kind(child) != ObjectKind::Group) continue;
      if (o.file->hard_links && !groups_met.insert(o.h5().reference(child).token).second) continue;
      if (herr_t r = walk(child, child_rel); r != 0) return r;
    }
    return 0;
  };
  return walk(group, "");
}

herr_t link_specific(void* obj, const H5VL_loc_params_t* loc, H5VL_link_specific_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& o = as_object(obj);
    switch (args->op_type) {
      case H5VL_LINK_DELETE: {
        require_links(*o.file, "deleting links");
        delete_link(*o.file, locate(o, loc));
        return herr_t(0);
      }
      case H5VL_LINK_EXISTS: {
        const std::string path = locate(o, loc);
        if (o.h5().kind(parent_of(path)) != ObjectKind::Group)
          throw NotFoundError("cannot look up link '" + path + "': its group does not exist in file '" +
                              o.file->name + "'");
        *args->args.exists.exists = link_exists(*o.file, path);
        return herr_t(0);
      }
      case H5VL_LINK_ITER: return iterate(o, locate(o, loc), args->args.iterate);
    }
    unsupported("link operation " + std::to_string(int(args->op_type)));
  });
}

herr_t link_optional(void*, const H5VL_loc_params_t*, H5VL_optional_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    unsupported("native link operation " + std::to_string(args->op_type));
    return herr_t(0);
  });
}

}  // namespace

const H5VL_link_class_t kLinkClass = {link_create, link_copy, link_move, link_get, link_specific, link_optional};

}  // namespace h5loom::vol
