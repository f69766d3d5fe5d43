// `h5loom verify` of a log-engine file: every header, commit record, index
// record and data checksum, and the front file's binding and checksum.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace h5loom::logengine {

struct VerifyReport {
  uint64_t epochs = 0, blocks = 0, data_bytes = 0, torn_log_bytes = 0, torn_commit_bytes = 0;
  std::vector<std::string> errors;
};
VerifyReport verify_log(const std::string& path);

}  // namespace h5loom::logengine
