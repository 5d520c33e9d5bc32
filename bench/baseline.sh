#!/bin/sh
# Builds the `issues` of a commit from before the event log, for bench/events.py's A/B, with that commit's own
# `make release` (so it is built as `make bench` builds this one), in a worktree of its own under
# ${BASELINE_DIR:-/tmp/issues-baseline-COMMIT}, and prints the binary's path.
# Usage: bench/baseline.sh [COMMIT]   (default 08c0739, the parent of the events merge)
set -eu
rev=${1:-08c0739}
dir=${BASELINE_DIR:-/tmp/issues-baseline-$rev}
if [ ! -d "$dir" ]; then
    git worktree add --detach "$dir" "$rev" >&2
fi
make -C "$dir" release >&2
echo "$dir/.build/release/issues"
