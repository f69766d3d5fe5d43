#include "config_cmd.hpp"

#include <unistd.h>

#include <climits>
#include <string>

#include <h5loom/engine.hpp>
#include <h5loom/errors.hpp>

namespace h5loom::cli {

namespace {

bool has_connector(const std::string& dir) { return ::access((dir + "/libh5loom_vol.so").c_str(), R_OK) == 0; }

std::string this_program_dir() {
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return {};
  const std::string path(exe, std::size_t(n));
  return path.substr(0, path.rfind('/'));
}

// 'text' for a POSIX shell.
std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string hdf5_prefix() { return H5LOOM_CONFIG_HDF5_PREFIX; }

std::string vol_plugin_dir() {
  const std::string here = this_program_dir();
  for (const std::string& dir : {here + "/vol-plugin", here + "/../lib/hdf5/plugin",
                                 std::string(H5LOOM_CONFIG_VOL_INSTALL_DIR), std::string(H5LOOM_CONFIG_VOL_BUILD_DIR)})
    if (!here.empty() && has_connector(dir)) {
      char real[PATH_MAX];
      return ::realpath(dir.c_str(), real) ? std::string(real) : dir;
    }
  return {};
}

std::string vol_env(const std::string& config) {
  if (!config.empty()) engine::make_engine(config);  // a clear ConfigError before anyone runs with it
  const std::string dir = vol_plugin_dir();
  if (dir.empty())
    throw UsageError("the VOL connector (libh5loom_vol.so) is not built or installed beside this h5loom "
                     "(looked in <this program's directory>/vol-plugin and ../lib/hdf5/plugin)");
  return "HDF5_PLUGIN_PATH=" + shell_quoted(dir) + "\nHDF5_VOL_CONNECTOR=" +
         shell_quoted(config.empty() ? "h5loom" : "h5loom " + config) + "\n";
}

}  // namespace h5loom::cli
