// PIO decompositions and rearrangers (issue 19): every offset of the
// project's F-case map and of random maps with holes round-trips through the
// box and subset rearrangers, with 1 to all ranks as I/O tasks, on the hdf5
// and log engines; frames along a leading record dimension; holes read as the
// fill value; bad maps, files and datasets refused on every rank.
//   test_pio DIR SOURCE_DIR   (under mpirun, any number of ranks)
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <fstream>
#include <random>

#include "h5loom/pio.hpp"

using namespace h5loom;
using namespace h5loom::pio;

namespace {

std::string g_dir, g_source;
int g_rank = 0, g_size = 1;

double value_of(int64_t offset, uint64_t frame) { return double(offset) * 1.5 + double(frame) * 1e6; }

// Writes two frames of `d` through every rearranger and I/O system, then
// checks the whole array (every rank reads it all) and each rank's elements.
void round_trip(const Decomposition& d, const std::string& tag, const std::string& engine) {
  const auto& map = d.map();
  const uint64_t total = product(d.global_shape());
  for (Rearranger kind : {Rearranger::Box, Rearranger::Subset}) {
    for (int iotasks = 1; iotasks <= g_size; ++iotasks) {
      IOSystem io;
      io.num_iotasks = iotasks;
      io.stride = iotasks * 2 <= g_size ? 2 : 1;  // spread out where they fit
      Rearrangement r(d, io, kind);
      const std::string what = tag + " " + rearranger_name(kind) + " with " + std::to_string(iotasks) +
                               " I/O tasks, stride " + std::to_string(io.stride) + ", engine " + engine;
      const std::string path = g_dir + "/pio-" + tag + "-" + engine + "-np" + std::to_string(g_size) + ".h5";
      FileOptions fo;
      fo.engine = engine;
      {
        auto f = File::create(path, fo);
        DatasetSpec spec;
        spec.dtype = Datatype::Float64;
        spec.shape = d.global_shape();
        spec.shape.insert(spec.shape.begin(), 2);  // two frames
        spec.fill_with(-7.0);
        auto ds = f.create_dataset("v", spec);
        for (uint64_t frame = 0; frame < 2; ++frame) {
          std::vector<double> local(map.size());
          for (std::size_t i = 0; i < map.size(); ++i) local[i] = map[i] < 0 ? -99.0 : value_of(map[i], frame);
          r.write(ds, local, frame);
        }
      }
      auto f = File::open(path, Mode::Read, fo);
      auto ds = f.dataset("v");
      std::vector<char> held(total, 0);
      std::vector<int64_t> all_offsets;
      {
        int n = int(map.size());
        std::vector<int> counts(g_size), displs(g_size, 0);
        MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
        for (int p = 1; p < g_size; ++p) displs[p] = displs[p - 1] + counts[p - 1];
        all_offsets.resize(std::size_t(displs.back() + counts.back()));
        MPI_Allgatherv(map.data(), n, MPI_INT64_T, all_offsets.data(), counts.data(), displs.data(), MPI_INT64_T,
                       MPI_COMM_WORLD);
        for (int64_t x : all_offsets)
          if (x >= 0) held[std::size_t(x)] = 1;
      }
      const auto whole = ds.read<double>();
      ASSERT_EQ(whole.size(), 2 * total) << what;
      for (uint64_t frame = 0; frame < 2; ++frame)
        for (uint64_t x = 0; x < total; ++x)
          ASSERT_EQ(whole[frame * total + x], held[x] ? value_of(int64_t(x), frame) : -7.0)
              << what << ": frame " << frame << ", offset " << x;
      for (uint64_t frame = 0; frame < 2; ++frame) {
        std::vector<double> back(map.size(), 12345.0);
        r.read(ds, back, frame);
        for (std::size_t i = 0; i < map.size(); ++i)
          ASSERT_EQ(back[i], map[i] < 0 ? -7.0 : value_of(map[i], frame)) << what << ": element " << i;
      }
    }
  }
}

// A random map: a random share of a shuffled array (some offsets held by no
// rank) with holes sprinkled in, the same on every rank's view of the seed.
std::vector<int64_t> random_map(uint64_t total, unsigned seed, int base) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> all(total);
  for (uint64_t i = 0; i < total; ++i) all[i] = int64_t(i);
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<int64_t> mine;
  for (uint64_t i = 0; i < total; ++i) {
    const auto owner = rng() % uint64_t(g_size + 1);  // == g_size: held by no rank
    const bool hole_after = rng() % 5 == 0;           // drawn on every rank: the ranks' streams stay alike
    if (owner == uint64_t(g_rank)) mine.push_back(all[i] + base);
    if (owner == uint64_t(g_rank) && hole_after) mine.push_back(base - 1);
  }
  return mine;
}

}  // namespace

TEST(pio, FCaseMapRoundTripsThroughEveryRearranger) {
  const auto d = Decomposition::from_file(MPI_COMM_WORLD, g_source + "/bench/e3sm/f_case_866x72_16p.dat");
  EXPECT_EQ(d.global_shape(), (Dims{72, 866}));
  uint64_t mine = std::count_if(d.map().begin(), d.map().end(), [](int64_t x) { return x >= 0; }), all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(all, 866u * 72u);  // the F case holds every element once (and has holes besides)
  for (const char* engine : {"hdf5", "log"}) round_trip(d, "fcase", engine);
}

