#!/usr/bin/env bash
# `h5loom config`: --hdf5-prefix names the HDF5 the tests use (its h5dump is
# there), and the lines --vol-env prints, evaluated by a shell, route a plain
# HDF5 program through the connector: the file it writes is the log engine's.
#   run_config_env.sh H5LOOM APP HDF5_BINDIR FILE MPIEXEC...
set -euo pipefail
h5loom=$1 app=$2 bindir=$3 file=$4
shift 4
prefix=$("$h5loom" config --hdf5-prefix)
[ "$(cd "$prefix/bin" && pwd)" = "$(cd "$bindir" && pwd)" ] || { echo "--hdf5-prefix: $prefix, tests use $bindir"; exit 1; }
[ -x "$prefix/bin/h5dump" ] && [ -f "$prefix/include/hdf5.h" ] || { echo "--hdf5-prefix $prefix holds no HDF5"; exit 1; }
if "$h5loom" config --vol-env '{"engine": "nope"}' > /dev/null 2>&1; then echo "--vol-env accepted an unknown engine"; exit 1; fi
rm -rf "$file" "$file".loom
(
  set -a
  eval "$("$h5loom" config --vol-env '{"engine": "log", "wrappers": ["trace"]}')"
  set +a
  "$@" 1 "$app" "$file"
)
"$h5loom" info "$file" | grep -q "log (log-structured)" || { echo "not a log-engine file:"; "$h5loom" info "$file"; exit 1; }
echo "h5loom config: prefix $prefix; --vol-env routed vol_app through the log engine"
