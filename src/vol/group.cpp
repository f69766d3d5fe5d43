// Groups: H5Gcreate/H5Gopen/H5Gget_info over h5loom::Group.
#include "vol/vol.hpp"

namespace h5loom::vol {

namespace {

Object& as_object(void* obj) { return *static_cast<Object*>(obj); }

void* group_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t lcpl, hid_t gcpl, hid_t gapl,
                   hid_t, void**) {
  return H5LOOM_VOL_GUARD((void*)nullptr, {
    Object& o = as_object(obj);
    check_plist(lcpl, H5P_LINK_CREATE, "link creation");
    check_plist(gcpl, H5P_GROUP_CREATE, "group creation");
    check_plist(gapl, H5P_GROUP_ACCESS, "group access");
    if (!name) {  // H5Gcreate_anon: made when H5Olink names it
      if (o.h5().mode() == Mode::Read)
        throw ReadOnlyError("cannot create a group: file '" + o.file->name + "' is open read-only");
      auto* g = new Object(H5I_GROUP, o, "");
      g->anonymous = Object::Anonymous{};
      g->keep_create(gcpl);
      return (void*)g;
    }
    const std::string path = join(locate(o, loc), name);
    if (path == "/") throw UsageError("the root group exists (file '" + o.file->name + "')");
    if (o.h5().mode() != Mode::Read) require_parent(*o.file, path, lcpl);
    o.h5().create_group(path);
    // Kept also when default: HDF5's default tracks no creation order, and
    // HDF5 then gives the group's links none (h5loom's engines keep it anyway).
    hid_t& kept = o.file->group_plists[path];
    if (kept > 0) H5Pclose(kept);  // a group of that name made, deleted and made again
    kept = H5Pcopy(gcpl == H5P_DEFAULT ? H5P_GROUP_CREATE_DEFAULT : gcpl);
    return (void*)new Object(H5I_GROUP, o, path);
  });
}

void* group_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t gapl, hid_t, void**) {
  return H5LOOM_VOL_GUARD((void*)nullptr, {
    Object& o = as_object(obj);
    check_plist(gapl, H5P_GROUP_ACCESS, "group access");
    const Located at = follow_external_links(o.file, join(locate(o, loc), name ? name : "."));
    at.file->file.group(at.path);  // NotFoundError unless a group is there
    return (void*)opened_object(H5I_GROUP, o, at);
  });
}

herr_t group_get(void* obj, H5VL_group_get_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& o = as_object(obj);
    switch (args->op_type) {
      case H5VL_GROUP_GET_GCPL: {
        // What the group was created with in this session; else what the
        // engine does: with "order", every group's link creation order is tracked.
        auto kept = o.file->group_plists.find(o.path);
        hid_t gcpl = kept != o.file->group_plists.end() ? H5Pcopy(kept->second) : H5Pcreate(H5P_GROUP_CREATE);
        if (gcpl < 0) throw UsageError("cannot make group creation properties");
        if (kept == o.file->group_plists.end() && o.file->order)
          H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
        args->args.get_gcpl.gcpl_id = gcpl;
        return herr_t(0);
      }
      case H5VL_GROUP_GET_INFO: {
        auto& a = args->args.get_info;
        const std::string path = locate(o, &a.loc_params);
        const auto names = members(*o.file, path, H5_INDEX_NAME, H5_ITER_NATIVE);
        a.ginfo->storage_type = H5G_STORAGE_TYPE_COMPACT;
        a.ginfo->nlinks = names.size();
        a.ginfo->max_corder = o.file->order ? o.h5().group(path).next_creation_order() : int64_t(names.size());
        a.ginfo->mounted = false;
        return herr_t(0);
      }
    }
    unsupported("group get operation " + std::to_string(int(args->op_type)));
  });
}

herr_t group_specific(void* obj, H5VL_group_specific_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& o = as_object(obj);
    switch (args->op_type) {
      case H5VL_GROUP_FLUSH:
        if (o.file->intent & H5F_ACC_RDWR) o.h5().flush();
        return herr_t(0);
      case H5VL_GROUP_REFRESH: return herr_t(0);  // reads always see the file as it is
      case H5VL_GROUP_MOUNT: unsupported("mounting files (H5Fmount)");
      case H5VL_GROUP_UNMOUNT: unsupported("unmounting files (H5Funmount)");
    }
    unsupported("group operation " + std::to_string(int(args->op_type)));
  });
}

herr_t group_optional(void*, H5VL_optional_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    unsupported("native group operation " + std::to_string(args->op_type) + " (H5Giterate, H5Gget_objinfo, ...)");
    return herr_t(0);
  });
}

herr_t group_close(void* obj, hid_t, void**) { return release(static_cast<Object*>(obj)); }

}  // namespace

const H5VL_group_class_t kGroupClass = {group_create, group_open,     group_get,
                                        group_specific, group_optional, group_close};

}  // namespace h5loom::vol
