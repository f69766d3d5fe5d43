// A writer for the crash tests (tests/python/log/test_log_crash.py): step after
// step, every rank writes its part of a few datasets, then flushes, and rank 0
// prints "committed <step>" once the flush has returned. The test kills it.
//   log_crash_writer FILE STEPS ELEMENTS_PER_RANK [ENGINE_JSON]
#include <h5loom/h5loom.hpp>
#include <unistd.h>

#include <cstdio>
#include <string>

// The value every element gets: a function of step, rank and index only.
static double value(uint64_t step, uint64_t global_index) { return double(step) * 1e6 + double(global_index); }

int main(int argc, char** argv) try {
  if (argc < 4) return 2;
  std::string path = argv[1];
  uint64_t steps = std::stoull(argv[2]), n = std::stoull(argv[3]);
  h5loom::FileOptions o;
  o.engine = argc > 4 ? argv[4] : "log";
  auto f = h5loom::File::create(path, o);
  const uint64_t r = uint64_t(f.rank()), size = uint64_t(f.size());
  std::printf("rank %llu pid %d\n", (unsigned long long)r, int(getpid()));
  std::fflush(stdout);
  for (uint64_t s = 0; s < steps; ++s) {
    auto g = f.create_group("step" + std::to_string(s));
    g.set_attribute("step", s);
    for (const char* name : {"a", "b"}) {
      auto ds = g.create_dataset<double>(name, {n * size});
      std::vector<double> mine(n);
      for (uint64_t i = 0; i < n; ++i) mine[i] = value(s, r * n + i) + (name[0] == 'b' ? 0.5 : 0.0);
      // Many small writes: the engine coalesces them.
      for (uint64_t i = 0; i < n; i += 4096)
        ds.write_copy(h5loom::Selection::box({r * n + i}, {std::min<uint64_t>(4096, n - i)}), mine.data() + i,
                      std::min<uint64_t>(4096, n - i));
    }
    f.flush();
    if (r == 0) {
      std::printf("committed %llu\n", (unsigned long long)s);
      std::fflush(stdout);
    }
  }
  f.close();
  if (r == 0) std::printf("closed\n");
  return 0;
} catch (const h5loom::Error& e) {
  std::fprintf(stderr, "log_crash_writer: %s\n", e.what());
  return 1;
}
