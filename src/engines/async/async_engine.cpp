// The async wrapper: writes return at once and move to storage on a
// background thread (the mover, mover.hpp) while the program computes.
//
//   put()    copies the program's buffer if it is valid only during the call
//            (an owned one is kept; one lent until the flush is read when that
//            flush completes, as the engine contract lets every engine) and
//            stages the inner put(). Staged writes go to the mover as one batch
//            at the next flush, or as soon as `batch_bytes` are staged - so a
//            time step's writes do not contend with the step's other calls,
//            and move during the computation that follows it.
//            When the mover is behind - the program had to wait for it at a
//            collective call, so nothing overlapped - a write goes to the
//            inner engine at once instead, on the program's thread, as
//            without the wrapper (no copy, no hand-over), until a flush
//            leaves the mover clearly more time than those writes took.
//   flush()  hands the batch and the inner prepare_flush() - the flush's
//            local part: bytes moved and synced - to the mover and returns a
//            request at once. Its collective part (the inner flush) runs on the
//            program's thread, in program order: at the request's wait(), or
//            first thing in the next collective call on the file, whichever
//            comes first - the same point on every rank, since every rank
//            makes the same calls. So one flush at most is pending; writes put
//            meanwhile stay staged until it completes (they belong after it: a
//            later write of another rank to the same elements must win). A
//            durable flush runs there in stages where the inner engine has
//            them (flush_in_stages): its last stage - the log engine's commit
//            record - waits for the next flush's collective part or a call
//            that needs it complete, while its syncs run.
//   begin_close()  (File::close_async) hands the staged writes and the
//            close's local part (the inner prepare_flush) to the mover;
//            close() follows at the program's wait and finds the data moved.
//            A pending flush stays pending for close() to complete, unless
//            writes were staged after it: they must wait for it.
//   others   wait until the mover is done with the file, so that the inner
//            engine never sees two calls at once. Questions (shapes, listings,
//            attribute reads) do only that: they stay local. Calls that make
//            objects complete the pending flush and leave the staged writes
//            staged; the rest (reads, flushes, close, extend, unlink, move,
//            ...) complete the pending flush and send the staged writes
//            first, so no call that reads or moves data overtakes a write.
//
// Errors of a queued write are raised, on every rank, when the next flush
// completes (at its wait, or in the call that completes it). docs/async.md.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mpi_util.hpp"
#include "engine/registry.hpp"
#include "engines/async/copy_pool.hpp"
#include "engines/async/mover.hpp"
#include "h5loom/forwarding_engine.hpp"
#include "profile/profiler.hpp"

namespace h5loom::async {

using engine::Call;
using engine::FileHandle;
using engine::FlushLevel;
using engine::FunctionRef;
using engine::RequestPtr;

namespace {

// One flush whose collective part has not run yet, or has, with its outcome.
struct FlushTicket {
  FlushLevel level;
  bool done = false;
  mpi::CaughtError error;  // the same on every rank once done
};

struct Settings {
  uint64_t max_queued_bytes = uint64_t(512) << 20;
  uint64_t batch_bytes = uint64_t(64) << 20;
  // Knob "write_through": when a write goes to the engine below at once, on
  // the program's thread - when the mover is behind, always, or never.
  enum class Through { Auto, Always, Never } write_through = Through::Auto;
};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Whether the mover is behind the program: at the last collective call that
// waited for work handed to the mover, the program waited more than this.
// One for the process (its mover is one, and a code that writes a file per
// step gives every file the same time).
constexpr int64_t kBehindNs = 1000000;
// A computation the mover can hide writes behind is at least this long.
constexpr int64_t kComputeNs = 10000000;
std::atomic<bool> mover_behind{false};

struct AsyncFile : engine::ForwardingEngine::WrappedFile {
  int rank = 0;
  bool attached = false;  // uses the mover
  // Writes not yet given to the mover, in program order (the program's thread only).
  std::vector<Task> staged;
  uint64_t staged_bytes = 0;
  // Tasks of this file the mover has not finished (guarded by the mover's lock).
  int in_flight = 0;
  // The flush whose collective part has not run yet (the program's thread only).
  std::shared_ptr<FlushTicket> pending;
  // Durable flushes whose collective part ran in stages (Engine::
  // flush_in_stages) and whose last stage has not completed, oldest first:
  // the log engine's commit records, their syncs running meanwhile. The
  // inner engine completes them at the next flushes' collective parts - so
  // while the program computes - or a call that needs them complete waits
  // for them (below). Declared after `inner`'s base, so they go before the
  // inner file does.
  struct Committing {
    std::shared_ptr<FlushTicket> ticket;
    RequestPtr rest;
  };
  std::deque<Committing> committing;
  // This rank's first error in a queued task: written by the mover, read by
  // the program's thread after Mover::wait (whose lock orders the two).
  mpi::CaughtError queued_error;
  // For describe(): writes queued (and of them written through), and the
  // time the program waited for the mover.
  uint64_t puts = 0, written_through = 0;
  int64_t blocked_ns = 0;
  // Work handed to the mover since the program last waited for it.
  bool handed_over = false;
  // A flush was made before close / close is running: the program's last
  // wait, at close, says nothing of the time it leaves the mover between
  // flushes (there is no computation after the last step) - unless the close
  // was begun earlier (close_async), which leaves the mover that time.
  bool flushed = false, closing = false, close_begun = false;
  // Since the last flush: the time writes took on the program's thread
  // (written through); and when that flush was handed to the mover.
  int64_t through_ns = 0, flush_handed_ns = 0;

