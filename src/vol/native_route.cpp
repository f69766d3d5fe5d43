// The native route (native_route.hpp): every callback unwraps the connector's
// objects, passes the call to HDF5's native connector unchanged, and wraps the
// objects it makes.
#include "vol/native_route.hpp"

#include <vector>

namespace h5loom::vol::native {

namespace {

hid_t id() { return H5VL_NATIVE; }

// A copy of the file access properties that names the native connector: HDF5
// takes the connector of a file create, open or probe from them.
class NativeFapl {
 public:
  explicit NativeFapl(hid_t fapl) {
    id_ = H5Pcopy(fapl == H5P_DEFAULT || fapl < 0 ? H5P_FILE_ACCESS_DEFAULT : fapl);
    if (id_ >= 0 && H5Pset_vol(id_, H5VL_NATIVE, nullptr) < 0) {
      H5Pclose(id_);
      id_ = H5I_INVALID_HID;
    }
  }
  ~NativeFapl() {
    if (id_ >= 0) H5Pclose(id_);
  }
  NativeFapl(const NativeFapl&) = delete;
  NativeFapl& operator=(const NativeFapl&) = delete;
  hid_t id() const { return id_; }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

// Closes `obj` with `close` (a native close); the wrapper goes only when the
// native object did (a failed close leaves the identifier open in HDF5).
template <class Close>
herr_t release(void* obj, Close&& close) {
  herr_t status = close(under(obj));
  if (status >= 0) delete static_cast<NativeObject*>(obj);
  return status;
}

// The native objects of a multi-dataset transfer (H5Dwrite_multi).
class Unwrapped {
 public:
  Unwrapped(size_t count, void* objs[]) : many_(count > 1 ? count : 0) {
    if (count == 1) one_ = under(objs[0]);
    for (size_t i = 0; count > 1 && i < count; ++i) {
      if (!on_native_route(objs[i])) throw UsageError("a multi-dataset transfer mixes files of different engines");
      many_[i] = under(objs[i]);
    }
  }
  void** data() { return many_.empty() ? &one_ : many_.data(); }

 private:
  void* one_ = nullptr;
  std::vector<void*> many_;
};

// ---- attributes ------------------------------------------------------------------------

void* attr_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t type, hid_t space, hid_t acpl,
                  hid_t aapl, hid_t dxpl, void** req) {
  return wrap(H5VLattr_create(under(obj), loc, id(), name, type, space, acpl, aapl, dxpl, req));
}
void* attr_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t aapl, hid_t dxpl, void** req) {
  return wrap(H5VLattr_open(under(obj), loc, id(), name, aapl, dxpl, req));
}
herr_t attr_read(void* attr, hid_t mem_type, void* buf, hid_t dxpl, void** req) {
  return H5VLattr_read(under(attr), id(), mem_type, buf, dxpl, req);
}
herr_t attr_write(void* attr, hid_t mem_type, const void* buf, hid_t dxpl, void** req) {
  return H5VLattr_write(under(attr), id(), mem_type, buf, dxpl, req);
}
herr_t attr_get(void* obj, H5VL_attr_get_args_t* args, hid_t dxpl, void** req) {
  return H5VLattr_get(under(obj), id(), args, dxpl, req);
}
herr_t attr_specific(void* obj, const H5VL_loc_params_t* loc, H5VL_attr_specific_args_t* args, hid_t dxpl,
                     void** req) {
  return H5VLattr_specific(under(obj), loc, id(), args, dxpl, req);
}
herr_t attr_optional(void* obj, H5VL_optional_args_t* args, hid_t dxpl, void** req) {
  return H5VLattr_optional(under(obj), id(), args, dxpl, req);
}
herr_t attr_close(void* attr, hid_t dxpl, void** req) {
  return release(attr, [&](void* u) { return H5VLattr_close(u, id(), dxpl, req); });
}

// ---- datasets -------------------------------------------------------------------------------

void* dataset_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t lcpl, hid_t type, hid_t space,
                     hid_t dcpl, hid_t dapl, hid_t dxpl, void** req) {
  return wrap(H5VLdataset_create(under(obj), loc, id(), name, lcpl, type, space, dcpl, dapl, dxpl, req));
}
void* dataset_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t dapl, hid_t dxpl, void** req) {
  return wrap(H5VLdataset_open(under(obj), loc, id(), name, dapl, dxpl, req));
}
herr_t dataset_read(size_t count, void* dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[], hid_t dxpl,
                    void* buf[], void** req) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Unwrapped u(count, dset);
    return H5VLdataset_read(count, u.data(), id(), mem_type, mem_space, file_space, dxpl, buf, req);
  });
}
herr_t dataset_write(size_t count, void* dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[], hid_t dxpl,
                     const void* buf[], void** req) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Unwrapped u(count, dset);
    return H5VLdataset_write(count, u.data(), id(), mem_type, mem_space, file_space, dxpl, buf, req);
  });
}
herr_t dataset_get(void* obj, H5VL_dataset_get_args_t* args, hid_t dxpl, void** req) {
  return H5VLdataset_get(under(obj), id(), args, dxpl, req);
}
herr_t dataset_specific(void* obj, H5VL_dataset_specific_args_t* args, hid_t dxpl, void** req) {
  return H5VLdataset_specific(under(obj), id(), args, dxpl, req);
}
herr_t dataset_optional(void* obj, H5VL_optional_args_t* args, hid_t dxpl, void** req) {
  return H5VLdataset_optional(under(obj), id(), args, dxpl, req);
}
herr_t dataset_close(void* dset, hid_t dxpl, void** req) {
  return release(dset, [&](void* u) { return H5VLdataset_close(u, id(), dxpl, req); });
}

