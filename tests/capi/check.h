/* What the C API test programs share: the rank, counted checks, and the
 * CHECK/OK macros (a failed check prints the last h5loom error). One
 * translation unit per program includes it. */
#ifndef H5LOOM_TESTS_CAPI_CHECK_H
#define H5LOOM_TESTS_CAPI_CHECK_H

#include <h5loom/h5loom.h>
#include <stdio.h>

static int rank_ = 0, nranks_ = 1, checks = 0, failures = 0;

#define CHECK(cond)                                                                                     \
  do {                                                                                                  \
    ++checks;                                                                                           \
    if (!(cond)) {                                                                                      \
      ++failures;                                                                                       \
      fprintf(stderr, "rank %d: %s:%d: CHECK failed: %s (last error %s: %s)\n", rank_, __FILE__, __LINE__, \
              #cond, loom_status_name(loom_last_error_code()), loom_last_error_message());              \
    }                                                                                                   \
  } while (0)
#define OK(call) CHECK((call) == LOOM_OK)

#endif