  ~AsyncFile() override {
    // Closed or not (a program leaving on an error), the mover must be done
    // with the inner handle before it goes. Staged writes of a file never
    // closed are dropped with it.
    if (attached) {
      Mover::instance().wait(in_flight);
      Mover::instance().detach();
    }
  }
};

bool one_of(const char* op, std::initializer_list<const char*> ops) {
  for (const char* o : ops)
    if (std::strcmp(o, op) == 0) return true;
  return false;
}

// Questions about the file's objects: they depend on no write and no flush,
// so they complete nothing and send nothing - and stay local, which matters
// because the object model may ask one on one rank alone (the shape before a
// read_independent).
bool is_query(const char* op) {
  return one_of(op, {"dataset_info", "kind", "list", "list_in_creation_order", "creation_order",
                     "next_creation_order", "has_attribute", "read_attribute", "list_attributes",
                     "list_attributes_in_creation_order", "object_token", "object_path", "soft_link", "external_link",
                     "user_defined_link", "link_count", "named_datatype"});
}

// Calls that make objects without reading or moving what a staged write
// touches: they may reach the inner engine before the staged writes.
bool leaves_writes_staged(const char* op) {
  return one_of(op, {"create_group", "create_dataset", "write_attribute", "commit_datatype", "describe"});
}

class AsyncEngine final : public engine::ForwardingEngine {
 public:
  AsyncEngine(std::unique_ptr<Engine> inner, Settings s) : ForwardingEngine(std::move(inner)), settings_(s) {}

  std::string wrapper_name() const override { return "async"; }

  std::unique_ptr<FileHandle> open(const std::string& location, engine::OpenMode mode, MPI_Comm comm) override {
    check_thread_level(location);
    auto fh = ForwardingEngine::open(location, mode, comm);
    auto& f = cast(*fh);
    MPI_Comm_rank(comm, &f.rank);
    Mover::instance().attach();
    f.attached = true;
    return fh;
  }

  void put(FileHandle& fh, engine::Write w) override {
    auto& f = cast(fh);
    // The mover is behind: the write goes below now, as without the wrapper
    // (the mover has nothing of this file and nothing is staged, so the
    // order of writes holds). Its error is kept for the next flush, as a
    // queued write's is.
    const bool through = settings_.write_through == Settings::Through::Always ||
                         (settings_.write_through == Settings::Through::Auto && mover_behind);
    if (through && !f.pending && f.staged.empty() && Mover::instance().idle(f.in_flight)) {
      const int64_t t0 = now_ns();
      ++f.puts, ++f.written_through;
      const std::string dataset = "'" + w.dataset + "'";
      run_queued(f, "write to dataset ", dataset, [&] { inner().put(*f.inner, std::move(w)); });
      f.through_ns += now_ns() - t0;
      return;
    }
    // A buffer valid only during this call is copied now: the program may
    // reuse or free it as soon as put() returns.
    if (w.buffer.lifetime() == engine::Lifetime::DuringCall) {
      if (w.bytes() >= CopyPool::kSmallest) {
        auto copy = CopyPool::instance().copy(w.data(), w.bytes());
        w.buffer = engine::WriteBuffer::owned(copy, copy.get());
      } else {
        w = w.kept();
      }
    }
    const uint64_t held = w.buffer.lifetime() == engine::Lifetime::Owned ? w.bytes() : 0;
    Engine* inner = &this->inner();
    FileHandle* inner_file = f.inner.get();
    ++f.puts;
    f.staged.push_back(Task{[&f, inner, inner_file, w = std::move(w)]() mutable {
                              const std::string dataset = "'" + w.dataset + "'";
                              run_queued(f, "write to dataset ", dataset,
                                         [&] { inner->put(*inner_file, std::move(w)); });
                            },
                            held});
    f.staged_bytes += held;
    // Enough for a batch of its own; not while a flush is pending (these
    // writes come after it, and only a collective call can complete it).
    if (f.staged_bytes >= settings_.batch_bytes && !f.pending) send_staged(f);
  }

