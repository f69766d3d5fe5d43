// Which route serves a call (vol.hpp): a file's route is chosen when it is
// created or opened, from the connector's configuration; every later call
// goes where its object's Handle says. These are the callback tables HDF5
// sees (plugin.cpp puts them in the connector's class).
#include "vol/route.hpp"

#include <cstdlib>
#include <cstring>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "h5loom/engine.hpp"
#include "vol/native_route.hpp"

namespace h5loom::vol {

// The engine that wrote the file at `name` (empty: none h5loom knows).
static std::string engine_of_file(const char* name) {
  KeepErrorPrinting keep;
  return engine::detect_engine(name);
}

bool takes_native_route(const std::string& configured, const char* opening, std::optional<std::string>* written_by) {
  // A profile is recorded by the trace wrapper, which lives on the engine
  // route: H5LOOM_PROFILE keeps a file there, as it stacks trace on h5loom::File.
  if (const char* profile = std::getenv("H5LOOM_PROFILE"); profile && *profile) return false;
  std::string config = configured;
  if (config.empty())
    if (const char* env = std::getenv("H5LOOM_ENGINE")) config = env;
  if (config.empty()) {
    if (!opening) return std::string(engine::kDefaultEngine) == "hdf5";
    // The engine that wrote the file (none: not an h5loom file, HDF5 will say why).
    const std::string detected = engine_of_file(opening);
    if (written_by) *written_by = detected;
    return detected.empty() || detected == "hdf5";
  }
  if (config == "hdf5") return true;
  if (config.find('{') == std::string::npos) return false;
  // JSON: the hdf5 engine alone, without knobs (its knobs and the wrappers are
  // h5loom's: the engine route has them).
  const auto j = nlohmann::json::parse(config, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.size() == 1 && j.contains("engine") && j["engine"] == "hdf5";
}

namespace {

// ---- routing by the object a call is made on ----------------------------------

// A callback slot `Member` of a table whose first argument is the object: the
// engine route's function from `Engine`, the native route's from `Native`.
template <class Fn>
struct ByObject;
template <class R, class... A>
struct ByObject<R (*)(void*, A...)> {
  template <const auto* Engine, const auto* Native, auto Member>
  static R call(void* obj, A... args) {
    const auto fn = on_native_route(obj) ? Native->*Member : Engine->*Member;
    if (!fn) {
      push_error(__func__, "this operation is not supported by the h5loom connector with this file's engine");
      if constexpr (std::is_pointer_v<R>) return nullptr;
      else return R(-1);
    }
    return fn(obj, args...);
  }
};
#define H5LOOM_ROUTE(table, member)                               \
  ByObject<decltype(table.member)>::call<&table, &native::table, \
                                         &std::remove_const_t<decltype(table)>::member>

// The engine route has no blobs (variable-length data reaches it by value):
// HDF5 gets an error naming it.
const H5VL_blob_class_t kBlobClass = {};

// ---- files: the route is chosen here ---------------------------------------------

void* choose_file_create(const char* name, unsigned flags, hid_t fcpl, hid_t fapl, hid_t dxpl, void** req) {
  const int native = H5LOOM_VOL_GUARD(-1, { return int(takes_native_route(config_of(fapl), nullptr)); });
  if (native < 0) return nullptr;
  return native ? native::kFileClass.create(name, flags, fcpl, fapl, dxpl, req)
                : vol::file_create(name, flags, fcpl, fapl, dxpl, req);
}

void* choose_file_open(const char* name, unsigned flags, hid_t fapl, hid_t dxpl, void** req) {
  const int native = H5LOOM_VOL_GUARD(-1, {
    std::optional<std::string> written_by;
    if (!takes_native_route(config_of(fapl), name, &written_by)) return 0;
    // Writing a log-engine file as plain HDF5 would change its front file
    // behind the log: refused, as h5loom::File refuses it.
    if (flags & H5F_ACC_RDWR) {
      if (!written_by) written_by = engine_of_file(name);
      if (!written_by->empty() && *written_by != "hdf5")
        throw ConfigError(std::string("cannot open file '") + name + "' for writing with engine 'hdf5': it was written by engine '" +
                          *written_by + "'. Open it with that engine (HDF5_VOL_CONNECTOR=\"h5loom " + *written_by +
                          "\", or \"h5loom\" alone), or copy it with h5loom convert");
    }
    return 1;
  });
  if (native < 0) return nullptr;
  return native ? native::kFileClass.open(name, flags, fapl, dxpl, req) : vol::file_open(name, flags, fapl, dxpl, req);
}

// H5Fis_accessible and H5Fdelete come without an object: the file access
// properties' configuration chooses, as for an open.
herr_t choose_file_specific(void* obj, H5VL_file_specific_args_t* args, hid_t dxpl, void** req) {
  if (!obj && (args->op_type == H5VL_FILE_IS_ACCESSIBLE || args->op_type == H5VL_FILE_DELETE)) {
    const bool probe = args->op_type == H5VL_FILE_IS_ACCESSIBLE;
    const char* name = probe ? args->args.is_accessible.filename : args->args.del.filename;
    const hid_t fapl = probe ? args->args.is_accessible.fapl_id : args->args.del.fapl_id;
    const int native = H5LOOM_VOL_GUARD(-1, { return int(takes_native_route(config_of(fapl), name)); });
    if (native < 0) return -1;
    if (native) return native::file_specific_by_name(args, dxpl, req);
  }
  return (on_native_route(obj) ? native::kFileClass.specific : kFileClass.specific)(obj, args, dxpl, req);
}

// ---- calls whose object is not their first argument -----------------------------------

herr_t link_create(H5VL_link_create_args_t* args, void* obj, const H5VL_loc_params_t* loc, hid_t lcpl, hid_t lapl,
                   hid_t dxpl, void** req) {
  const void* decides = obj ? obj : args->op_type == H5VL_LINK_CREATE_HARD ? args->args.hard.curr_obj : nullptr;
  return (on_native_route(decides) ? native::link_create : kLinkClass.create)(args, obj, loc, lcpl, lapl, dxpl, req);
}

herr_t dataset_read(size_t count, void* dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[], hid_t dxpl,
                    void* buf[], void** req) {
  return (count && on_native_route(dset[0]) ? native::kDatasetClass.read : kDatasetClass.read)(
      count, dset, mem_type, mem_space, file_space, dxpl, buf, req);
}

herr_t dataset_write(size_t count, void* dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[], hid_t dxpl,
                     const void* buf[], void** req) {
  return (count && on_native_route(dset[0]) ? native::kDatasetClass.write : kDatasetClass.write)(
      count, dset, mem_type, mem_space, file_space, dxpl, buf, req);
}

// ---- tokens: the engine route's are 8 bytes of a path's number, compared as bytes ----

herr_t token_cmp(void* obj, const H5O_token_t* a, const H5O_token_t* b, int* result) {
  if (on_native_route(obj)) return native::kTokenClass.cmp(obj, a, b, result);
  *result = std::memcmp(a, b, sizeof(H5O_token_t));
  return 0;
}
herr_t token_to_str(void* obj, H5I_type_t type, const H5O_token_t* token, char** str) {
  if (on_native_route(obj)) return native::kTokenClass.to_str(obj, type, token, str);
  *str = nullptr;  // what HDF5 does for a connector without the callback
  return 0;
}
herr_t token_from_str(void* obj, H5I_type_t type, const char* str, H5O_token_t* token) {
  if (on_native_route(obj)) return native::kTokenClass.from_str(obj, type, str, token);
  *token = H5O_TOKEN_UNDEF;
  return 0;
}

// ---- wrapping: objects the native connector makes itself --------------------------------

void* get_object(const void* obj) {
  void* o = const_cast<void*>(obj);
  return on_native_route(o) ? native::under(o) : o;
}
herr_t get_wrap_ctx(const void* obj, void** ctx) {
  *ctx = on_native_route(obj) ? native::wrap_context() : nullptr;
  return 0;
}
void* wrap_object(void* obj, H5I_type_t, void* ctx) { return ctx == native::wrap_context() ? native::wrap(obj) : obj; }
void* unwrap_object(void* obj) {
  if (!on_native_route(obj)) return obj;
  void* u = native::under(obj);
  delete static_cast<native::NativeObject*>(obj);
  return u;
}
herr_t free_wrap_ctx(void*) { return 0; }

}  // namespace

// ---- the tables ---------------------------------------------------------------------------

namespace routed {

const H5VL_wrap_class_t kWrap = {get_object, get_wrap_ctx, wrap_object, unwrap_object, free_wrap_ctx};
const H5VL_attr_class_t kAttr = {
    H5LOOM_ROUTE(kAttrClass, create),   H5LOOM_ROUTE(kAttrClass, open),     H5LOOM_ROUTE(kAttrClass, read),
    H5LOOM_ROUTE(kAttrClass, write),    H5LOOM_ROUTE(kAttrClass, get),      H5LOOM_ROUTE(kAttrClass, specific),
    H5LOOM_ROUTE(kAttrClass, optional), H5LOOM_ROUTE(kAttrClass, close)};
const H5VL_dataset_class_t kDataset = {
    H5LOOM_ROUTE(kDatasetClass, create),   H5LOOM_ROUTE(kDatasetClass, open),     dataset_read, dataset_write,
    H5LOOM_ROUTE(kDatasetClass, get),      H5LOOM_ROUTE(kDatasetClass, specific),
    H5LOOM_ROUTE(kDatasetClass, optional), H5LOOM_ROUTE(kDatasetClass, close)};
const H5VL_datatype_class_t kDatatype = {
    H5LOOM_ROUTE(kDatatypeClass, commit),   H5LOOM_ROUTE(kDatatypeClass, open),
    H5LOOM_ROUTE(kDatatypeClass, get),      H5LOOM_ROUTE(kDatatypeClass, specific),
    H5LOOM_ROUTE(kDatatypeClass, optional), H5LOOM_ROUTE(kDatatypeClass, close)};
const H5VL_file_class_t kFile = {choose_file_create, choose_file_open, H5LOOM_ROUTE(kFileClass, get), choose_file_specific,
                                 H5LOOM_ROUTE(kFileClass, optional), H5LOOM_ROUTE(kFileClass, close)};
const H5VL_group_class_t kGroup = {
    H5LOOM_ROUTE(kGroupClass, create),   H5LOOM_ROUTE(kGroupClass, open),     H5LOOM_ROUTE(kGroupClass, get),
    H5LOOM_ROUTE(kGroupClass, specific), H5LOOM_ROUTE(kGroupClass, optional), H5LOOM_ROUTE(kGroupClass, close)};
const H5VL_link_class_t kLink = {link_create,
                                 H5LOOM_ROUTE(kLinkClass, copy),
                                 H5LOOM_ROUTE(kLinkClass, move),
                                 H5LOOM_ROUTE(kLinkClass, get),
                                 H5LOOM_ROUTE(kLinkClass, specific),
                                 H5LOOM_ROUTE(kLinkClass, optional)};
const H5VL_object_class_t kObject = {H5LOOM_ROUTE(kObjectClass, open), H5LOOM_ROUTE(kObjectClass, copy),
                                     H5LOOM_ROUTE(kObjectClass, get), H5LOOM_ROUTE(kObjectClass, specific),
                                     H5LOOM_ROUTE(kObjectClass, optional)};
const H5VL_blob_class_t kBlob = {H5LOOM_ROUTE(kBlobClass, put), H5LOOM_ROUTE(kBlobClass, get),
                                 H5LOOM_ROUTE(kBlobClass, specific), H5LOOM_ROUTE(kBlobClass, optional)};
const H5VL_token_class_t kToken = {token_cmp, token_to_str, token_from_str};

}  // namespace routed

}  // namespace h5loom::vol
