#!/usr/bin/env bash
# HDF5's parallel API tests (h5_api_test_parallel, installed with the
# project's HDF5) through h5loom's VOL connector with one engine
# configuration, at NP ranks, in a fresh directory. Passes when the program
# ran to its summary and reports no failed test; prints the summary.
#   run_api_tests_parallel.sh CONFIG NP PLUGIN_DIR HDF5_BINDIR WORK_DIR MPIEXEC...
set -uo pipefail
config=$1 np=$2 plugin_dir=$3 bindir=$4 work=$5
shift 5
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
HDF5_PLUGIN_PATH="$plugin_dir" HDF5_VOL_CONNECTOR="h5loom $config" H5LOOM_PROFILE="$work/profile" \
  "$@" "$np" "$bindir/h5_api_test_parallel" > api.log 2>&1
rc=$?
summary=$(grep -E "API tests (passed|did not pass|were skipped)" api.log)
echo "h5_api_test_parallel, h5loom $config, $np ranks (exit $rc):"
echo "$summary"
if [ $rc -ne 0 ] || ! grep -q "API tests passed" <<< "$summary"; then
  echo "did not run to its summary; the end of its output:"; tail -40 api.log; exit 1
fi
if ! grep -qE "^0/[0-9]+ .*did not pass" <<< "$summary"; then
  echo "failed tests:"; grep -B3 "FAILED" api.log | head -80; exit 1
fi
