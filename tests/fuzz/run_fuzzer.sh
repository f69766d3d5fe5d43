#!/usr/bin/env bash
# Runs the libFuzzer log-reader target for a fixed time (ctest fuzz-pass and
# `make fuzz`). Usage: run_fuzzer.sh FUZZER SECONDS WORK_DIR CORPUS_DIR REGRESSIONS_DIR [libFuzzer args...]
#
# CORPUS_DIR (the seeds of make_log_seeds) grows with the inputs the run finds;
# the regression inputs are replayed first (except the known open findings of
# known-open.txt, which would stop the run at once; fuzz-replay reports them).
# A finding leaves its input in WORK_DIR/artifacts/ and fails with the stack.
set -u
fuzzer=$1 seconds=$2 work=$3 corpus=$4 regressions=$5
shift 5
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$work/artifacts" "$corpus"
replay="$work/regressions-replayed"
rm -rf "$replay" && mkdir -p "$replay"
known=()
[ -f "$here/known-open.txt" ] && mapfile -t known < <(awk '!/^#/ && NF {print $1}' "$here/known-open.txt")
for f in "$regressions"/*; do
  [ -f "$f" ] || continue
  skip=0
  for k in "${known[@]}"; do [ "$k" = "$(basename "$f")" ] && skip=1; done
  [ $skip = 1 ] || cp "$f" "$replay/"
done
# libFuzzer checks for leaks input by input (what MPI_Init allocated before the
# first input is not counted): a leak in the reader is a finding. No check at
# exit: MPI_Init's allocations are never freed (docs/testing.md).
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:leak_check_at_exit=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "fuzz: $fuzzer for ${seconds}s; corpus $corpus ($(ls "$corpus" | wc -l) inputs), $(ls "$replay" | wc -l) regression inputs"
"$fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=16384 \
  -dict="$here/log_reader.dict" -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$@" "$corpus" "$replay" 2>&1 | grep -v '^h5loom: warning:' >"$work/fuzz.log"  # the reader's warnings on damaged files
status=${PIPESTATUS[0]}
grep -E "^#[0-9]+.*DONE|stat::|ERROR|SUMMARY|==[0-9]+==|loomfuzz:|Test unit written|artifact_prefix" "$work/fuzz.log" | tail -n 40
if [ $status -eq 72 ]; then
  echo "fuzz: interrupted"
elif [ $status -ne 0 ]; then
  echo "fuzz: FINDING (exit $status); the log is $work/fuzz.log"
  tail -n 80 "$work/fuzz.log"
fi
exit $status
