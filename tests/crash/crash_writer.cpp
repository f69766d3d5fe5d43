// The writer of the crash-state explorer (tests/crash/README.md): a multi-step,
// multi-rank write through the public API, run under the recorder shim
// (crash_shim.so). After each File::flush() returns, rank 0 marks "step K" in
// the trace: from there on, step K must survive any crash.
//
//   crash_writer FILE STEPS [ENGINE_JSON] [--big-bytes N] [--append]
//
// --append: open an existing FILE read-write (a file this writer made, maybe
// left by a crash) and add STEPS steps after the ones it has; rank 0 first
// marks "initial_steps_M" (the steps the file had: durable from the start).
//
// Every value is a function of (step, dataset, rank, index) only, computed
// again by crash_explore (crash_values.hpp). Each step k, after extending the
// unlimited dataset /series by the step's rows:
//   /stepK                 group; attributes step (uint64), label (string)
//   /stepK/small  f64 [n*size]          each rank its n elements, in runs of 7 (write_copy)
//   /stepK/rows   f64 [size*R, C]       each rank its R rows, one row per write (write_copy)
//   /stepK/big    f64 [size*BR, BC]     each rank one box of BR*BC (deferred, one large write);
//                                       attribute ranks (int64)
//   /stepK/ids    i32 [n*size]          each rank its part (deferred, moved vector)
//   /stepK/sparse f64 [n*size]          each rank only the first half of its part (rest reads 0)
//   /series       f64 [(k+1)*size*R, C] (max unlimited rows) each rank its R rows of step k
//   / attribute last_step (uint64) = k
#include <dlfcn.h>
#include <h5loom/h5loom.hpp>

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "crash_values.hpp"

using namespace h5loom;
using namespace crashvals;