  RequestPtr flush(FileHandle& fh, FlushLevel level) override {
    auto& f = cast(fh);
    // The one before, if any (a flush is a collective call); not the writes
    // staged since, which the flush below prepares on the mover. Its error is
    // raised once this flush is on its way: the writes staged belong to this
    // one whatever happened to the one before.
    std::shared_ptr<FlushTicket> before = complete_pending(f);
    hand_over_with_prepared_flush(f, level);
    f.flushed = true;
    f.pending = std::make_shared<FlushTicket>();
    f.pending->level = level;
    if (before && before->error.code) mpi::throw_error(before->error.code, before->error.msg);
    return std::make_unique<FlushRequest>(*this, f, f.pending);
  }

  uint64_t userblock(FileHandle& fh) override {
    auto& f = cast(fh);
    wait_for_mover(f);
    return ForwardingEngine::userblock(fh);
  }

  // Its own flush() prepares the inner one; nothing to do for an outer wrapper.
  void prepare_flush(FileHandle&, FlushLevel) override {}
  // Its own flush() already leaves the inner flush's stages to later calls.
  RequestPtr flush_in_stages(FileHandle& fh) override { return flush(fh, FlushLevel::Durable); }

  // close_async: the close's collective part waits for the program's wait;
  // its data moves now. A pending flush with nothing staged after it stays
  // pending - its data is moving already - and close() completes it. Writes
  // staged after a pending flush belong after its collective part, which
  // waits for the mover: then, and only then, this call blocks (and its
  // error, if any, is raised here).
  void begin_close(FileHandle& fh) override {
    auto& f = cast(fh);
    f.close_begun = true;
    std::shared_ptr<FlushTicket> before;
    if (f.pending && !f.staged.empty()) before = complete_pending(f);
    hand_over_with_prepared_flush(f, FlushLevel::Durable);  // no write: it may follow a pending flush
    if (before && before->error.code) mpi::throw_error(before->error.code, before->error.msg);
  }

  void close(FileHandle& fh) override {
    auto& f = cast(fh);
    if (f.close_begun) leave_write_through_after_computing(f);
    // Everything staged moves and the pending flush completes; then a last
    // agreement on this rank's queued errors, since close() is a flush too.
    // The inner file is closed whatever happened.
    // The last stage of a flush made in stages is left to the inner close,
    // which finishes it first: the log engine then names its front file in
    // that commit instead of committing an empty epoch after it.
    mpi::CaughtError failed, queued;
    f.closing = true;
    failed.run([&] { settle(f, /*all_writes=*/true, /*finish_last_stage=*/false); });
    queued.run([&] { share_queued_error(f); });  // on every rank, as settle raised on every rank or none
    if (!failed.code) failed = queued;
    mpi::CaughtError closing;
    closing.run([&] { ForwardingEngine::close(fh); });
    for (AsyncFile::Committing& c : f.committing) {  // their requests report what the inner close did with them
      if (c.rest->test()) c.ticket->error.run([&] { c.rest->wait(); });  // done: only reports
      else c.ticket->error = {int(ErrorCode::IO), "the flush's commit was abandoned: its file was closed before it completed"};
      c.ticket->done = true;
      if (!failed.code) failed = c.ticket->error;
    }
    f.committing.clear();
    if (f.attached) {
      Mover::instance().detach();
      f.attached = false;
    }
    if (failed.code) mpi::throw_error(failed.code, failed.msg);
    if (closing.code) mpi::throw_error(closing.code, closing.msg);
  }

