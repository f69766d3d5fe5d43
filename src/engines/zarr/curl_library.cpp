#include "engines/zarr/curl_library.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "h5loom/errors.hpp"

namespace h5loom::zarr {

namespace {

// libcurl's ABI name since 2006; the one the build found is that ABI.
constexpr const char* kSoname = "libcurl.so.4";

template <class F>
void bind(void* lib, F& fn, const char* name, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
}

}  // namespace

const CurlLibrary& curl_library(const char* what) {
  static CurlLibrary curl{};
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    // Kept loaded for the life of the process (its handles may outlive any one store).
    void* lib = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      error = std::string("cannot load ") + kSoname + " (" + (why ? why : "unknown reason") +
              "); install libcurl (Debian: libcurl4)";
      return;
    }
    std::string missing;
    CURLcode (*global_init)(long) = nullptr;
    bind(lib, global_init, "curl_global_init", missing);
    bind(lib, curl.easy_init, "curl_easy_init", missing);
    bind(lib, curl.easy_cleanup, "curl_easy_cleanup", missing);
    bind(lib, curl.easy_reset, "curl_easy_reset", missing);
    bind(lib, curl.easy_setopt, "curl_easy_setopt", missing);
    bind(lib, curl.easy_perform, "curl_easy_perform", missing);
    bind(lib, curl.easy_getinfo, "curl_easy_getinfo", missing);
    bind(lib, curl.easy_strerror, "curl_easy_strerror", missing);
    bind(lib, curl.slist_append, "curl_slist_append", missing);
    bind(lib, curl.slist_free_all, "curl_slist_free_all", missing);
    if (!missing.empty()) {
      error = std::string(kSoname) + " lacks " + missing;
      return;
    }
    if (const CURLcode rc = global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK)
      error = std::string("curl_global_init failed (code ") + std::to_string(int(rc)) + ")";
  });
  if (!error.empty()) throw IOError(std::string(what) + " needs libcurl: " + error);
  return curl;
}

}  // namespace h5loom::zarr