int main(int argc, char** argv) try {
  if (argc < 3) {
    std::fprintf(stderr, "usage: crash_writer FILE STEPS [ENGINE_JSON] [--big-bytes N] [--append] [--flush-async] [--close-only]\n");
    return 2;
  }
  std::string path = argv[1];
  Params p;
  p.steps = std::stoull(argv[2]);
  FileOptions o;
  o.engine = "log";
  uint64_t big_bytes = 8192;
  bool append = false;
  // Each step ends with flush_async, completed in the next step: with the
  // async wrapper, step K+1's group is made and its big box written into the
  // log (written through) while step K's commit record still waits.
  bool flush_async = false;
  // No flush at all: the close makes every step durable at once (the first
  // commit of a new file is then the close's, with its front file).
  bool close_only = false;
  for (int i = 3; i < argc; ++i) {
    if (std::strcmp(argv[i], "--big-bytes") == 0 && i + 1 < argc)
      big_bytes = std::stoull(argv[++i]);
    else if (std::strcmp(argv[i], "--append") == 0)
      append = true;
    else if (std::strcmp(argv[i], "--flush-async") == 0)
      flush_async = true;
    else if (std::strcmp(argv[i], "--close-only") == 0)
      close_only = true;
    else
      o.engine = argv[i];
  }
  p.bc = 64;
  p.br = (big_bytes + 8 * p.bc - 1) / (8 * p.bc);
  using mark_fn = void (*)(const char*);
  auto mark = reinterpret_cast<mark_fn>(dlsym(RTLD_DEFAULT, "crash_shim_mark"));
  if (!mark) {
    std::fprintf(stderr, "crash_writer: run me with LD_PRELOAD=crash_shim.so (no crash_shim_mark)\n");
    return 2;
  }

  auto f = append ? File::open(path, Mode::ReadWrite, o) : File::create(path, o);
  p.ranks = uint64_t(f.size());
  const uint64_t r = uint64_t(f.rank()), size = p.ranks;
  uint64_t first = 0;  // the first step this run writes
  while (append && f.exists("/" + step_name(first))) ++first;
  p.steps += first;
  if (r == 0) mark(p.encode().c_str());
  if (r == 0 && append) mark(("initial_steps_" + std::to_string(first)).c_str());
  Dataset ser = [&] {
    if (f.exists("/series")) return f.dataset("/series");
    DatasetSpec series;
    series.dtype = Datatype::Float64;
    series.shape = {0, p.c};
    series.max_shape = {kUnlimited, p.c};
    return f.create_dataset("series", series);
  }();

  Request step_flushed;  // --flush-async: the last step's flush
  auto mark_step = [&](uint64_t k) {
    if (!step_flushed.test()) throw UsageError("step " + std::to_string(k) + "'s flush did not complete");
    if (r == 0) mark(("step " + std::to_string(k)).c_str());
  };
  for (uint64_t k = first; k < p.steps; ++k) {
    std::vector<double> bigv(p.br * p.bc);
    for (uint64_t i = 0; i < bigv.size(); ++i) bigv[i] = value(k, kBig, r, i);
    std::optional<Dataset> early_big;
    if (flush_async && k > first) {
      // Before the flush point below completes step k-1: its commit record waits.
      auto g = f.create_group(step_name(k));
      early_big = g.create_dataset<double>("big", {size * p.br, p.bc});
      early_big->write_copy(Selection::box({r * p.br, 0}, {p.br, p.bc}), bigv);
    }
    ser.extend({(k + 1) * size * p.rows, p.c});  // a flush point
    if (flush_async && k > first) mark_step(k - 1);
    auto g = early_big ? f.group(step_name(k)) : f.create_group(step_name(k));
    g.set_attribute("step", k);
    g.set_attribute("label", step_label(k));

    auto small = g.create_dataset<double>("small", {p.n * size});
    std::vector<double> mine(p.n);
    for (uint64_t i = 0; i < p.n; ++i) mine[i] = value(k, kSmall, r, i);
    for (uint64_t i = 0; i < p.n; i += 7) {
      uint64_t m = std::min<uint64_t>(7, p.n - i);
      small.write_copy(Selection::box({r * p.n + i}, {m}), mine.data() + i, m);
    }

    auto rows = g.create_dataset<double>("rows", {size * p.rows, p.c});
    std::vector<double> row(p.c);
    for (uint64_t i = 0; i < p.rows; ++i) {
      for (uint64_t j = 0; j < p.c; ++j) row[j] = value(k, kRows, r, i * p.c + j);
      rows.write_copy(Selection::box({r * p.rows + i, 0}, {1, p.c}), row);
      for (uint64_t j = 0; j < p.c; ++j) row[j] = value(k, kSeries, r, i * p.c + j);
      ser.write_copy(Selection::box({(k * size + r) * p.rows + i, 0}, {1, p.c}), row);
    }

    auto big = early_big ? *early_big : g.create_dataset<double>("big", {size * p.br, p.bc});
    if ((flush_async || close_only) && !early_big)
      big.write_copy(Selection::box({r * p.br, 0}, {p.br, p.bc}), bigv);  // bigv goes before the flush (completes)
    else if (!early_big)
      big.write(Selection::box({r * p.br, 0}, {p.br, p.bc}), bigv);  // bigv lives until the flush
    big.set_attribute("ranks", int64_t(size));

    auto ids = g.create_dataset<int32_t>("ids", {p.n * size});
    std::vector<int32_t> idv(p.n);
    for (uint64_t i = 0; i < p.n; ++i) idv[i] = id_value(k, r, i);
    ids.write(Selection::box({r * p.n}, {p.n}), std::move(idv));

    auto sparse = g.create_dataset<double>("sparse", {p.n * size});
    std::vector<double> half(p.n / 2);
    for (uint64_t i = 0; i < half.size(); ++i) half[i] = value(k, kSparse, r, i);
    sparse.write_copy(Selection::box({r * p.n}, {half.size()}), half);

    f.set_attribute("last_step", k);
    if (flush_async) {
      step_flushed = f.flush_async();
      continue;
    }
    if (close_only) continue;
    f.flush();
    if (r == 0) mark(("step " + std::to_string(k)).c_str());
  }
  f.close();
  if (flush_async && p.steps > first) mark_step(p.steps - 1);
  if (close_only && r == 0)
    for (uint64_t k = first; k < p.steps; ++k) mark(("step " + std::to_string(k)).c_str());
  if (r == 0) mark("closed");
  return 0;
} catch (const h5loom::Error& e) {
  std::fprintf(stderr, "crash_writer: %s\n", e.what());
  return 1;
}
