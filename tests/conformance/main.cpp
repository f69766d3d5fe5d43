// Runner for the conformance suite: picks the engine, skips undeclared groups,
// makes a failure on any rank a failure of the test, and writes a JSON summary
// (engine x group x ranks) that tools/conformance_table.py turns into a table.
//
//   mpirun -n 4 h5loom_conformance --engine hdf5 --summary out.json
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "conformance.hpp"
#include "h5loom/tools.hpp"

namespace conformance {

Environment& env() {
  static Environment e;
  return e;
}

static std::vector<std::string>& declared_groups() {
  static std::vector<std::string> g;
  return g;
}

// The series veneer is built on the object model only, so it is tested on every
// engine that declares the groups it uses.
static const std::vector<std::string> kSeriesNeeds = {"file", "group", "dataset", "attribute", "selection", "extend"};

void ConformanceTest::SetUp() {
  const auto& groups = declared_groups();
  auto declared = [&](const std::string& g) { return std::find(groups.begin(), groups.end(), g) != groups.end(); };
  if (std::string(capability_group()) == "series") {
    for (const auto& g : kSeriesNeeds)
      if (!declared(g)) GTEST_SKIP() << "the series veneer needs group '" << g << "', which engine '" << env().label
                                     << "' does not declare";
    return;
  }
  if (!declared(capability_group()))
    GTEST_SKIP() << "engine '" << env().label << "' does not declare conformance group '" << capability_group() << "'";
}

void ConformanceTest::TearDown() {
  int local = HasFailure() ? 1 : 0, any = 0;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any && !local) ADD_FAILURE() << "this test failed on another rank (see that rank's output)";
}

std::string ConformanceTest::file_path(const std::string& tag) const {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "_" + info->name() + (tag.empty() ? "" : "_" + tag);
  return env().dir + "/" + name + ".h5";
}

h5loom::FileOptions ConformanceTest::options() const {
  h5loom::FileOptions o;
  o.comm = MPI_COMM_WORLD;
  o.engine = env().engine_config;
  return o;
}

void ConformanceTest::remove_file(const std::string& path) const {
  if (rank() == 0) {
    if (is_url(path)) {  // objects of a remote store: its engine removes them
      if (!h5loom::file_storage(path, options().engine).empty()) h5loom::remove_file(path, options().engine);
    } else {
      std::filesystem::remove(path);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

bool ConformanceTest::is_url(const std::string& path) { return path.find("://") != std::string::npos; }

// Counts results per test suite (= capability group) on rank 0.
class SummaryListener : public ::testing::EmptyTestEventListener {
 public:
  struct Counts {
    int passed = 0, failed = 0, skipped = 0;
  };
  std::map<std::string, Counts> by_group;
  void OnTestEnd(const ::testing::TestInfo& info) override {
    auto& c = by_group[info.test_suite_name()];
    const auto* r = info.result();
    if (r->Skipped()) ++c.skipped;
    else if (r->Failed()) ++c.failed;
    else ++c.passed;
  }
};

}  // namespace conformance

int main(int argc, char** argv) {
  // FUNNELED: the async wrapper's background thread makes no MPI call, but
  // MPI_THREAD_SINGLE (MPI_Init's level) allows no other thread at all.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  auto& e = conformance::env();
  MPI_Comm_rank(MPI_COMM_WORLD, &e.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &e.size);

  std::string summary_path;
  e.engine_config = "hdf5";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--engine" && i + 1 < argc) e.engine_config = argv[++i];
    else if (a == "--label" && i + 1 < argc) e.label = argv[++i];
    else if (a == "--summary" && i + 1 < argc) summary_path = argv[++i];
    else if (a == "--dir" && i + 1 < argc) e.dir = argv[++i];
  }
  int rc = 0;
  try {
    auto engine = h5loom::engine::make_engine(e.engine_config);
    conformance::declared_groups() = engine->conformance_groups();
    std::string name = engine->name();
    e.base_engine = name.substr(name.rfind('>') == std::string::npos ? 0 : name.rfind('>') + 1);
    if (e.label.empty()) e.label = name;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "conformance: cannot build engine '%s': %s\n", e.engine_config.c_str(), ex.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::string safe = e.label;
  for (auto& c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  if (e.dir.empty()) e.dir = "conformance-files";
  e.dir += "/" + safe + "-np" + std::to_string(e.size);
  if (e.rank == 0 && !conformance::ConformanceTest::is_url(e.dir)) std::filesystem::create_directories(e.dir);
  MPI_Barrier(MPI_COMM_WORLD);

  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (e.rank != 0) delete listeners.Release(listeners.default_result_printer());
  auto* summary = new conformance::SummaryListener;
  listeners.Append(summary);
  if (e.rank == 0)
    std::printf("h5loom conformance: engine %s, %d rank(s), files in %s\n", e.label.c_str(), e.size, e.dir.c_str());

  rc = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  if (e.rank == 0 && !summary_path.empty()) {
    nlohmann::json j;
    j["engine"] = e.label;
    j["ranks"] = e.size;
    for (const auto& [group, c] : summary->by_group)
      j["groups"][group] = {{"passed", c.passed}, {"failed", c.failed}, {"skipped", c.skipped}};
    std::filesystem::path p(summary_path);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
    std::ofstream(summary_path) << j.dump(2) << "\n";
  }
  MPI_Finalize();
  return any;
}
