// What crash_writer writes, computed the same way by crash_explore: every value
// is a function of (step, dataset, rank, index) only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace crashvals {

// The shape of a run; rank 0 records it in the trace as the first mark.
struct Params {
  uint64_t steps = 0, ranks = 0;
  uint64_t n = 300;   // elements per rank of small, ids, sparse
  uint64_t rows = 5;  // rows per rank of rows and of /series per step
  uint64_t c = 6;     // columns of rows and /series
  uint64_t br = 2, bc = 64;  // the rows and columns of each rank's box of big

  std::string encode() const {
    char b[256];
    std::snprintf(b, sizeof b, "params:steps=%llu:ranks=%llu:n=%llu:rows=%llu:c=%llu:br=%llu:bc=%llu",
                  (unsigned long long)steps, (unsigned long long)ranks, (unsigned long long)n,
                  (unsigned long long)rows, (unsigned long long)c, (unsigned long long)br,
                  (unsigned long long)bc);
    return b;
  }
  bool decode(const std::string& s) {
    unsigned long long v[7];
    if (std::sscanf(s.c_str(), "params:steps=%llu:ranks=%llu:n=%llu:rows=%llu:c=%llu:br=%llu:bc=%llu", &v[0],
                    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) != 7)
      return false;
    steps = v[0], ranks = v[1], n = v[2], rows = v[3], c = v[4], br = v[5], bc = v[6];
    return true;
  }
};

enum Tag : uint64_t { kSmall = 1, kRows = 2, kBig = 3, kSparse = 4, kSeries = 5 };

// Exact in a double for step < 1000, rank < 1000, index < 10^7.
inline double value(uint64_t step, uint64_t tag, uint64_t rank, uint64_t index) {
  return double(step + 1) * 1e12 + double(tag) * 1e10 + double(rank) * 1e7 + double(index);
}
inline int32_t id_value(uint64_t step, uint64_t rank, uint64_t index) {
  return int32_t((step + 1) * 100000000ull + rank * 100000ull + index);
}
inline std::string step_name(uint64_t k) { return "step" + std::to_string(k); }
inline std::string step_label(uint64_t k) { return "step " + std::to_string(k) + " of the crash writer"; }

}  // namespace crashvals
