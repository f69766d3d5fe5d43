// Copies that stay fast when the destination lies just past the source in
// its page.
//
// On AMD Zen CPUs with fast short REP MOVSB (FSRM; measured on this
// project's machines, docs/benchmarks.md "Reads into malloc'd buffers"),
// `rep movsb` runs 3-6x slower when (destination - source) mod 4096 is 1..31:
// its loads and stores alias in the store buffer. glibc's memcpy uses it for
// copies of about 2 KiB to 1 MiB, and the kernel for every read and write
// between the page cache and user memory. A buffer from malloc lies 16 bytes
// past a page, so reading into one from a page-aligned offset of a file, or
// copying between it and a page-aligned buffer, is exactly that case.
#pragma once

#include <cstddef>
#include <cstdint>

namespace h5loom {

// True when a copy from `src` to `dst` is the slow case. 32..63 are counted
// too, as a margin for CPUs whose window is wider.
inline bool page_aliased(std::uintptr_t dst, std::uintptr_t src) {
  const std::uintptr_t d = (dst - src) & 4095;
  return d != 0 && d < 64;
}

// memcpy; when page_aliased, in pieces small enough that glibc copies them
// with vector moves instead of `rep movsb` (about 11 GB/s here, against 3).
void copy_bytes(void* dst, const void* src, std::size_t n);

// A copy of `n` bytes to a destination nothing reads soon (the async
// wrapper's copies, which its mover writes out after the step's other
// writes): on x86-64 its stores bypass the caches. A cached store first
// reads the line it fills; this one does not, and it leaves the caches to
// the program's data. On this project's machine a 4 MiB copy takes about
// 0.26 ms this way against 0.41 ms with glibc's memcpy, which streams only
// above 240 MiB here (its x86_non_temporal_threshold, 3/4 of the L3 per
// thread). The stores are fenced before it returns: whatever hands the copy
// to another thread publishes them too. Elsewhere it is copy_bytes.
void copy_bytes_uncached(void* dst, const void* src, std::size_t n);

}  // namespace h5loom
