// The conformance suite: one set of tests, grouped by capability, run against
// every engine at 1, 2 and 4 ranks. Each test suite name is a capability group
// ("file", "dataset", ...); a group the engine does not declare is skipped,
// never counted as passed. See docs/conformance.md.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <numeric>
#include <string>
#include <vector>

#include "h5loom/h5loom.hpp"

namespace conformance {

struct Environment {
  std::string engine_config;  // passed to FileOptions::engine
  std::string base_engine;    // the innermost engine's name, for knob sections
  std::string label;          // for file names and the summary table
  std::string dir;            // shared scratch directory
  int rank = 0;
  int size = 1;
};
Environment& env();

class ConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  virtual const char* capability_group() const = 0;

  // A file name unique to this test, engine and rank count, the same on all ranks.
  std::string file_path(const std::string& tag = "") const;
  h5loom::FileOptions options() const;
  // Removes a file (rank 0) and waits for everyone.
  void remove_file(const std::string& path) const;

 public:
  // A location in a remote store ("s3://bucket/..."), not a local path: --dir may be one.
  static bool is_url(const std::string& path);

 protected:
  int rank() const { return env().rank; }
  int nranks() const { return env().size; }
  // n values from `from` up, one apart: a rank's part of a dataset.
  static std::vector<double> ramp(std::size_t n, double from) {
    std::vector<double> v(n);
    std::iota(v.begin(), v.end(), from);
    return v;
  }
};

}  // namespace conformance

#define H5LOOM_CONFORMANCE_GROUP(fixture, name)                            \
  class fixture : public ::conformance::ConformanceTest {                  \
   protected:                                                              \
    const char* capability_group() const override { return name; }                    \
  }
