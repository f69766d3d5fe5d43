// The engine registry and the knob reader that engines use for their section
// of the configuration. Adding an engine: a folder under src/engines/ plus one
// line in the tables of registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "h5loom/engine.hpp"

namespace h5loom::engine {

using Json = nlohmann::json;

// One engine's knobs (the JSON object under its name). Every key read is
// remembered; finish() rejects the keys nobody read, naming them.
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

using EngineFactory = std::function<std::unique_ptr<Engine>(Knobs& knobs)>;
using WrapperFactory = std::function<std::unique_ptr<Engine>(Knobs& knobs, std::unique_ptr<Engine> inner)>;

// Base engines (one folder each under src/engines/).
std::unique_ptr<Engine> make_hdf5_engine(Knobs& knobs);
std::unique_ptr<Engine> make_log_engine(Knobs& knobs);
// Wrappers.
std::unique_ptr<Engine> make_collcheck_wrapper(Knobs& knobs, std::unique_ptr<Engine> inner);
std::unique_ptr<Engine> make_trace_wrapper(Knobs& knobs, std::unique_ptr<Engine> inner);

}  // namespace h5loom::engine
