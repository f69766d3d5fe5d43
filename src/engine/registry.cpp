// Engine registry: turns a configuration (a name or JSON) into an engine stack.
//
//   "hdf5"
//   {"engine": "hdf5", "wrappers": ["collcheck"], "hdf5": {"transfer": "independent"}}
//
// Wrappers are listed outermost first. H5LOOM_CHECK_COLLECTIVE=1 adds the
// collcheck wrapper on top of whatever was configured, H5LOOM_PROFILE=DIR the
// trace wrapper on top of that.
#include <algorithm>
#include <cstdlib>
#include <map>

#include "engine/registry.hpp"
#include "engines/log/log_internal.hpp"

namespace h5loom::engine {

namespace {

const std::map<std::string, EngineFactory>& engines() {
  static const std::map<std::string, EngineFactory> table = {
      {"hdf5", make_hdf5_engine},
      {"log", make_log_engine},
  };
  return table;
}

const std::map<std::string, WrapperFactory>& wrappers() {
  static const std::map<std::string, WrapperFactory> table = {
      {"collcheck", make_collcheck_wrapper},
      {"trace", make_trace_wrapper},
  };
  return table;
}

template <class Map>
std::string names_of(const Map& m) {
  std::string out;
  for (const auto& [name, _] : m) out += (out.empty() ? "" : ", ") + name;
  return out;
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

}  // namespace

Knobs::Knobs(std::string section, const Json& object) : section_(std::move(section)), object_(object) {
  if (!object_.is_null() && !object_.is_object())
    throw ConfigError("configuration section '" + section_ + "' must be a JSON object, not " + object_.dump());
  if (object_.is_null()) object_ = Json::object();
}

std::string Knobs::choice(const std::string& key, const std::string& fallback, const std::set<std::string>& allowed) {
  auto v = get<std::string>(key, fallback);
  if (!allowed.count(v)) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    bad_value(key, "'" + v + "' is not one of: " + list);
  }
  return v;
}

void Knobs::bad_value(const std::string& key, const std::string& why) const {
  throw ConfigError("configuration key '" + section_ + "." + key + "': " + why);
}

void Knobs::finish() const {
  for (const auto& [key, _] : object_.items())
    if (!used_.count(key))
      throw ConfigError("unknown configuration key '" + section_ + "." + key + "' for engine '" + section_ + "'");
}

std::unique_ptr<Engine> make_engine(const std::string& config) {
  Json cfg;
  std::string text = config;
  text.erase(0, text.find_first_not_of(" \t\r\n"));
  if (!text.empty() && text[0] == '{') {
    try {
      cfg = Json::parse(text);
    } catch (const Json::parse_error& e) {
      throw ConfigError("engine configuration is not valid JSON (" + std::string(e.what()) + "): " + config);
    }
  } else {
    cfg = Json{{"engine", text}};
  }

  for (const auto& [key, _] : cfg.items())
    if (key != "engine" && key != "wrappers" && !engines().count(key) && !wrappers().count(key))
      throw ConfigError("unknown configuration key '" + key + "' in engine configuration (known: engine, wrappers, " +
                        names_of(engines()) + ", " + names_of(wrappers()) + ")");

  std::string base = cfg.value("engine", std::string("hdf5"));
  auto ef = engines().find(base);
  if (ef == engines().end())
    throw ConfigError("unknown engine '" + base + "' (registered engines: " + names_of(engines()) +
                      "; wrappers: " + names_of(wrappers()) + ")");
  Knobs base_knobs(base, cfg.contains(base) ? cfg[base] : Json());
  std::unique_ptr<Engine> e = ef->second(base_knobs);
  base_knobs.finish();

  std::vector<std::string> stack;
  if (cfg.contains("wrappers")) {
    if (!cfg["wrappers"].is_array()) throw ConfigError("configuration key 'wrappers' must be a list of names");
    for (const auto& w : cfg["wrappers"]) {
      if (!w.is_string()) throw ConfigError("configuration key 'wrappers' holds a non-string: " + w.dump());
      stack.push_back(w.get<std::string>());
    }
  }
  if (env_flag("H5LOOM_CHECK_COLLECTIVE") && std::find(stack.begin(), stack.end(), "collcheck") == stack.end())
    stack.insert(stack.begin(), "collcheck");
  // H5LOOM_PROFILE=DIR records the engine layer with the trace wrapper, outermost.
  if (const char* p = std::getenv("H5LOOM_PROFILE"); p && *p && std::find(stack.begin(), stack.end(), "trace") == stack.end())
    stack.insert(stack.begin(), "trace");
  // Listed outermost first: wrap from the innermost outwards.
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    auto wf = wrappers().find(*it);
    if (wf == wrappers().end())
      throw ConfigError("unknown wrapper '" + *it + "' (registered wrappers: " + names_of(wrappers()) + ")");
    Knobs knobs(*it, cfg.contains(*it) ? cfg[*it] : Json());
    e = wf->second(knobs, std::move(e));
    knobs.finish();
  }
  return e;
}

std::string detect_engine(const std::string& path) { return logengine::is_log_file(path) ? "log" : "hdf5"; }

std::vector<std::string> engine_names() {
  std::vector<std::string> out;
  for (const auto& [name, _] : engines()) out.push_back(name);
  return out;
}

std::vector<std::string> wrapper_names() {
  std::vector<std::string> out;
  for (const auto& [name, _] : wrappers()) out.push_back(name);
  return out;
}

}  // namespace h5loom::engine
