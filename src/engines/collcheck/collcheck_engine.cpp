// The collcheck wrapper: before forwarding a call to the engine below it, all
// ranks compare what they are about to do (call, object, value). A mismatch is
// reported as CollectiveMismatchError naming the ranks and their calls, instead
// of a hang deep inside MPI-IO; nothing reaches the inner engine, so the file
// stays usable. Turned on by H5LOOM_CHECK_COLLECTIVE=1 or {"wrappers": ["collcheck"]}.
// The idea is HDF5's H5_COLL_API_SANITY_CHECK, made a stackable engine.
#include <chrono>
#include <functional>
#include <map>
#include <thread>

#include "core/mpi_util.hpp"
#include "engine/registry.hpp"
#include "h5loom/forwarding_engine.hpp"

namespace h5loom::collcheck {

using engine::Call;
using engine::FunctionRef;

namespace {

struct CheckedFile : engine::ForwardingEngine::WrappedFile {
  uint64_t calls = 0;  // collective calls made on this file so far
};

class CollCheckEngine final : public engine::ForwardingEngine {
 public:
  CollCheckEngine(std::unique_ptr<Engine> inner, double timeout_s)
      : ForwardingEngine(std::move(inner)), timeout_s_(timeout_s) {}

  std::string wrapper_name() const override { return "collcheck"; }
  engine::Properties describe(engine::FileHandle& fh) override {
    auto p = ForwardingEngine::describe(fh);
    p.emplace_back("collcheck.timeout", std::to_string(timeout_s_) + " s");
    return p;
  }

 protected:
  std::unique_ptr<WrappedFile> make_file() const override { return std::make_unique<CheckedFile>(); }
  // Collective calls are compared first; put() is each rank's own, nothing to agree on.
  void around(WrappedFile& f, const Call& call, FunctionRef<void()> run) override {
    if (call.collective) agree(static_cast<CheckedFile&>(f), std::string(call.op) + "(" + call.arguments() + ")");
    run();
  }

 private:
  // All ranks exchange (call number, hash of the call); on any difference they
  // exchange the full descriptions and every rank throws the same report.
  void agree(CheckedFile& f, const std::string& call) {
    const uint64_t number = ++f.calls;
    uint64_t mine[2] = {number, std::hash<std::string>{}(call)};
    int size = 1;
    MPI_Comm_size(f.comm, &size);
    std::vector<uint64_t> all(2 * static_cast<std::size_t>(size));
    MPI_Request req;
    MPI_Iallgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, f.comm, &req);
    wait_or_timeout(req, f, number, call, size);

    bool same = true;
    for (int r = 0; r < size; ++r) same = same && all[2 * r] == mine[0] && all[2 * r + 1] == mine[1];
    if (same) return;

    // Every rank reached this point, so this second exchange cannot hang.
    auto calls = mpi::allgather_strings(f.comm, "#" + std::to_string(number) + " " + call);
    std::map<std::string, std::string> ranks_by_call;
    for (int r = 0; r < size; ++r) {
      auto& ranks = ranks_by_call[calls[r]];
      ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    }
    std::string msg = "collective calls on file '" + f.location + "' do not match across ranks:";
    for (const auto& [c, ranks] : ranks_by_call)
      msg += std::string(" rank") + (ranks.find(',') == std::string::npos ? " " : "s ") + ranks + " called " + c + ";";
    msg.back() = '.';
    throw CollectiveMismatchError(msg);
  }

  void wait_or_timeout(MPI_Request& req, const CheckedFile& f, uint64_t number, const std::string& call, int size) {
    auto start = std::chrono::steady_clock::now();
    auto pause = std::chrono::microseconds(20);
    for (;;) {
      int done = 0;
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) return;
      double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (waited > timeout_s_) {
        int rank = 0;
        MPI_Comm_rank(f.comm, &rank);
        // The pending exchange cannot be cancelled (MPI forbids it); the job is broken anyway.
        throw CollectiveMismatchError("collective call #" + std::to_string(number) + " " + call + " on file '" +
                                      f.location + "': rank " + std::to_string(rank) + " waited " +
                                      std::to_string(static_cast<int>(waited)) + " s but not all " +
                                      std::to_string(size) +
                                      " ranks reached an h5loom collective call; a rank skipped calls or is "
                                      "blocked elsewhere");
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(10000));
    }
  }

  double timeout_s_;
};

}  // namespace
}  // namespace h5loom::collcheck

namespace h5loom::engine {
std::unique_ptr<Engine> make_collcheck_wrapper(Knobs& knobs, std::unique_ptr<Engine> inner) {
  double timeout = knobs.get<double>("timeout", 60.0);
  if (const char* env = std::getenv("H5LOOM_CHECK_COLLECTIVE_TIMEOUT"); env && *env) {
    try {
      timeout = std::stod(env);
    } catch (const std::exception&) {
      throw ConfigError(std::string("H5LOOM_CHECK_COLLECTIVE_TIMEOUT='") + env + "' is not a number of seconds");
    }
  }
  if (!(timeout > 0)) knobs.bad_value("timeout", "must be a positive number of seconds");
  return std::make_unique<collcheck::CollCheckEngine>(std::move(inner), timeout);
}
}  // namespace h5loom::engine
