// Randomised soak test of the async wrapper (docs/async.md, docs/testing.md).
//
//   async_soak ITERATIONS SEED DIR
//
// Each iteration opens one to three files through a randomly chosen async
// stack, and over a few steps makes random datasets and random writes of
// every kind: copied, lent (kept unchanged until the flush that follows has
// completed), and handed over (moved vectors). Buffers are reused or freed
// right after copied writes. Each step ends with a flush_async whose request
// is waited at once, later, or never. Reads check values between steps, and
// random ranks make a bad collective call now and then (a maximum shape below
// the shape, an extent past the maximum; the other ranks' arguments are
// fine), which every rank must see raised, with nothing changed. At the end every
// file is closed (close, or close_async and a later wait), reopened with its
// base engine and checked element by element. Every rank draws the same random choices (one seed), except the
// values it writes. The test fails if a value is wrong or an expected error is
// missing, and ctest's timeout catches a hang. `make tsan-soak` runs it under
// ThreadSanitizer.
#include <h5loom/h5loom.hpp>
#include <h5loom/tools.hpp>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace h5loom;

namespace {

int rank_ = 0, nranks_ = 1;
long failures = 0;

#define CHECK(cond)                                                                                   \
  do {                                                                                                \
    if (!(cond)) {                                                                                    \
      ++failures;                                                                                     \
      std::fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank_, __FILE__, __LINE__, #cond); \
    }                                                                                                 \
  } while (0)

const char* const kStacks[] = {
    "async+log",
    "async+hdf5",
    R"({"engine":"log","wrappers":["async"],"async":{"batch_bytes":4096,"max_queued_bytes":16384}})",
    R"({"engine":"hdf5","wrappers":["async"],"async":{"batch_bytes":1,"max_queued_bytes":1}})",
    R"({"engine":"log","wrappers":["async","trace"],"log":{"buffer_size":8192,"sync":false}})",
};

// The value element i of dataset d holds after write number `version`.
double value_of(int d, uint64_t i, uint64_t version) { return double(d) * 1e9 + double(version) * 1e5 + double(i); }

// One open file and what it should hold.
struct OpenFile {
  std::string path;
  std::optional<File> file;
  std::vector<std::vector<double>> expected;        // per dataset, every element (this rank's view of all)
  std::deque<std::vector<double>> lent;             // lent buffers of the flush not yet completed
  std::deque<std::vector<double>> lent_before;      // lent buffers of the pending flush
  std::optional<Request> pending;                   // a flush_async not yet waited
};

struct Soak {
  std::mt19937_64 shared;  // the same draws on every rank
  uint64_t version = 0;

  uint64_t draw(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(shared); }

  // A bad collective call on one random rank (or all): raised on every rank, nothing changed.
  void bad_call(OpenFile& of) {
    const int culprit = int(draw(uint64_t(nranks_) + 1)) - 1;  // -1: every rank
    const bool me = culprit < 0 || culprit == rank_;
    bool raised = false;
    try {
      if (draw(2) == 0) {  // a maximum shape below the shape
        of.file->create_dataset<double>("fresh_" + std::to_string(version), {4}, {me ? 2u : 4u});
      } else {
        auto ds = of.file->dataset("d0");
        Dims shape = ds.shape();
        if (me) shape[0] += 1;  // d0 has no room to grow
        ds.extend(shape);
      }
    } catch (const Error&) {
      raised = true;
    }
    CHECK(raised);
  }

  void write_step(OpenFile& of, int step) {
    File& f = *of.file;
    const int datasets = int(of.expected.size());
    const uint64_t writes = 1 + draw(12);
    for (uint64_t k = 0; k < writes; ++k) {
      const int d = int(draw(uint64_t(datasets)));
      const uint64_t n = of.expected[std::size_t(d)].size() / uint64_t(nranks_);
      // This rank writes inside its own slice: [rank * n, (rank + 1) * n).
      const uint64_t start = draw(n), count = 1 + draw(n - start);
      const uint64_t v = ++version;
      std::vector<double> data(count);
      for (uint64_t i = 0; i < count; ++i) data[i] = value_of(d, uint64_t(rank_) * n + start + i, v);
      auto ds = f.dataset("d" + std::to_string(d));
      const auto sel = Selection::box({uint64_t(rank_) * n + start}, {count});
      switch (draw(3)) {
        case 0:  // copied: the buffer is overwritten and freed at once
          ds.write_copy(sel, data);
          std::fill(data.begin(), data.end(), -1.0);
          break;
        case 1:  // lent: kept unchanged until the flush that follows has completed
          of.lent.push_back(std::move(data));
          ds.write(sel, of.lent.back().data(), count);
          break;
        default:  // handed over
          ds.write(sel, std::vector<double>(data));
          break;
      }
      // Every rank learns what every rank wrote (for reads of the whole dataset).
      for (int r = 0; r < nranks_; ++r) {
        uint64_t s = start, c = count;
        MPI_Bcast(&s, 1, MPI_UINT64_T, r, MPI_COMM_WORLD);
        MPI_Bcast(&c, 1, MPI_UINT64_T, r, MPI_COMM_WORLD);
        uint64_t vv = v;
        MPI_Bcast(&vv, 1, MPI_UINT64_T, r, MPI_COMM_WORLD);
        for (uint64_t i = 0; i < c; ++i)
          of.expected[std::size_t(d)][uint64_t(r) * n + s + i] = value_of(d, uint64_t(r) * n + s + i, vv);
      }
    }
    (void)step;
  }