TEST(pio, RandomMapsWithHolesRoundTrip) {
  for (int base : {0, 1}) {
    const Dims shape{5, 7, 6};
    const auto d = Decomposition::from_map(MPI_COMM_WORLD, shape, random_map(product(shape), 17 + base, base), base);
    round_trip(d, "random" + std::to_string(base), base ? "log" : "hdf5");
  }
}

TEST(pio, OneDimensionalArraysAndMoreIOTasksThanRows) {
  const Dims shape{3};
  std::vector<int64_t> map;
  if (g_rank == 0) map = {2, 0};
  if (g_rank == g_size - 1) map.push_back(1);
  const auto d = Decomposition::from_map(MPI_COMM_WORLD, shape, map);
  round_trip(d, "short", "hdf5");
}

TEST(pio, BadMapsAreRefusedOnEveryRank) {
  std::vector<int64_t> twice = {3};  // every rank holds offset 3
  if (g_size > 1) {
    EXPECT_THROW(Decomposition::from_map(MPI_COMM_WORLD, {4, 4}, twice), SelectionError);
  }
  std::vector<int64_t> outside = {g_rank == g_size - 1 ? 16 : -1};
  try {
    Decomposition::from_map(MPI_COMM_WORLD, {4, 4}, outside);
    FAIL() << "an offset outside the array was taken";
  } catch (const SelectionError& e) {
    EXPECT_NE(std::string(e.what()).find("holds 16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Decomposition::from_map(MPI_COMM_WORLD, {4, 4}, {0}, 2), UsageError);
  IOSystem io;
  io.num_iotasks = g_size + 1;
  const auto d = Decomposition::from_map(MPI_COMM_WORLD, {4}, {});
  EXPECT_THROW(Rearrangement(d, io, Rearranger::Box), UsageError);
  EXPECT_THROW(rearranger_from_name("fancy"), UsageError);
}

TEST(pio, DecompositionFiles) {
  const std::string path = g_dir + "/pio-map-np" + std::to_string(g_size) + ".dat";
  const auto write = [&](const std::string& text) {
    if (g_rank == 0) std::ofstream(path) << text;
    MPI_Barrier(MPI_COMM_WORLD);
  };
  // Any whitespace; PIO's trailing stack-trace lines ignored; one task only (fewer than ranks).
  write("version 2001 npes 1 ndims 2\n 3   2\n0 4\n1 2\n  0 6\nstack: pio_write_darray\n  at frame 0x1234\n");
  const auto d = Decomposition::from_file(MPI_COMM_WORLD, path);
  EXPECT_EQ(d.global_shape(), (Dims{2, 3}));
  if (g_rank == 0) EXPECT_EQ(d.map(), (std::vector<int64_t>{0, 1, -1, 5}));
  else EXPECT_TRUE(d.map().empty());
  write("version 2000 npes 1 ndims 1\n4\n0 1\n1\n");
  try {
    Decomposition::from_file(MPI_COMM_WORLD, path);
    FAIL() << "version 2000 was taken";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("version 2000"), std::string::npos) << e.what();
  }
  write("version 2001 npes 2 ndims 1\n4\n0 2\n1 2\n1 2\n3\n");  // task 1 ends early
  EXPECT_THROW(Decomposition::from_file(MPI_COMM_WORLD, path), ConfigError);
  write("version 2001 npes 1 ndims 1\n4\n0 2\n1 x\n");
  EXPECT_THROW(Decomposition::from_file(MPI_COMM_WORLD, path), ConfigError);
  write("version 2001 npes 1 ndims 1\n4\n0 1\n5\n");  // outside the array
  EXPECT_THROW(Decomposition::from_file(MPI_COMM_WORLD, path), ConfigError);
  EXPECT_THROW(Decomposition::from_file(MPI_COMM_WORLD, g_dir + "/no-such-map.dat"), NotFoundError);
}

TEST(pio, DatasetsOfAnotherShapeOrTypeAreRefusedOnEveryRank) {
  const auto d = Decomposition::from_map(MPI_COMM_WORLD, {4}, g_rank == 0 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{});
  Rearrangement r(d, IOSystem{}, Rearranger::Box);
  auto f = File::create(g_dir + "/pio-shapes-np" + std::to_string(g_size) + ".h5");
  auto wrong = f.create_dataset<double>("wrong", {5, 5, 5});
  std::vector<double> local(d.local_size(), 1.0);
  EXPECT_THROW(r.write(wrong, local), SelectionError);
  auto ints = f.create_dataset<int32_t>("ints", {4});
  EXPECT_THROW(r.write(ints, local), DatatypeError);
  auto good = f.create_dataset<double>("good", {4});
  r.write(good, local);
  EXPECT_THROW(r.write(good, local, 1), SelectionError);  // no frame dimension
  std::vector<double> short_on_rank0(g_rank == 0 ? 1 : d.local_size(), 2.0);  // rank 0 holds 2
  try {
    r.write(good, short_on_rank0);
    FAIL() << "too few elements were taken";
  } catch (const SelectionError& e) {
    EXPECT_NE(std::string(e.what()).find("1 elements given"), std::string::npos) << e.what();
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (argc != 3) {
    if (g_rank == 0) std::fprintf(stderr, "usage: test_pio DIR SOURCE_DIR\n");
    MPI_Finalize();
    return 2;
  }
  g_dir = argv[1], g_source = argv[2];
  if (g_rank != 0) ::testing::GTEST_FLAG(output) = "";
  int failed = RUN_ALL_TESTS() != 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