// ---- committed datatypes --------------------------------------------------------------------

void* datatype_commit(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t type, hid_t lcpl, hid_t tcpl,
                      hid_t tapl, hid_t dxpl, void** req) {
  return wrap(H5VLdatatype_commit(under(obj), loc, id(), name, type, lcpl, tcpl, tapl, dxpl, req));
}
void* datatype_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t tapl, hid_t dxpl, void** req) {
  return wrap(H5VLdatatype_open(under(obj), loc, id(), name, tapl, dxpl, req));
}
herr_t datatype_get(void* obj, H5VL_datatype_get_args_t* args, hid_t dxpl, void** req) {
  return H5VLdatatype_get(under(obj), id(), args, dxpl, req);
}
herr_t datatype_specific(void* obj, H5VL_datatype_specific_args_t* args, hid_t dxpl, void** req) {
  return H5VLdatatype_specific(under(obj), id(), args, dxpl, req);
}
herr_t datatype_optional(void* obj, H5VL_optional_args_t* args, hid_t dxpl, void** req) {
  return H5VLdatatype_optional(under(obj), id(), args, dxpl, req);
}
herr_t datatype_close(void* dt, hid_t dxpl, void** req) {
  return release(dt, [&](void* u) { return H5VLdatatype_close(u, id(), dxpl, req); });
}

// ---- files ------------------------------------------------------------------------------------

void* file_create(const char* name, unsigned flags, hid_t fcpl, hid_t fapl, hid_t dxpl, void** req) {
  NativeFapl native(fapl);
  if (native.id() < 0) return nullptr;
  return wrap(H5VLfile_create(name, flags, fcpl, native.id(), dxpl, req));
}

void* file_open(const char* name, unsigned flags, hid_t fapl, hid_t dxpl, void** req) {
  NativeFapl native(fapl);
  if (native.id() < 0) return nullptr;
  return wrap(H5VLfile_open(name, flags, native.id(), dxpl, req));
}

herr_t file_get(void* obj, H5VL_file_get_args_t* args, hid_t dxpl, void** req) {
  return H5VLfile_get(under(obj), id(), args, dxpl, req);
}

herr_t file_specific(void* obj, H5VL_file_specific_args_t* args, hid_t dxpl, void** req) {
  H5VL_file_specific_args_t mine = *args;
  if (args->op_type == H5VL_FILE_IS_EQUAL) {
    if (!on_native_route(args->args.is_equal.obj2)) {  // a file of another route is another file
      *args->args.is_equal.same_file = false;
      return 0;
    }
    mine.args.is_equal.obj2 = under(args->args.is_equal.obj2);
  }
  // (H5Fis_accessible and H5Fdelete come without an object: file_specific_by_name.)
  herr_t status = H5VLfile_specific(under(obj), id(), &mine, dxpl, req);
  // H5Freopen: a new native file object, for a new identifier.
  if (status >= 0 && args->op_type == H5VL_FILE_REOPEN) *args->args.reopen.file = wrap(*args->args.reopen.file);
  return status;
}

herr_t file_optional(void* obj, H5VL_optional_args_t* args, hid_t dxpl, void** req) {
  return H5VLfile_optional(under(obj), id(), args, dxpl, req);
}
herr_t file_close(void* file, hid_t dxpl, void** req) {
  return release(file, [&](void* u) { return H5VLfile_close(u, id(), dxpl, req); });
}

// ---- groups ------------------------------------------------------------------------------------

