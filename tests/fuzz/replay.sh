#!/usr/bin/env bash
# ctest fuzz-replay: runs the log-reader fuzz target (log_reader_replay, built
# with this build's sanitizers) on every saved regression input and every
# seed. Usage: replay.sh REPLAY_BINARY REGRESSIONS_DIR CORPUS_DIR...
#
# Inputs named in known-open.txt reproduce a finding in code that is being
# rewritten (src/engines/log/, src/core/; issue 13): each runs in its own
# process, is reported, and does not fail the test, so the suite stays green
# until the fix lands; once one passes, the script says so (delete its line).
set -u
bin=$1 regressions=$2
shift 2
known_list="$(dirname "$0")/known-open.txt"
known=()
[ -f "$known_list" ] && mapfile -t known < <(awk '!/^#/ && NF {print $1}' "$known_list")
is_known() { local k; for k in "${known[@]}"; do [ "$k" = "$1" ] && return 0; done; return 1; }

inputs=() open=()
for f in "$regressions"/*; do
  [ -f "$f" ] || continue
  if is_known "$(basename "$f")"; then open+=("$f"); else inputs+=("$f"); fi
done
status=0
echo "replay: ${#inputs[@]} regression inputs, corpus $*"
"$bin" "${inputs[@]}" "$@" 2>replay-stderr.log || { status=1; tail -n 60 replay-stderr.log; }
for f in "${open[@]}"; do
  if timeout 120 "$bin" "$f" >/dev/null 2>&1; then
    echo "replay: $(basename "$f") no longer fails - the finding is fixed; remove it from known-open.txt"
  else
    echo "replay: $(basename "$f") still fails (known open finding, see known-open.txt)"
  fi
done
exit $status
