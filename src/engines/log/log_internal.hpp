// What the rest of h5loom asks of the log engine outside the engine
// interface: engine detection (src/engine/registry.cpp) and `h5loom verify`
// (src/tools/file_tools.cpp). The engine's parts have headers of their own;
// this one goes once the engine interface asks engines these questions.
#pragma once

#include <string>

#include "engines/log/verify.hpp"

namespace h5loom::logengine {

// True if `path` names a log-engine file: its journal exists and the front file
// is missing or carries the log marker attribute.
bool is_log_file(const std::string& path);

}  // namespace h5loom::logengine
