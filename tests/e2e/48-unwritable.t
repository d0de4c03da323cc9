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

# Syslog has no reply, so a connection waits (and stops reading) while the
# store is busy; a store that cannot flush stays busy for good, and a stop
# must not wait for it: it gives the store a few seconds, then counts what
# it could not write as not stored.
. "$LB_TOP/tests/e2e/syslog-lib.sh"
SEND="$LB_TOP/tests/e2e/syslog-send.pl"

test_expect_success CHATTR 'syslog into a store that cannot flush: a stop does not wait for it' '
    sl_start --set memtable_bytes=8MiB &&
    printf "<13>1 - h stuck - - - first\n" >first &&
    "$SEND" tcp "$SL_TCP" first &&
    sl_wait_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog" 1 &&
    awk "BEGIN { for (i = 0; i < 120000; i++)
        printf \"<13>1 - h%d stuck - - - message %d of a store that cannot flush its memtables\\n\", i % 50, i }" >many &&
    find "$LB_DATA/syslog" -type d -exec chattr +i {} + &&
    test_when_finished "find \"$LB_DATA/syslog\" -type d -exec chattr -i {} +" &&
    { "$SEND" keep "$SL_TCP" many 60 >/dev/null 2>&1 & sender=$!; } &&
    test_when_finished "kill $sender 2>/dev/null; wait $sender 2>/dev/null; true" &&
    n=0 &&
    while [ "$(sl_metric "logbucket_write_stall_seconds_total{db=\"syslog\"}")" = 0 ] && [ $n -lt 100 ]; do
        sleep 0.1; n=$((n + 1))
    done &&
    sleep 1 &&
    t0=$(date +%s) &&
    { lb_stop 40; rc=$?; } &&
    echo "# stopped in $(( $(date +%s) - t0 )) s, status $rc" &&
    test $rc != 124
'

test_done
