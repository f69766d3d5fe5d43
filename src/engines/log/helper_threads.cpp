#include "engines/log/helper_threads.hpp"

#include <pthread.h>
#include <sched.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace h5loom::logengine {

namespace {

// A commit runs at most three syncs at once (data, directories, front file);
// several files committing at once wait their turn.
constexpr std::size_t kThreads = 3;

class HelperThreads {
 public:
  explicit HelperThreads(Urgency urgency) : urgency_(urgency) {}

  // The process's, one set per urgency (never destroyed: a program may exit
  // while one syncs).
  static HelperThreads& instance(Urgency urgency) {
    static const bool registered = [] {
      // A child of fork() has none of its parent's threads: it starts its own.
      pthread_atfork(nullptr, nullptr, [] {
        current(Urgency::Now) = new HelperThreads(Urgency::Now);
        current(Urgency::Later) = new HelperThreads(Urgency::Later);
      });
      return true;
    }();
    (void)registered;
    return *current(urgency);
  }

  void start() {
    std::lock_guard<std::mutex> lock(mutex_);
    start_threads();
  }

  std::future<int> run(std::function<int()> task) {
    try {
      std::lock_guard<std::mutex> lock(mutex_);
      start_threads();
      if (!threads_.empty()) {
        std::packaged_task<int()> job(task);  // a copy: `task` stays whole for the fallback below
        std::future<int> result = job.get_future();
        queue_.push_back(std::move(job));
        work_.notify_one();
        return result;
      }
    } catch (...) {  // no memory for the task: it runs on the caller's thread
    }
    // No thread could be started (no memory, a thread limit): the caller
    // runs it when it asks for the result, as std::async's deferred policy.
    return std::async(std::launch::deferred, std::move(task));
  }

 private:
  static HelperThreads*& current(Urgency urgency) {
    static HelperThreads* now = new HelperThreads(Urgency::Now);
    static HelperThreads* later = new HelperThreads(Urgency::Later);
    return urgency == Urgency::Now ? now : later;
  }

  void start_threads() {  // under mutex_
    while (threads_.size() < kThreads) {
      try {
        threads_.emplace_back([this] { loop(); });
        threads_.back().detach();
      } catch (...) {
        return;
      }
    }
  }

  void loop() {
    if (urgency_ == Urgency::Later) {  // (without permission for it the thread stays as it was)
      sched_param normal{};
      ::sched_setscheduler(0, SCHED_BATCH, &normal);
    }
    for (;;) {
      std::packaged_task<int()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        work_.wait(lock, [this] { return !queue_.empty(); });
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job();  // its exception, if any, goes to its future
    }
  }

  const Urgency urgency_;
  std::mutex mutex_;
  std::condition_variable work_;
  std::deque<std::packaged_task<int()>> queue_;
  std::vector<std::thread> threads_;  // detached; kept to count them
};

}  // namespace

void start_helper_threads() {
  HelperThreads::instance(Urgency::Now).start();
  HelperThreads::instance(Urgency::Later).start();
}

HelperResult run_on_helper(std::function<int()> task, Urgency urgency) {
  HelperResult result(HelperThreads::instance(urgency).run(std::move(task)));
  // The caller's core goes to the woken thread once, if it was woken here:
  // an MPI rank busy-polls in its next collective call and keeps the core
  // for a whole slice otherwise. Measured (2 ranks on 2 cores, a close): the
  // log's sync began 570 us after it was handed over, when the other rank had
  // built the front file and the write agreement let this one go. With
  // nothing else to run here the yield returns at once.
  if (urgency == Urgency::Now) sched_yield();
  return result;
}

}  // namespace h5loom::logengine
