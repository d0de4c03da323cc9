#!/bin/sh
# Runs one test file for prove with a time limit, so that a test that hangs
# fails with a reason instead of holding the whole run: LB_TEST_TIMEOUT
# seconds (default 600), then SIGTERM, and SIGKILL 10 s later.
# Usage (from the Makefile): prove --exec scripts/run-test.sh ...
limit=${LB_TEST_TIMEOUT:-600}
timeout -k 10 "$limit" "$@"
rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "# $1: timed out after $limit s (LB_TEST_TIMEOUT)" >&2
    echo "not ok - $1 timed out after $limit s"
fi
exit "$rc"
