// Runs the fuzz target on saved inputs without libFuzzer (any compiler, e.g.
// the GCC ASan build): log_reader_replay FILE_OR_DIR... Each input runs once;
// a crash or sanitizer report ends the program with the input's name printed
// just before. Exit 0 when every input ran, 2 when an argument is unreadable.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "log_input.hpp"

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (std::filesystem::is_directory(argv[i], ec)) {
      std::vector<std::string> here;
      for (const auto& e : std::filesystem::directory_iterator(argv[i], ec))
        if (e.is_regular_file()) here.push_back(e.path().string());
      std::sort(here.begin(), here.end());
      inputs.insert(inputs.end(), here.begin(), here.end());
    } else {
      inputs.push_back(argv[i]);
    }
  }
  LLVMFuzzerInitialize(&argc, &argv);
  int ran = 0;
  for (const auto& path : inputs) {
    loomfuzz::Bytes b;
    if (!loomfuzz::read_file(path, b)) {
      std::fprintf(stderr, "log_reader_replay: cannot read %s\n", path.c_str());
      return 2;
    }
    std::fprintf(stderr, "log_reader_replay: %s (%zu bytes)\n", path.c_str(), b.size());
    LLVMFuzzerTestOneInput(b.data(), b.size());
    ++ran;
  }
  std::printf("log_reader_replay: %d inputs ran without a finding\n", ran);
  return 0;
}
