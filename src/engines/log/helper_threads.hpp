// The log engine's helper threads: the syncs of a commit (the log's data,
// a new file's directories, the front file) run on them while the caller goes
// on placing, writing and building the front file.
//
// Why not a thread per sync (std::async): a new thread starts only after the
// scheduler has given the running ones their turn (on Linux a new task's
// first slice comes after the others'), and MPI ranks waiting in a collective
// keep their cores busy, so on a full node a fresh thread began its fdatasync
// about a millisecond late. These threads exist already and sleep between
// syncs; one that wakes starts at once (the caller yields to it: below).
#pragma once

#include <functional>
#include <future>

namespace h5loom::logengine {

// Whether the caller waits for a task's result soon, or only at a later
// collective part of the program. Two sets of threads serve them:
//  * Now: a sync the caller's commit waits for within the same call (a
//    blocking flush, close). The caller yields its core once after waking
//    the thread, so that the sync starts before the caller's next
//    collective call, where an MPI rank busy-polls.
//  * Later: a sync whose outcome the next flush's collective part asks for
//    (the async wrapper's flushes in stages: the commit's data and index, the
//    commit record). Its threads are Linux batch threads (SCHED_BATCH), as
//    the async wrapper's mover: woken, they do not take the CPU from the
//    program's thread, which goes on through the flush's collective calls
//    (2 ranks on 2 cores: the flush in stages took 90-100 us less per file
//    step, measured in session 31; docs/benchmarks.md), and they run once a
//    core is free or the program waits.
enum class Urgency { Now, Later };

// Starts the process's helper threads if they are not running yet (a file
// opened for writing asks, so that its first commit does not wait for them).
// They are kept, asleep when idle, until the process ends.
void start_helper_threads();

// A task's result. Like the future of std::async, it waits for its task when
// dropped unasked (a commit abandoned on an error): the task refers to its
// file, which may go right after.
class HelperResult {
 public:
  HelperResult() = default;
  explicit HelperResult(std::future<int> f) : future_(std::move(f)) {}
  HelperResult(HelperResult&&) = default;
  HelperResult& operator=(HelperResult&& o) {
    if (this != &o) wait(), future_ = std::move(o.future_);
    return *this;
  }
  ~HelperResult() { wait(); }
  bool valid() const { return future_.valid(); }
  int get() { return future_.get(); }  // rethrows the task's exception

 private:
  void wait() {
    if (future_.valid()) future_.wait();
  }
  std::future<int> future_;
};

// Runs `task` on one of the helper threads, or - if none can be started - on
// the caller's thread when the result is asked for. Tasks must not wait for
// one another: a few threads serve them all, in order.
HelperResult run_on_helper(std::function<int()> task, Urgency urgency = Urgency::Now);

}  // namespace h5loom::logengine
