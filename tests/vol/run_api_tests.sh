#!/usr/bin/env bash
# HDF5's own API tests (h5_api_test, installed with the project's HDF5) against
# native HDF5 and h5loom's VOL connector with each engine; prints a table of
# passed / failed / skipped per test group, as docs/vol.md keeps it.
#   tests/vol/run_api_tests.sh [BUILD_DIR] [GROUPS...]
# BUILD_DIR (default: build) holds vol-plugin/; GROUPS default: file group dataset attribute.
# H5LOOM_VOL_CONFIGS overrides the connector configurations: "LABEL=CONFIG"
# entries separated by ";" (default: hdf5, log, and the hdf5 engine under trace,
# which takes the engine route: docs/vol.md#routes).
# H5LOOM_API_TABLE: also write the table to this file.
# H5LOOM_API_BASELINE: a file of "GROUP LABEL MAX_FAILED" lines (the known
# failures, docs/vol.md lists their causes; no line: 0): then a group passes
# with at most that many failed tests for that configuration, and fails with
# more, or if the program did not run to its summary. Without it, any failed
# test fails.
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
default_configs='hdf5=hdf5;log=log;hdf5+trace={"engine": "hdf5", "wrappers": ["trace"]}'
IFS=';' read -r -a entries <<< "${H5LOOM_VOL_CONFIGS:-$default_configs}"
labels=() configs=()
for e in "${entries[@]}"; do labels+=("${e%%=*}"); configs+=("${e#*=}"); done
work=$(mktemp -d)
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

table=$(mktemp)
trap 'rm -rf "$work" "$table"' EXIT
out() { echo "$1"; echo "$1" >> "$table"; }
allowed() {  # the failures the baseline allows for group $1, configuration $2 (0 without a line)
  local n=""
  [ -n "${H5LOOM_API_BASELINE:-}" ] && n=$(awk -v g="$1" -v c="$2" '$1 == g && $2 == c { print $3 }' "$H5LOOM_API_BASELINE")
  echo "${n:-0}"
}
out "$(printf '| group | native | %s |' "$(printf 'h5loom %s | ' "${labels[@]}" | sed 's/ | $//')")"
out "$(printf '|---|---|%s' "$(printf -- '---|%.0s' "${labels[@]}")")"
status=0
for g in "${groups[@]}"; do
  row="| $g |"
  env -u HDF5_VOL_CONNECTOR -u HDF5_PLUGIN_PATH "$api_test" "$g" > "native-$g.log" 2>&1
  read -r p f s < <(counts "native-$g.log")
  row+=" $p / $f / $s |"
  for i in "${!configs[@]}"; do
    c=${configs[$i]} label=${labels[$i]}
    log="h5loom-$(echo "$label" | tr -c 'a-zA-Z0-9\n' _)-$g.log"
    HDF5_PLUGIN_PATH="$build/vol-plugin" HDF5_VOL_CONNECTOR="h5loom $c" timeout 900 "$api_test" "$g" > "$log" 2>&1
    read -r p f s < <(counts "$log")
    if [ "$p" = "crashed" ]; then
      status=1; echo "h5loom $label, group $g: no summary; the end of its output:" >&2; tail -20 "$log" >&2
    elif [ "$f" -gt "$(allowed "$g" "$label")" ]; then
      status=1; echo "h5loom $label, group $g: $f failed (at most $(allowed "$g" "$label") known):" >&2
      grep -B2 -A2 "FAILED" "$log" | head -60 >&2
    fi
    row+=" $p / $f / $s |"
    [ -n "${H5LOOM_API_LOGS:-}" ] && cp "$log" "$H5LOOM_API_LOGS/"
  done
  out "$row"
done
out "(passed / failed / skipped)"
[ -n "${H5LOOM_API_TABLE:-}" ] && cp "$table" "$H5LOOM_API_TABLE"
exit $status
