// Internal side of the registry: the configuration parser's helpers and the
// table of built-in engines that CMake generates from the engine folders'
// h5loom_add_engine() lines (builtin_engines.cpp in the build directory).
#pragma once

#include "h5loom/engine_plugin.hpp"

namespace h5loom::engine {

// Generated: adds every built-in engine and wrapper.
void register_builtin_engines(Registry& registry);

}  // namespace h5loom::engine
