// The connector as HDF5 sees it: the class (name, value, callback tables),
// the plugin entry points, the connector info (the engine configuration) and
// introspection (capability flags, optional operations).
#include <H5PLextern.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "vol/native_route.hpp"
#include "vol/request.hpp"
#include "vol/route.hpp"
#include "vol/vol.hpp"

namespace h5loom::vol {

namespace {

// ---- the info: an engine configuration string ----------------------------------

void* info_copy(const void* info) {
  return guard<void*>(__func__, nullptr, [&]() -> void* {
    return new Info(info ? *static_cast<const Info*>(info) : Info{});
  });
}

herr_t info_cmp(int* result, const void* a, const void* b) {
  const std::string& x = a ? static_cast<const Info*>(a)->config : std::string();
  const std::string& y = b ? static_cast<const Info*>(b)->config : std::string();
  *result = x.compare(y);
  return 0;
}

herr_t info_free(void* info) {
  delete static_cast<Info*>(info);
  return 0;
}

herr_t info_to_str(const void* info, char** str) {
  const std::string& s = info ? static_cast<const Info*>(info)->config : std::string();
  // HDF5 releases the string with H5free_memory: allocate it with HDF5.
  *str = static_cast<char*>(H5allocate_memory(s.size() + 1, false));
  if (!*str) return -1;
  std::memcpy(*str, s.c_str(), s.size() + 1);
  return 0;
}

herr_t info_from_str(const char* str, void** info) {
  return guard<herr_t>(__func__, -1, [&]() -> herr_t {
    std::string s = str ? str : "";
    const auto first = s.find_first_not_of(" \t");
    const auto last = s.find_last_not_of(" \t");
    s = first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
    *info = new Info{s};
    return 0;
  });
}

// ---- introspection ----------------------------------------------------------------

extern const H5VL_class_t kClass;

// The terminal connector of a native-route object is HDF5's native one (HDF5
// asks, e.g., before the deprecated calls only the native connector serves).
herr_t get_conn_cls(void* obj, H5VL_get_conn_lvl_t lvl, const H5VL_class_t** cls) {
  if (lvl == H5VL_GET_CONN_LVL_TERM && on_native_route(obj)) return native::get_conn_cls(obj, lvl, cls);
  *cls = &kClass;
  return 0;
}

herr_t get_cap_flags(const void* info, uint64_t* flags) {
  return guard<herr_t>(__func__, -1, [&]() -> herr_t {
    const std::string config = info ? static_cast<const Info*>(info)->config : std::string();
    *flags = takes_native_route(config, nullptr) ? native::capability_flags() : capability_flags(config);
    return 0;
  });
}

// The native route has the native connector's optional operations
// (H5Fget_filesize, H5Dget_chunk_info, ...); the engine route none.
herr_t opt_query(void* obj, H5VL_subclass_t subcls, int opt_type, uint64_t* flags) {
  if (on_native_route(obj)) return native::opt_query(obj, subcls, opt_type, flags);
  *flags = 0;
  return 0;
}

// HDF5 closes whatever identifiers are still open when it shuts down, one type
// after another; an h5loom file closed then would close its engine's own HDF5
// objects while HDF5 tears them down. Closing the files first, while every
// identifier is valid, also lands their writes.
void close_files_at_shutdown(void*) { close_all_files(); }

herr_t initialize(hid_t) {
  register_errors();
  static bool registered = false;
  if (!registered && H5atclose(close_files_at_shutdown, nullptr) >= 0) registered = true;
  return 0;
}

herr_t terminate() {
  close_all_files();
  unregister_errors();
  return 0;
}

// Native-only operations that reach the connector's catch-all.
herr_t optional(void* obj, H5VL_optional_args_t* args, hid_t dxpl, void** req) {
  if (on_native_route(obj)) return native::optional(obj, args, dxpl, req);
  push_error(__func__, "optional operation " + std::to_string(args ? args->op_type : -1) +
                           " is not supported by the h5loom VOL connector");
  return -1;
}

const H5VL_class_t kClass = {
    H5VL_VERSION,  // version of the class struct
    kValue,
    kName,
    kVersion,
    // cap_flags: the ones every configuration has; the engine's are added
    // by get_cap_flags (which is what H5Pget_vol_cap_flags asks).
    H5VL_CAP_FLAG_FILE_BASIC | H5VL_CAP_FLAG_GROUP_BASIC | H5VL_CAP_FLAG_DATASET_BASIC | H5VL_CAP_FLAG_ATTR_BASIC,
    initialize,
    terminate,
    {sizeof(Info), info_copy, info_cmp, info_free, info_to_str, info_from_str},
    // Every table sends a call down its object's route (route.cpp).
    routed::kWrap,  // wraps what the native connector makes on the native route
    routed::kAttr,
    routed::kDataset,
    routed::kDatatype,
    routed::kFile,
    routed::kGroup,
    routed::kLink,
    routed::kObject,
    {get_conn_cls, get_cap_flags, opt_query},
    routed::kRequest,  // a flush through the async wrapper completes later (request.cpp); the rest in their call
    routed::kBlob,   // variable-length data and references of the native route
    routed::kToken,  // the engine route's compared as bytes
    optional,
};

}  // namespace

bool offers_named_types(const std::string& engine_name) {
  return engine_name.substr(engine_name.rfind('>') + 1) != "hdf5";  // (rfind npos + 1 = 0: no wrapper)
}

uint64_t capability_flags(const std::string& config) {  // the engine route's
  static std::mutex lock;
  static std::map<std::string, uint64_t> known;
  std::lock_guard<std::mutex> hold(lock);
  if (auto it = known.find(config); it != known.end()) return it->second;
  uint64_t flags = kClass.cap_flags | H5VL_CAP_FLAG_FILE_MORE | H5VL_CAP_FLAG_GROUP_MORE |
                   H5VL_CAP_FLAG_DATASET_MORE | H5VL_CAP_FLAG_ATTR_MORE | H5VL_CAP_FLAG_OBJECT_BASIC | H5VL_CAP_FLAG_OBJECT_MORE |
                   H5VL_CAP_FLAG_ITERATE | H5VL_CAP_FLAG_GET_PLIST | H5VL_CAP_FLAG_FLUSH_REFRESH |
                   H5VL_CAP_FLAG_BY_IDX;
  // OBJECT_MORE: H5Ocopy, H5Oget_info's reference counts, and H5Oincr_refcount
  // with engines declaring "reference_counts" (refused naming the group with others). Not
  // FILTERS, MOUNT, TRACK_TIMES, STORAGE_SIZE, ASYNC: h5loom has
  // none of those. The engine's conformance groups say what else it does. Which engine an
  // empty configuration means is only known per file: assume the default's.
  std::string name = config;
  if (name.empty()) {
    const char* env = std::getenv("H5LOOM_ENGINE");
    name = env && *env ? env : engine::kDefaultEngine;
  }
  std::unique_ptr<engine::Engine> stack;
  {
    KeepErrorPrinting keep;
    stack = engine::make_engine(name);
  }
  const std::vector<std::string> groups = stack->conformance_groups();
  auto has = [&](const char* g) { return std::find(groups.begin(), groups.end(), g) != groups.end(); };
  // Links: exists and delete (basic); information, values, iteration, moves
  // and copies (more); soft links; hard links with "hard_links"; external
  // links with "external_links" (followed where objects are opened).
  if (has("links")) flags |= H5VL_CAP_FLAG_LINK_BASIC | H5VL_CAP_FLAG_LINK_MORE | H5VL_CAP_FLAG_SOFT_LINKS;
  if (has("links") && has("references") && has("hard_links")) flags |= H5VL_CAP_FLAG_HARD_LINKS;
  // H5Lcreate_ud with "user_defined_links": a well-formed external-class
  // value is an external link; any other value, or a class the application
  // registered, is kept as given and never followed.
  if (has("links") && has("external_links")) flags |= H5VL_CAP_FLAG_EXTERNAL_LINKS;
  if (has("links") && has("user_defined_links")) flags |= H5VL_CAP_FLAG_UD_LINKS;
  // Creation order covers links (group "order") and attributes ("attribute_edit").
  if (has("order") && has("attribute_edit")) flags |= H5VL_CAP_FLAG_CREATION_ORDER;
  if (has("fill")) flags |= H5VL_CAP_FLAG_FILL_VALUES;
  if (has("filters")) flags |= H5VL_CAP_FLAG_FILTERS;
  if (has("named_types") && offers_named_types(stack->name())) flags |= H5VL_CAP_FLAG_STORED_DATATYPES;
  known[config] = flags;
  return flags;
}

}  // namespace h5loom::vol

extern "C" {
H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_VOL; }
const void* H5PLget_plugin_info(void) { return &h5loom::vol::kClass; }
}
