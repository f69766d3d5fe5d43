// Engine configuration: names, JSON, wrappers, knob validation.
#include <gtest/gtest.h>

#include <cstdlib>

#include "h5loom/engine.hpp"

using namespace h5loom;

static std::string config_error(const std::string& cfg) {
  try {
    engine::make_engine(cfg);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Config, NamesJsonAndWrappers) {
  EXPECT_EQ(engine::make_engine("hdf5")->name(), "hdf5");
  EXPECT_EQ(engine::make_engine(R"({"engine": "hdf5"})")->name(), "hdf5");
  EXPECT_EQ(engine::make_engine(R"({"engine": "hdf5", "wrappers": ["collcheck"]})")->name(), "collcheck>hdf5");
  EXPECT_EQ(engine::make_engine(R"({"hdf5": {"transfer": "independent", "alignment": 1,
      "meta_block_size": 4096, "layout": "chunked", "chunk_target_bytes": 65536,
      "fill_time": "alloc", "libver_low": "v110", "collective_metadata": false,
      "mpi_info": {"romio_cb_write": "enable"}, "sync": true}})")->name(), "hdf5");
  auto names = engine::engine_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "hdf5"), names.end());
}

TEST(Config, EnvironmentAddsTheCollectiveCheck) {
  setenv("H5LOOM_CHECK_COLLECTIVE", "1", 1);
  EXPECT_EQ(engine::make_engine("hdf5")->name(), "collcheck>hdf5");
  setenv("H5LOOM_CHECK_COLLECTIVE", "0", 1);
  EXPECT_EQ(engine::make_engine("hdf5")->name(), "hdf5");
  unsetenv("H5LOOM_CHECK_COLLECTIVE");
}

TEST(Config, ErrorsNameTheKeyAndValue) {
  EXPECT_NE(config_error("hdf6").find("unknown engine 'hdf6'"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"transfer": "sometimes"}})").find("hdf5.transfer"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"transfer": "sometimes"}})").find("'sometimes'"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"alignment": "big"}})").find("hdf5.alignment"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"alignment": 0}})").find("hdf5.alignment"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"sync": "yes"}})").find("hdf5.sync"), std::string::npos);
  EXPECT_NE(config_error(R"({"engine": "log", "log": {"region_alignment": 1000}})").find("log.region_alignment"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"engine": "log", "log": {"region_alignment": 1000}})").find("1000"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"mpi_info": {"cb_nodes": 4}}})").find("mpi_info.cb_nodes"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"colective": true}})").find("'hdf5.colective'"), std::string::npos);
  EXPECT_NE(config_error(R"({"wrappers": "collcheck"})").find("wrappers"), std::string::npos);
  EXPECT_NE(config_error(R"({"collcheck": {"timeout": -1}, "wrappers": ["collcheck"]})").find("collcheck.timeout"),
            std::string::npos);
  EXPECT_NE(config_error(R"([1, 2])").find("unknown engine"), std::string::npos);
}
