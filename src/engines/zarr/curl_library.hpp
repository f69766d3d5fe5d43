// libcurl, loaded when the first S3 store opens instead of with h5loom: its
// two dozen dependent libraries (TLS, Kerberos, LDAP, ...) cost every program
// 6-8 ms at start-up on this machine, S3 or not (docs/benchmarks.md, "peers").
// The calls the S3 store makes, as pointers into the loaded library.
#pragma once

#include <curl/curl.h>

namespace h5loom::zarr {

struct CurlLibrary {
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  void (*easy_reset)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

// The library, loaded and initialised (curl_global_init) once per process.
// IOError naming the library and what `what` needed it for if it cannot be.
const CurlLibrary& curl_library(const char* what);

}  // namespace h5loom::zarr
