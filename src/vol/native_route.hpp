// The native route: a file whose configuration is the plain `hdf5` engine is
// served by HDF5's own native connector. The hdf5 engine's files *are* native
// HDF5 files, and for an application that already speaks HDF5 nothing serves
// that format better than the library itself: every HDF5 feature works
// (hard links, committed datatypes, filters, H5Ocopy, h5py's deprecated
// listing calls), at native speed. The connector only wraps the native
// objects so that HDF5 hands them back to it (docs/vol.md#routes).
#pragma once

#include "vol/vol.hpp"

namespace h5loom::vol::native {

// What the connector hands HDF5 for an object on the native route: the native
// connector's own object.
struct NativeObject : Handle {
  void* under;
  explicit NativeObject(void* u) : Handle(Route::Native), under(u) {}
};
// The native object inside `obj` (nullptr stays nullptr).
inline void* under(void* obj) { return obj ? static_cast<NativeObject*>(obj)->under : nullptr; }

// The callbacks of the route, called by route.cpp once it has chosen it.
extern const H5VL_attr_class_t kAttrClass;
extern const H5VL_dataset_class_t kDatasetClass;
extern const H5VL_datatype_class_t kDatatypeClass;
extern const H5VL_file_class_t kFileClass;
extern const H5VL_group_class_t kGroupClass;
extern const H5VL_link_class_t kLinkClass;
extern const H5VL_object_class_t kObjectClass;
extern const H5VL_blob_class_t kBlobClass;
extern const H5VL_token_class_t kTokenClass;
herr_t link_create(H5VL_link_create_args_t* args, void* obj, const H5VL_loc_params_t* loc, hid_t lcpl, hid_t lapl,
                   hid_t dxpl, void** req);
// H5Fis_accessible and H5Fdelete: no object, the file access properties say which file.
herr_t file_specific_by_name(H5VL_file_specific_args_t* args, hid_t dxpl, void** req);
herr_t get_conn_cls(void* obj, H5VL_get_conn_lvl_t lvl, const H5VL_class_t** cls);
herr_t opt_query(void* obj, H5VL_subclass_t subcls, int opt_type, uint64_t* flags);
herr_t optional(void* obj, H5VL_optional_args_t* args, hid_t dxpl, void** req);
// HDF5's native capability flags.
uint64_t capability_flags();

// Wrapping objects the native connector makes on its own (the file object
// HDF5 keeps for variable-length data and references, the identifiers an
// iteration hands the application): the context, the same for every native-route object.
void* wrap_context();
void* wrap(void* under_obj);

}  // namespace h5loom::vol::native
