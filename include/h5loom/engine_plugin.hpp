// Registering engines: what an engine's folder (built in) or a plugin (a
// shared library loaded at run time) uses to make its engine known by name.
//
// Built in: one line in the engine folder's CMakeLists.txt,
//     h5loom_add_engine(NAME myengine FACTORY make_myengine_engine SOURCES myengine.cpp)
// (WRAPPER for a wrapper), with the factory declared in namespace
// h5loom::engine with the signature of EngineFactory (WrapperFactory).
//
// A plugin: a shared library linked against libh5loom that defines
//     H5LOOM_PLUGIN(registry) { registry->add_wrapper("count", make_count); }
// and is found through H5LOOM_PLUGIN_PATH (a colon-separated list of plugin
// files and directories whose *.so files are loaded). docs/engines.md has a
// worked example (examples/plugin_wrapper). Needs nlohmann_json's headers.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "h5loom/engine.hpp"

namespace h5loom::engine {

using Json = nlohmann::json;

// One engine's knobs (the JSON object under its name in the configuration).
// Every key read is remembered; finish() rejects the keys nobody read, naming them.
class Knobs {
 public:
  Knobs(std::string section, const Json& object);

  bool has(const std::string& key) const { return object_.contains(key); }
  template <class T>
  T get(const std::string& key, const T& fallback) {
    used_.insert(key);
    auto it = object_.find(key);
    if (it == object_.end()) return fallback;
    try {
      return it->template get<T>();
    } catch (const Json::exception&) {
      throw ConfigError("configuration key '" + section_ + "." + key + "' has the wrong type: " + it->dump());
    }
  }
  // A string knob restricted to `allowed` values.
  std::string choice(const std::string& key, const std::string& fallback, const std::set<std::string>& allowed);
  const Json* raw(const std::string& key) {
    used_.insert(key);
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }
  [[noreturn]] void bad_value(const std::string& key, const std::string& why) const;
  void finish() const;

 private:
  std::string section_;
  Json object_;
  std::set<std::string> used_;
};

// The knob "userblock" of an engine that has one: the bytes at the start of a
// new file that belong to the application (HDF5's user block): 0, or a power
// of two of at least 512 (ConfigError otherwise).
uint64_t userblock_knob(Knobs& knobs);

using EngineFactory = std::function<std::unique_ptr<Engine>(Knobs& knobs)>;
using WrapperFactory = std::function<std::unique_ptr<Engine>(Knobs& knobs, std::unique_ptr<Engine> inner)>;

// The engines and wrappers known by name: the built-in ones, then plugins'.
class Registry {
 public:
  // ConfigError if the name is taken (by an engine or a wrapper).
  void add_engine(const std::string& name, EngineFactory factory);
  void add_wrapper(const std::string& name, WrapperFactory factory);

  const std::map<std::string, EngineFactory>& engines() const { return engines_; }
  const std::map<std::string, WrapperFactory>& wrappers() const { return wrappers_; }

 private:
  void require_free(const std::string& name) const;
  std::map<std::string, EngineFactory> engines_;
  std::map<std::string, WrapperFactory> wrappers_;
};

// The process's registry: built-in engines, then the plugins of
// H5LOOM_PLUGIN_PATH (loaded on first use; a plugin that fails to load raises
// ConfigError naming it, at every use).
Registry& registry();
// Loads one plugin now (what H5LOOM_PLUGIN_PATH does for each file).
void load_plugin(const std::string& path);

}  // namespace h5loom::engine

#define H5LOOM_PLUGIN(registry_param)                                                         \
  extern "C" int h5loom_plugin_abi_version() { return H5LOOM_ENGINE_ABI_VERSION; }           \
  extern "C" void h5loom_register_plugin(h5loom::engine::Registry* registry_param)