void* group_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t lcpl, hid_t gcpl, hid_t gapl,
                   hid_t dxpl, void** req) {
  return wrap(H5VLgroup_create(under(obj), loc, id(), name, lcpl, gcpl, gapl, dxpl, req));
}
void* group_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t gapl, hid_t dxpl, void** req) {
  return wrap(H5VLgroup_open(under(obj), loc, id(), name, gapl, dxpl, req));
}
herr_t group_get(void* obj, H5VL_group_get_args_t* args, hid_t dxpl, void** req) {
  return H5VLgroup_get(under(obj), id(), args, dxpl, req);
}
herr_t group_specific(void* obj, H5VL_group_specific_args_t* args, hid_t dxpl, void** req) {
  H5VL_group_specific_args_t mine = *args;
  if (args->op_type == H5VL_GROUP_MOUNT) {
    if (!on_native_route(args->args.mount.child_file)) {
      push_error(__func__, "cannot mount a file of another engine on a native HDF5 file");
      return -1;
    }
    mine.args.mount.child_file = under(args->args.mount.child_file);
  }
  return H5VLgroup_specific(under(obj), id(), &mine, dxpl, req);
}
herr_t group_optional(void* obj, H5VL_optional_args_t* args, hid_t dxpl, void** req) {
  return H5VLgroup_optional(under(obj), id(), args, dxpl, req);
}
herr_t group_close(void* grp, hid_t dxpl, void** req) {
  return release(grp, [&](void* u) { return H5VLgroup_close(u, id(), dxpl, req); });
}

// ---- links --------------------------------------------------------------------------------------

// Both ends of a link copy or move must be native-route objects (or absent).
bool same_route(void* a, void* b) { return (!a || on_native_route(a)) && (!b || on_native_route(b)); }

herr_t link_copy(void* src, const H5VL_loc_params_t* loc1, void* dst, const H5VL_loc_params_t* loc2, hid_t lcpl,
                 hid_t lapl, hid_t dxpl, void** req) {
  if (!same_route(src, dst)) {
    push_error(__func__, "cannot copy a link between files of different engines");
    return -1;
  }
  return H5VLlink_copy(under(src), loc1, under(dst), loc2, id(), lcpl, lapl, dxpl, req);
}
herr_t link_move(void* src, const H5VL_loc_params_t* loc1, void* dst, const H5VL_loc_params_t* loc2, hid_t lcpl,
                 hid_t lapl, hid_t dxpl, void** req) {
  if (!same_route(src, dst)) {
    push_error(__func__, "cannot move a link between files of different engines");
    return -1;
  }
  return H5VLlink_move(under(src), loc1, under(dst), loc2, id(), lcpl, lapl, dxpl, req);
}
herr_t link_get(void* obj, const H5VL_loc_params_t* loc, H5VL_link_get_args_t* args, hid_t dxpl, void** req) {
  return H5VLlink_get(under(obj), loc, id(), args, dxpl, req);
}
herr_t link_specific(void* obj, const H5VL_loc_params_t* loc, H5VL_link_specific_args_t* args, hid_t dxpl,
                     void** req) {
  return H5VLlink_specific(under(obj), loc, id(), args, dxpl, req);
}
herr_t link_optional(void* obj, const H5VL_loc_params_t* loc, H5VL_optional_args_t* args, hid_t dxpl, void** req) {
  return H5VLlink_optional(under(obj), loc, id(), args, dxpl, req);
}

// ---- objects ---------------------------------------------------------------------------------------

void* object_open(void* obj, const H5VL_loc_params_t* loc, H5I_type_t* opened_type, hid_t dxpl, void** req) {
  return wrap(H5VLobject_open(under(obj), loc, id(), opened_type, dxpl, req));
}
herr_t object_copy(void* src, const H5VL_loc_params_t* loc1, const char* src_name, void* dst,
                   const H5VL_loc_params_t* loc2, const char* dst_name, hid_t ocpypl, hid_t lcpl, hid_t dxpl,
                   void** req) {
  if (!same_route(src, dst)) {
    push_error(__func__, "cannot copy an object between files of different engines (h5loom convert copies files)");
    return -1;
  }
  return H5VLobject_copy(under(src), loc1, src_name, under(dst), loc2, dst_name, id(), ocpypl, lcpl, dxpl, req);
}
herr_t object_get(void* obj, const H5VL_loc_params_t* loc, H5VL_object_get_args_t* args, hid_t dxpl, void** req) {
  return H5VLobject_get(under(obj), loc, id(), args, dxpl, req);
}
herr_t object_specific(void* obj, const H5VL_loc_params_t* loc, H5VL_object_specific_args_t* args, hid_t dxpl,
                       void** req) {
  return H5VLobject_specific(under(obj), loc, id(), args, dxpl, req);
}
herr_t object_optional(void* obj, const H5VL_loc_params_t* loc, H5VL_optional_args_t* args, hid_t dxpl, void** req) {
  return H5VLobject_optional(under(obj), loc, id(), args, dxpl, req);
}

// ---- blobs (variable-length data, references) and tokens -------------------------------------------