  void end_step(OpenFile& of) {
    File& f = *of.file;
    if (of.pending) {  // a request kept: waited now
      of.pending->wait();
      of.pending.reset();
    }
    // A dropped one completes in this collective call: its lent buffers are free after it.
    Request r = f.flush_async(draw(2) ? FlushLevel::Durable : FlushLevel::Visible);
    of.lent_before.clear();
    of.lent_before.swap(of.lent);
    switch (draw(3)) {
      case 0:
        r.wait();
        CHECK(r.test());
        of.lent_before.clear();
        break;
      case 1:
        of.pending = std::move(r);  // waited later
        break;
      default:
        break;  // dropped: the next collective call completes it (lent_before kept until then)
    }
  }

  void check_all(OpenFile& of) {
    for (std::size_t d = 0; d < of.expected.size(); ++d) {
      auto got = of.file->dataset("d" + std::to_string(d)).read<double>();
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < got.size(); ++i) wrong += got[i] != of.expected[d][i];
      CHECK(got.size() == of.expected[d].size());
      if (wrong) std::fprintf(stderr, "rank %d: %s d%zu: %zu wrong values\n", rank_, of.path.c_str(), d, wrong);
      CHECK(wrong == 0);
    }
  }

  void iteration(int it, const std::string& dir) {
    const int nfiles = 1 + int(draw(3));
    std::vector<OpenFile> files(static_cast<std::size_t>(nfiles));
    for (int k = 0; k < nfiles; ++k) {
      OpenFile& of = files[std::size_t(k)];
      of.path = dir + "/soak-np" + std::to_string(nranks_) + "-" + std::to_string(it) + "-" + std::to_string(k) + ".h5";
      FileOptions fo;
      fo.engine = kStacks[draw(sizeof kStacks / sizeof kStacks[0])];
      of.file = File::create(of.path, fo);
      const int datasets = 1 + int(draw(4));
      for (int d = 0; d < datasets; ++d) {
        const uint64_t n = 1 + draw(d == 0 ? 64 : 20000);  // per rank
        of.file->create_dataset<double>("d" + std::to_string(d), {n * uint64_t(nranks_)});
        of.expected.emplace_back(n * uint64_t(nranks_), 0.0);
      }
    }
    const int steps = 1 + int(draw(5));
    for (int s = 0; s < steps; ++s) {
      for (auto& of : files) {
        write_step(of, s);
        if (draw(4) == 0) bad_call(of);
        end_step(of);
        if (draw(3) == 0) {
          if (of.pending) of.pending->wait(), of.pending.reset();
          check_all(of);  // reads are flush points: lent buffers are free after
          of.lent_before.clear();
        }
      }
    }
    // Each file closes with close() or close_async(); the closes begun
    // complete after every file has begun closing, in order or reversed
    // (lent buffers stay untouched until then).
    std::vector<Request> closing;
    for (auto& of : files) {
      if (draw(2)) closing.push_back(of.file->close_async());
      else of.file->close();
    }
    if (draw(2)) std::reverse(closing.begin(), closing.end());
    for (Request& r : closing) r.wait();
    for (auto& of : files) {
      if (of.pending) of.pending->wait();  // completed by the close: its outcome only
      of.pending.reset();
      of.lent.clear(), of.lent_before.clear();
      of.file.reset();
      FileOptions plain;  // reopened with the engine that wrote it
      of.file = File::open(of.path, Mode::Read, plain);
      check_all(of);
      of.file->close();
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank_ == 0) remove_file(of.path);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  const std::string dir = argc > 3 ? argv[3] : ".";
  Soak soak;
  soak.shared.seed(seed);
  for (int it = 0; it < iterations; ++it) {
    try {
      soak.iteration(it, dir);
    } catch (const std::exception& e) {
      ++failures;
      std::fprintf(stderr, "rank %d: iteration %d: unexpected error: %s\n", rank_, it, e.what());
      break;  // the ranks may now be in different calls: stop here
    }
  }
  long total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0)
    std::printf("async soak: %d iterations at %d rank(s), seed %llu: %ld failed checks\n", iterations, nranks_,
                (unsigned long long)seed, total);
  MPI_Finalize();
  return total ? 1 : 0;
}
