#!/usr/bin/env bash
# Runs tests/vol/vol_app.c (a plain parallel HDF5 program) through h5loom's VOL
# connector, then reads its file with stock h5dump (no connector) and checks
# the values: the file the connector wrote is an HDF5 file anyone reads.
#   run_vol_app.sh ENGINE NP APP PLUGIN_DIR HDF5_BINDIR FILE MPIEXEC...
set -euo pipefail
engine=$1 np=$2 app=$3 plugin_dir=$4 bindir=$5 file=$6
shift 6
rm -rf "$file" "$file".loom
HDF5_PLUGIN_PATH="$plugin_dir" HDF5_VOL_CONNECTOR="h5loom $engine" "$@" "$np" "$app" "$file"

# Stock HDF5 from here on: no connector.
unset HDF5_PLUGIN_PATH HDF5_VOL_CONNECTOR
cd "$(dirname "$file")"  # external storage (log engine) resolves against the working directory
name=$(basename "$file")
expect=""
for ((r = 0; r < 4 * np; ++r)); do
  for c in 0 1 2; do expect+="${expect:+, }$((100 * r + c)).5"; done
done
data=$(mktemp)
trap 'rm -f "$data"' EXIT
"$bindir/h5dump" -d /fields/rho -y -w 0 -m %.1f -o "$data" "$name" > /dev/null
got=$(tr -d ' \n' < "$data" | sed 's/,/, /g')
if [ "$got" != "$expect" ]; then
  echo "h5dump read /fields/rho as:"; echo "$got"; echo "expected:"; echo "$expect"; exit 1
fi
"$bindir/h5dump" -a /fields/rho/units "$name" | grep -q '"kg/m^3"' || { echo "h5dump: attribute units"; "$bindir/h5dump" -a /fields/rho/units "$name"; exit 1; }
"$bindir/h5dump" -a /step "$name" | grep -q '42' || { echo "h5dump: attribute step"; exit 1; }
"$bindir/h5dump" -d /steps -y -w 0 "$name" | grep -q "40" || { echo "h5dump: /steps"; exit 1; }
# h5dump (a serial program, no MPI) through the connector with no configuration:
# the engine that wrote the file serves it (the log engine's probe starts MPI itself).
ids=$(HDF5_PLUGIN_PATH="$plugin_dir" HDF5_VOL_CONNECTOR="h5loom" "$bindir/h5dump" -d /ids -y -w 0 "$name" | tr -d ' \n')
case "$ids" in
  *DATA{1000,1001*) ;;
  *) echo "h5dump through the connector (no configuration) read /ids as: $ids"; exit 1 ;;
esac
echo "stock h5dump reads /fields/rho, its units, /step and /steps; h5dump through the connector reads /ids (h5loom $engine, $np ranks)"
