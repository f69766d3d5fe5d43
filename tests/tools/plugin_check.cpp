// Checks loading an engine plugin (examples/plugin_wrapper): run with
// H5LOOM_PLUGIN_PATH naming the tally plugin, at any number of ranks.
//   plugin_check DIR
// Exit 0 if the wrapper is registered, stacks over hdf5, passes the data
// through unchanged and records the total bytes of every rank.
#include <h5loom/engine_plugin.hpp>
#include <h5loom/h5loom.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace h5loom;

static int failures = 0;
static void expect(bool ok, const char* what) {
  if (!ok) std::fprintf(stderr, "plugin_check: FAILED: %s\n", what), ++failures;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  ensure_mpi();
  int world = 1;  // one file per job size: ctest runs plugin-np1/2/4 side by side in one directory
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const std::string path = std::string(argv[1]) + "/tally-np" + std::to_string(world) + ".h5";
  auto wrappers = engine::wrapper_names();
  expect(std::find(wrappers.begin(), wrappers.end(), "tally") != wrappers.end(), "tally is a registered wrapper");

  FileOptions o;
  o.engine = R"({"engine": "hdf5", "wrappers": ["tally"], "tally": {"attribute": "bytes_written"}})";
  int rank = 0, size = 1;
  {
    auto f = File::create(path, o);
    rank = f.rank(), size = f.size();
    expect(f.engine_name() == "tally>hdf5", "the stack is tally>hdf5");
    expect(f.describe().find("tally.bytes_this_rank") != std::string::npos, "describe() shows the wrapper's line");
    auto ds = f.create_dataset<int32_t>("x", {uint64_t(4 * size)});
    std::vector<int32_t> mine = {rank, rank, rank, rank};
    ds.write_copy(Selection::box({uint64_t(4 * rank)}, {4}), mine);
    f.close();
  }
  {
    auto f = File::open(path, Mode::Read);  // plain hdf5: the attribute is in the file
    expect(f.attribute("bytes_written").as<uint64_t>() == uint64_t(16 * size), "the total of every rank's bytes");
    auto all = f.dataset("x").read<int32_t>();
    for (int r = 0; r < size; ++r)
      for (int k = 0; k < 4; ++k) expect(all[std::size_t(4 * r + k)] == r, "the data passed through unchanged");
  }
  try {
    engine::load_plugin(std::string(argv[1]) + "/no-such-plugin.so");
    expect(false, "a missing plugin raises");
  } catch (const ConfigError& e) {
    expect(std::string(e.what()).find("no-such-plugin.so") != std::string::npos, "the error names the plugin");
  }
  if (rank == 0 && failures == 0) std::printf("plugin_check: OK at %d ranks\n", size);
  return failures ? 1 : 0;
}
