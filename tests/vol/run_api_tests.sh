#!/usr/bin/env bash
# HDF5's own API tests (h5_api_test, installed with the project's HDF5) against
# native HDF5 and h5loom's VOL connector with each engine; prints a table of
# passed / failed / skipped per test group, as docs/vol.md keeps it.
#   tests/vol/run_api_tests.sh [BUILD_DIR] [GROUPS...]
# BUILD_DIR (default: build) holds vol-plugin/; GROUPS default: file group dataset attribute.
# H5LOOM_VOL_CONFIGS overrides the connector configurations (default: "hdf5 log").
# The tests pick random datatypes (seeded by the time): counts vary a little between runs.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
shift || true
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(file group dataset attribute)
prefix=${H5LOOM_HDF5_PREFIX:-$(bash "$here/../../scripts/build-hdf5.sh" --prefix)}
api_test="$prefix/bin/h5_api_test"
[ -x "$api_test" ] || { echo "no $api_test (scripts/build-hdf5.sh installs it)"; exit 1; }
read -r -a configs <<< "${H5LOOM_VOL_CONFIGS:-hdf5 log}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# passed failed skipped of one run (from the program's last lines)
counts() {
  local log=$1
  local p f s
  p=$(sed -n 's|^\([0-9]*\)/[0-9]* (.*) API tests passed.*|\1|p' "$log" | tail -1)
  f=$(sed -n 's|^\([0-9]*\)/[0-9]* (.*) API tests did not pass.*|\1|p' "$log" | tail -1)
  s=$(sed -n 's|^\([0-9]*\)/[0-9]* (.*) API tests were skipped.*|\1|p' "$log" | tail -1)
  if [ -z "$p" ]; then echo "crashed - -"; else echo "$p $f $s"; fi
}

printf '| group | native | %s |\n' "$(printf 'h5loom %s | ' "${configs[@]}" | sed 's/ | $//')"
printf '|---|---|%s\n' "$(printf -- '---|%.0s' "${configs[@]}")"
status=0
for g in "${groups[@]}"; do
  row="| $g |"
  env -u HDF5_VOL_CONNECTOR -u HDF5_PLUGIN_PATH "$api_test" "$g" > "native-$g.log" 2>&1
  read -r p f s < <(counts "native-$g.log")
  row+=" $p / $f / $s |"
  for c in "${configs[@]}"; do
    log="h5loom-$(echo "$c" | tr -c 'a-zA-Z0-9\n' _)-$g.log"
    HDF5_PLUGIN_PATH="$build/vol-plugin" HDF5_VOL_CONNECTOR="h5loom $c" timeout 900 "$api_test" "$g" > "$log" 2>&1
    read -r p f s < <(counts "$log")
    [ "$f" = "0" ] || status=1
    row+=" $p / $f / $s |"
    [ -n "${H5LOOM_API_LOGS:-}" ] && cp "$log" "$H5LOOM_API_LOGS/"
  done
  echo "$row"
done
echo "(passed / failed / skipped)"
exit $status
