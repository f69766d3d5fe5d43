// Engine registry: turns a configuration (a name or JSON) into an engine stack.
//
//   "hdf5"
//   {"engine": "hdf5", "wrappers": ["collcheck"], "hdf5": {"transfer": "independent"}}
//
// Wrappers are listed outermost first. H5LOOM_CHECK_COLLECTIVE=1 adds the
// collcheck wrapper on top of whatever was configured, H5LOOM_PROFILE=DIR the
// trace wrapper on top of that. Engines come from the engine folders (CMake
// generates the table) and from plugins (H5LOOM_PLUGIN_PATH).
#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "engine/registry.hpp"

namespace h5loom::engine {

namespace {

const std::map<std::string, EngineFactory>& engines() { return registry().engines(); }
const std::map<std::string, WrapperFactory>& wrappers() { return registry().wrappers(); }

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

// ---- the registry -----------------------------------------------------------------

void Registry::require_free(const std::string& name) const {
  if (name.empty() || name.find_first_of(">{}\"' ") != std::string::npos)
    throw ConfigError("cannot register engine '" + name + "': a name is a non-empty word");
  if (engines_.count(name) || wrappers_.count(name))
    throw ConfigError("cannot register engine '" + name + "': the name is taken");
}

void Registry::add_engine(const std::string& name, EngineFactory factory) {
  require_free(name);
  engines_.emplace(name, std::move(factory));
}

void Registry::add_wrapper(const std::string& name, WrapperFactory factory) {
  require_free(name);
  wrappers_.emplace(name, std::move(factory));
}

void load_plugin(const std::string& path) {
  // RTLD_LOCAL: a plugin's symbols stay its own; it finds ours through its
  // link to libh5loom. The handle is never closed (its code is in the registry).
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) throw ConfigError("cannot load h5loom plugin '" + path + "': " + ::dlerror());
  auto abi = reinterpret_cast<int (*)()>(::dlsym(lib, "h5loom_plugin_abi_version"));
  auto reg = reinterpret_cast<void (*)(Registry*)>(::dlsym(lib, "h5loom_register_plugin"));
  if (!abi || !reg)
    throw ConfigError("'" + path + "' is not an h5loom plugin (it defines no H5LOOM_PLUGIN entry point)");
  if (abi() != H5LOOM_ENGINE_ABI_VERSION)
    throw ConfigError("h5loom plugin '" + path + "' was built for engine interface version " +
                      std::to_string(abi()) + ", this library has version " +
                      std::to_string(H5LOOM_ENGINE_ABI_VERSION) + ": rebuild it");
  reg(&registry());
}

namespace {

// The plugin files H5LOOM_PLUGIN_PATH names: files as given, directories' *.so, sorted.
std::vector<std::string> plugin_files() {
  std::vector<std::string> out;
  const char* env = std::getenv("H5LOOM_PLUGIN_PATH");
  std::string list = env ? env : "";
  for (std::size_t i = 0; i <= list.size();) {
    std::size_t j = list.find(':', i);
    if (j == std::string::npos) j = list.size();
    const std::string entry = list.substr(i, j - i);
    i = j + 1;
    if (entry.empty()) continue;
    DIR* dir = ::opendir(entry.c_str());
    if (!dir) {
      out.push_back(entry);
      continue;
    }
    std::vector<std::string> found;
    while (dirent* e = ::readdir(dir)) {
      std::string name = e->d_name;
      if (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0) found.push_back(entry + "/" + name);
    }
    ::closedir(dir);
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace

Registry& registry() {
  static Registry instance;
  static std::once_flag builtins;
  std::call_once(builtins, [] { register_builtin_engines(instance); });
  // Each plugin is loaded once; one that fails is retried (and its error
  // raised) at every use. A plugin's registration calls registry() again:
  // that inner call must not load plugins.
  static std::recursive_mutex mutex;
  static std::set<std::string> loaded;
  static bool loading = false;
  std::lock_guard<std::recursive_mutex> lock(mutex);
  if (!loading) {
    loading = true;
    try {
      for (const auto& path : plugin_files())
        if (!loaded.count(path)) {
          load_plugin(path);
          loaded.insert(path);
        }
    } catch (...) {
      loading = false;
      throw;
    }
    loading = false;
  }
  return instance;
}

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

uint64_t userblock_knob(Knobs& knobs) {
  const uint64_t size = knobs.get<uint64_t>("userblock", 0);
  if (size != 0 && (size < 512 || (size & (size - 1)) != 0))
    knobs.bad_value("userblock", std::to_string(size) + " is not 0 or a power of two of at least 512");
  return size;
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
    // "async+log": wrappers, outermost first, then the engine.
    text.erase(text.find_last_not_of(" \t\r\n") + 1);
    Json wrappers = Json::array();
    for (std::size_t plus; (plus = text.find('+')) != std::string::npos; text.erase(0, plus + 1))
      wrappers.push_back(text.substr(0, plus));
    cfg = Json{{"engine", text}};
    if (!wrappers.empty()) cfg["wrappers"] = wrappers;
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

std::unique_ptr<Engine> storage_engine(const std::string& name) {
  auto ef = engines().find(name);
  if (ef == engines().end())
    throw ConfigError("unknown engine '" + name + "' (registered engines: " + names_of(engines()) + ")");
  Knobs knobs(name, Json());
  return ef->second(knobs);
}

std::string detect_engine(const std::string& location) {
  std::string best;
  Claim strongest = Claim::No;
  for (const auto& [name, _] : engines()) {
    const Claim c = storage_engine(name)->probe(location);  // noexcept: a plugin's that throws ends the job
    if (c > strongest) strongest = c, best = name;
  }
  return best;
}

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