herr_t blob_put(void* obj, const void* buf, size_t size, void* blob_id, void* ctx) {
  return H5VLblob_put(under(obj), id(), buf, size, blob_id, ctx);
}
herr_t blob_get(void* obj, const void* blob_id, void* buf, size_t size, void* ctx) {
  return H5VLblob_get(under(obj), id(), blob_id, buf, size, ctx);
}
herr_t blob_specific(void* obj, void* blob_id, H5VL_blob_specific_args_t* args) {
  return H5VLblob_specific(under(obj), id(), blob_id, args);
}
herr_t blob_optional(void* obj, void* blob_id, H5VL_optional_args_t* args) {
  return H5VLblob_optional(under(obj), id(), blob_id, args);
}
herr_t token_cmp(void* obj, const H5O_token_t* a, const H5O_token_t* b, int* result) {
  return H5VLtoken_cmp(under(obj), id(), a, b, result);
}
herr_t token_to_str(void* obj, H5I_type_t type, const H5O_token_t* token, char** str) {
  return H5VLtoken_to_str(under(obj), type, id(), token, str);
}
herr_t token_from_str(void* obj, H5I_type_t type, const char* str, H5O_token_t* token) {
  return H5VLtoken_from_str(under(obj), type, id(), str, token);
}

// Any non-null address: every native-route object wraps the same way.
char context_tag;

}  // namespace

void* wrap(void* under_obj) {
  if (!under_obj) return nullptr;
  return H5LOOM_VOL_GUARD((void*)nullptr, { return (void*)new NativeObject(under_obj); });
}

void* wrap_context() { return &context_tag; }

herr_t link_create(H5VL_link_create_args_t* args, void* obj, const H5VL_loc_params_t* loc, hid_t lcpl, hid_t lapl,
                   hid_t dxpl, void** req) {
  H5VL_link_create_args_t mine = *args;
  if (args->op_type == H5VL_LINK_CREATE_HARD) {
    if (!same_route(args->args.hard.curr_obj, obj)) {
      push_error(__func__, "cannot create a hard link between files of different engines");
      return -1;
    }
    mine.args.hard.curr_obj = under(args->args.hard.curr_obj);
  }
  return H5VLlink_create(&mine, under(obj), loc, id(), lcpl, lapl, dxpl, req);
}

herr_t file_specific_by_name(H5VL_file_specific_args_t* args, hid_t dxpl, void** req) {
  H5VL_file_specific_args_t mine = *args;
  hid_t& fapl = args->op_type == H5VL_FILE_IS_ACCESSIBLE ? mine.args.is_accessible.fapl_id : mine.args.del.fapl_id;
  NativeFapl native(fapl);
  if (native.id() < 0) return -1;
  fapl = native.id();
  return H5VLfile_specific(nullptr, id(), &mine, dxpl, req);
}

herr_t get_conn_cls(void* obj, H5VL_get_conn_lvl_t lvl, const H5VL_class_t** cls) {
  return H5VLintrospect_get_conn_cls(under(obj), id(), lvl, cls);
}
herr_t opt_query(void* obj, H5VL_subclass_t subcls, int opt_type, uint64_t* flags) {
  return H5VLintrospect_opt_query(under(obj), id(), subcls, opt_type, flags);
}
herr_t optional(void* obj, H5VL_optional_args_t* args, hid_t dxpl, void** req) {
  return H5VLoptional(under(obj), id(), args, dxpl, req);
}
uint64_t capability_flags() {
  uint64_t flags = 0;
  if (H5VLget_cap_flags(id(), &flags) < 0) flags = 0;
  return flags;
}

const H5VL_attr_class_t kAttrClass = {attr_create, attr_open,     attr_read,     attr_write,
                                      attr_get,    attr_specific, attr_optional, attr_close};
const H5VL_dataset_class_t kDatasetClass = {dataset_create, dataset_open,     dataset_read,     dataset_write,
                                            dataset_get,    dataset_specific, dataset_optional, dataset_close};
const H5VL_datatype_class_t kDatatypeClass = {datatype_commit,   datatype_open,     datatype_get,
                                              datatype_specific, datatype_optional, datatype_close};
const H5VL_file_class_t kFileClass = {file_create, file_open, file_get, file_specific, file_optional, file_close};
const H5VL_group_class_t kGroupClass = {group_create,   group_open,     group_get,
                                        group_specific, group_optional, group_close};
const H5VL_link_class_t kLinkClass = {link_create, link_copy, link_move, link_get, link_specific, link_optional};
const H5VL_object_class_t kObjectClass = {object_open, object_copy, object_get, object_specific, object_optional};
const H5VL_blob_class_t kBlobClass = {blob_put, blob_get, blob_specific, blob_optional};
const H5VL_token_class_t kTokenClass = {token_cmp, token_to_str, token_from_str};

}  // namespace h5loom::vol::native