  engine::Properties describe(FileHandle& fh) override {
    auto& f = cast(fh);
    engine::Properties p = ForwardingEngine::describe(fh);
    p.emplace_back("async", "writes queued " + std::to_string(f.puts) + " (" + std::to_string(f.written_through) +
                                " of them written through), program waited " +
                                std::to_string(double(f.blocked_ns) * 1e-9) + " s; batch_bytes " +
                                std::to_string(settings_.batch_bytes) + ", max_queued_bytes " +
                                std::to_string(settings_.max_queued_bytes) + ", write_through " +
                                through_name(settings_.write_through));
    return p;
  }

 protected:
  std::unique_ptr<WrappedFile> make_file() const override { return std::make_unique<AsyncFile>(); }

  void around(WrappedFile& wf, const Call& call, FunctionRef<void()> run) override {
    auto& f = static_cast<AsyncFile&>(wf);
    if (!call.collective) {
      // A call one rank makes alone cannot complete a flush (its collective
      // part needs every rank), and must not read around one.
      if (f.pending)
        throw UsageError(std::string(call.op) + " of '" + call.object + "' in file '" + f.location +
                         "' while a flush of the file is pending: wait for the flush first");
      send_staged(f);
      wait_for_mover(f);
      return run();
    }
    // close() has settled already, leaving the last stage of a flush made in
    // stages to the inner close.
    if (is_query(call.op) || std::string_view(call.op) == "close") {
      wait_for_mover(f);  // the inner engine never sees two calls at once
      return run();
    }
    settle(f, !leaves_writes_staged(call.op));
    run();
  }

 private:
  class FlushRequest final : public engine::Request {
   public:
    FlushRequest(AsyncEngine& e, AsyncFile& f, std::shared_ptr<FlushTicket> t)
        : engine_(e), file_(f), ticket_(std::move(t)) {}
    bool test() override { return ticket_->done; }
    void wait() override {
      // A completed flush never touches the file again (it may be closed).
      if (!ticket_->done) {
        engine_.complete_pending(file_);
        engine_.finish_committing(file_);
      }
      if (ticket_->error.code) mpi::throw_error(ticket_->error.code, ticket_->error.msg);
    }

   private:
    AsyncEngine& engine_;
    AsyncFile& file_;
    std::shared_ptr<FlushTicket> ticket_;
  };

  static AsyncFile& cast(FileHandle& fh) { return static_cast<AsyncFile&>(fh); }

  static const char* through_name(Settings::Through t) {
    return t == Settings::Through::Auto ? "auto" : t == Settings::Through::Always ? "always" : "never";
  }

  // Runs a queued task's engine call on the mover, keeping this rank's first error.
  template <class Fn>
  static void run_queued(AsyncFile& f, const char* what, const std::string& object, Fn&& fn) noexcept {
    if (f.queued_error.code) return;  // after a failed write, later ones are not made either
    try {
      f.queued_error.run(fn);
      if (f.queued_error.code)
        f.queued_error.msg =
            std::string("async ") + what + object + " of file '" + f.location + "': " + f.queued_error.msg;
    } catch (...) {  // not a std::exception (a plugin's), or no memory for the message
      f.queued_error.code = int(ErrorCode::Generic);
      f.queued_error.msg = "async write to a dataset of file '" + f.location + "' failed";
    }
  }

  // The MPI thread level the wrapper needs: its mover makes no MPI call, but
  // MPI_THREAD_SINGLE promises MPI that the process has one thread.
  static void check_thread_level(const std::string& location) {
    int level = MPI_THREAD_SINGLE, is_main = 1;
    MPI_Query_thread(&level);
    MPI_Is_thread_main(&is_main);
    if (level < MPI_THREAD_FUNNELED)
      throw ConfigError("the async wrapper (file '" + location +
                        "') needs MPI initialised with at least MPI_THREAD_FUNNELED, and the program initialised "
                        "it with MPI_THREAD_SINGLE: call MPI_Init_thread(..., MPI_THREAD_FUNNELED, ...) instead of "
                        "MPI_Init (its background thread makes no MPI call, but may not exist under SINGLE)");
    if (level == MPI_THREAD_FUNNELED && !is_main)
      throw ConfigError("file '" + location +
                        "' is opened from a thread that did not initialise MPI, and MPI was initialised with "
                        "MPI_THREAD_FUNNELED: only that thread may make h5loom's collective calls");
  }

