#!/bin/sh
# A data directory the daemon may no longer write is the server's fault:
# requests that need to write there get 500 naming an I/O error (not 403,
# which is for a token without the right), and the log does not flood.
# The directory is made unwritable with chattr +i (root may write past
# file modes); skipped where that is not possible.

test_description='an unwritable data directory: honest statuses'
. "$(dirname "$0")/lib.sh"

test_expect_success 'start with a database' '
    lb_start &&
    test "$(lb_req POST "/write?db=x" --data-binary "m,host=a v=1 1")" = 204
'

if chattr +i "$LB_DATA" 2>/dev/null; then
    chattr -i "$LB_DATA"
    test_set_prereq CHATTR
else
    echo "# chattr +i does not work here (not root, or a file system without it): skipped"
fi

test_expect_success CHATTR 'a new database in an unwritable data directory: 500, not 403' '
    chattr +i "$LB_DATA" "$LB_DATA/x" &&
    test_when_finished "chattr -i \"$LB_DATA\" \"$LB_DATA/x\"" &&
    test "$(lb_req POST "/write?db=y" --data-binary "m,host=a v=1 1")" = 500 &&
    grep -q "IO" body &&
    test "$(lb_req POST /api/v1/sql --data-binary "CREATE DATABASE z")" = 500 &&
    test "$(lb_req POST /api/v1/sql --data-binary "ALTER DATABASE x SET ttl='"'"'7d'"'"'")" = 500
'

test_expect_success CHATTR '300 failing requests log at most 10 lines a second per message' '
    chattr +i "$LB_DATA" &&
    test_when_finished "chattr -i \"$LB_DATA\"" &&
    before=$(wc -l <"$LB_LOG.new") &&
    t0=$(date +%s) &&
    i=0 &&
    while [ $i -lt 300 ]; do
        curl -s -o /dev/null -XPOST "$LB_URL/write?db=n$i" --data-binary "m,host=a v=1 1"
        i=$((i + 1))
    done &&
    after=$(wc -l <"$LB_LOG.new") &&
    secs=$(( $(date +%s) - t0 + 1 )) &&
    echo "# log lines: $((after - before)) in $secs s for 300 failing requests" &&
    # each request logs two or three messages: unlimited, that is 600 or more
    # lines; limited, at most 10 a second for each of a few messages
    test $((after - before)) -le $((40 * secs))
'

test_expect_success 'writable again: served' '
    test "$(lb_req POST "/write?db=y" --data-binary "m,host=a v=1 1")" = 204
'

test_expect_success 'stop' '
    lb_stop
'

test_done
