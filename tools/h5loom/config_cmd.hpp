// `h5loom config`: where h5loom's HDF5 and its VOL connector are, for users
// and scripts that build or run unchanged HDF5 programs against them
// (docs/vol.md, docs/cli.md).
#pragma once

#include <string>

namespace h5loom::cli {

// The prefix of the HDF5 h5loom was built with (its bin/, include/, lib/).
std::string hdf5_prefix();
// The directory holding libh5loom_vol.so: beside this program in a build
// tree (<build>/vol-plugin), else the installed <libdir>/hdf5/plugin;
// empty if neither holds it.
std::string vol_plugin_dir();
// The two environment lines that route an unchanged HDF5 program through the
// connector with engine configuration `config` (checked: ConfigError naming
// the mistake), quoted for a POSIX shell.
std::string vol_env(const std::string& config);

}  // namespace h5loom::cli