  // The staged tasks go to the mover (the program waits first if the mover
  // holds too much memory already).
  void send_staged(AsyncFile& f) {
    if (f.staged.empty()) return;
    f.staged_bytes = 0;
    f.handed_over = true;
    if (const int64_t waited = Mover::instance().submit(f.staged, f.in_flight, settings_.max_queued_bytes))
      note_blocked(f, "async_backpressure", waited);
  }

  // The first wait after a hand-over tells whether the mover keeps up with
  // the program: if the program waits, nothing overlapped.
  void wait_for_mover(AsyncFile& f) {
    const int64_t waited = Mover::instance().wait(f.in_flight);
    if (waited) note_blocked(f, "async_wait", waited);
    if (f.handed_over && waited > kBehindNs && !(f.closing && f.flushed && !f.close_begun)) mover_behind = true;
    f.handed_over = false;
  }

  static void note_blocked(AsyncFile& f, const char* what, int64_t ns) {
    f.blocked_ns += ns;
    if (profile::enabled()) {
      const int64_t end = profile::now_ns();
      profile::record(profile::Layer::Engine, profile::Kind::Meta, what, f.location, 0, 0, end - ns, end);
    }
  }

  // Collective, before a call on the file: the pending flush completes and
  // the mover finishes with the file; with `all_writes` the staged writes go
  // first. An error of the flush is raised here too, on every rank (as well
  // as at its wait).
  // A flush whose last stage is pending stays so for calls that leave the
  // staged writes staged (they make objects, which needs no complete flush),
  // and, without `finish_last_stage`, for the inner engine's close.
  void settle(AsyncFile& f, bool all_writes, bool finish_last_stage = true) {
    std::shared_ptr<FlushTicket> t = complete_pending(f);
    if (all_writes) {
      if (finish_last_stage) {
        std::shared_ptr<FlushTicket> last = finish_committing(f);
        if (!t || !t->error.code) t = last;
      }
      send_staged(f);
    }
    wait_for_mover(f);
    if (t && t->error.code) mpi::throw_error(t->error.code, t->error.msg);
  }

  // Collective: the collective part of the pending flush, if there is one,
  // once the mover has run everything before it. Returns the flush completed.
  // The inner engine completes the last stages of earlier flushes meanwhile
  // as far as it goes (the log engine: the record of the flush before, whose
  // sync it leaves to a helper thread, and the confirmation of the one
  // before that); if one of them failed, it is the one returned.
  std::shared_ptr<FlushTicket> complete_pending(AsyncFile& f) {
    std::shared_ptr<FlushTicket> t = std::move(f.pending);
    f.pending.reset();
    if (!t) return t;
    complete(f, t);
    std::shared_ptr<FlushTicket> older = collect_committed(f);
    return older && older->error.code ? older : t;
  }

  // The staged writes and the local part of a flush at `level` (the inner
  // prepare_flush) go to the mover.
  void hand_over_with_prepared_flush(AsyncFile& f, FlushLevel level) {
    Engine* inner = &this->inner();
    FileHandle* inner_file = f.inner.get();
    // A mover that is behind (writes go through) would only make the flush
    // wait for a sync of its own: the flush's sync does it then.
    const FlushLevel early =
        settings_.write_through == Settings::Through::Auto && mover_behind ? FlushLevel::Visible : level;
    f.staged.push_back(Task{[&f, inner, inner_file, early] {
                              run_queued(f, "preparing a flush", "",
                                         [&] { inner->prepare_flush(*inner_file, early); });
                            },
                            0});
    send_staged(f);
    f.flush_handed_ns = now_ns();
  }

  // Writes went through since the last flush (or begun close), and the
  // program then left the mover time - twice as much as they took, and
  // kComputeNs more: copying pays again. (The time also holds the program's
  // own calls and, with more ranks than cores, waits for the other ranks -
  // not computation.)
  static void leave_write_through_after_computing(AsyncFile& f) {
    if (f.through_ns > 0 && now_ns() - f.flush_handed_ns >= 2 * f.through_ns + kComputeNs) mover_behind = false;
    f.through_ns = 0;
  }

  // Collective: the collective part of the flush `t`, once the mover has run
  // everything before it.
  void complete(AsyncFile& f, const std::shared_ptr<FlushTicket>& t) {
    leave_write_through_after_computing(f);
    wait_for_mover(f);
    // The inner flush runs even after a write failed on some rank: it lets go
    // of the buffers lent until this flush, which the program may free once
    // the flush has completed, failed or not. Both steps are collective.
    // A durable flush runs in stages: its last one (the log engine's commit
    // record) completes at later flushes or at the next call that needs the
    // flush complete, and the syncs run meanwhile.
    mpi::CaughtError flushed;
    RequestPtr rest;
    flushed.run([&] {
      if (t->level == FlushLevel::Durable) rest = inner().flush_in_stages(*f.inner);
      else engine::wait(inner().flush(*f.inner, t->level));
    });
    t->error.run([&] {
      share_queued_error(f);
      if (flushed.code) mpi::throw_error(flushed.code, flushed.msg);
    });
    if (rest && !rest->test()) {
      if (!t->error.code) {
        f.committing.push_back(AsyncFile::Committing{t, std::move(rest)});
        return;
      }
      mpi::CaughtError ignored;  // a write failed: the flush reports that; its rest completes now
      ignored.run([&] { rest->wait(); });
    }
    t->done = true;
  }

  // The flushes made in stages whose last stage the inner engine completed,
  // oldest first (the same on every rank: it completes them in collective
  // calls). Returns the first that failed, else the last.
  std::shared_ptr<FlushTicket> collect_committed(AsyncFile& f) {
    std::shared_ptr<FlushTicket> out;
    while (!f.committing.empty() && f.committing.front().rest->test()) out = report(f, out);
    return out;
  }

  // Collective: the last stages of the flushes made in stages, if any are
  // pending. Returns the first that failed, else the last (their errors are
  // in their tickets).
  std::shared_ptr<FlushTicket> finish_committing(AsyncFile& f) {
    if (f.committing.empty()) return nullptr;
    wait_for_mover(f);  // the inner engine never sees two calls at once
    std::shared_ptr<FlushTicket> out;
    while (!f.committing.empty()) out = report(f, out);  // the first wait completes them all
    return out;
  }

  // The oldest flush in stages completes (its request's wait(), collective
  // unless it has completed); `out` becomes it unless `out` failed.
  static std::shared_ptr<FlushTicket> report(AsyncFile& f, std::shared_ptr<FlushTicket> out) {
    AsyncFile::Committing c = std::move(f.committing.front());
    f.committing.pop_front();
    c.ticket->error.run([&] { c.rest->wait(); });
    c.ticket->done = true;
    return out && out->error.code ? out : c.ticket;
  }

  // Collective: raises on every rank the queued error of the lowest rank that has one.
  static void share_queued_error(AsyncFile& f) {
    mpi::CaughtError e = std::move(f.queued_error);
    f.queued_error = {};
    mpi::share_first_error(f.comm, f.rank, e);
  }

  Settings settings_;
};

}  // namespace
}  // namespace h5loom::async

namespace h5loom::engine {
std::unique_ptr<Engine> make_async_wrapper(Knobs& knobs, std::unique_ptr<Engine> inner) {
  // Its mover would wait on itself (the inner wrapper's back-pressure runs on the outer's mover).
  const std::string below = ">" + inner->name() + ">";
  if (below.find(">async>") != std::string::npos)
    throw ConfigError("the async wrapper is stacked twice ('async>" + inner->name() + "'): one is enough");
  async::Settings s;
  s.max_queued_bytes = knobs.get<uint64_t>("max_queued_bytes", s.max_queued_bytes);
  if (s.max_queued_bytes == 0) knobs.bad_value("max_queued_bytes", "must be at least 1 byte");
  s.batch_bytes = knobs.get<uint64_t>("batch_bytes", s.batch_bytes);
  if (s.batch_bytes == 0) knobs.bad_value("batch_bytes", "must be at least 1 byte");
  const std::string through = knobs.choice("write_through", "auto", {"auto", "always", "never"});
  s.write_through = through == "auto"     ? async::Settings::Through::Auto
                    : through == "always" ? async::Settings::Through::Always
                                          : async::Settings::Through::Never;
  return std::make_unique<async::AsyncEngine>(std::move(inner), s);
}
}  // namespace h5loom::engine
