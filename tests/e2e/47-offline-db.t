#!/bin/sh
# One damaged database never takes the rest down: a database that cannot
# open at start (a damaged SSTable footer, a missing SSTable, damaged
# TOMBSTONES or META, WAL damage before its tail) is kept offline with its
# files untouched, and says why in /health, SHOW DATABASES, /metrics and
# the replies to requests for it, while the other databases serve. DROP
# DATABASE removes it; a restart after a repair brings it back.

test_description='a damaged database is offline, the others serve'
. "$(dirname "$0")/lib.sh"

sql() {
    lb_req POST /api/v1/sql --data-binary "$1"
}

# stop, damage with "$@", start again
damage() {
    lb_stop &&
    "$@" &&
    lb_start
}

flip_last_byte() { # flip_last_byte FILE
    perl -e 'open my $f, "+<", $ARGV[0] or die; binmode $f; seek $f, -3, 2; read $f, my $c, 1;
             seek $f, -3, 2; print $f chr(ord($c) ^ 1); close $f' "$1"
}

test_expect_success 'start, three databases with rows, flushed by a clean stop' '
    lb_start &&
    for db in good bad gone; do
        test "$(sql "CREATE DATABASE $db WITH (buckets=1)")" = 200 &&
        test "$(lb_req POST "/write?db=$db" --data-binary "cpu,host=h v=1i 1000")" = 204 || return 1
    done &&
    lb_stop && lb_start &&
    ls "$LB_DATA"/bad/p00/*.sst >/dev/null
'

test_expect_success 'a damaged SSTable footer in bad: the daemon starts, the others serve' '
    cp -r "$LB_DATA/bad" "$SHARNESS_TRASH_DIRECTORY/bad.saved" &&
    damage flip_last_byte "$(ls "$LB_DATA"/bad/p00/*.sst | head -n 1)" &&
    grep -q "database bad is offline" "$LB_LOG.new" &&
    test "$(lb_req POST "/write?db=good" --data-binary "cpu,host=h v=2i 2000")" = 204 &&
    test "$(sql "SELECT COUNT(*) FROM good WHERE host = '"'h'"'")" = 200 &&
    grep -q "\"count\":2" body
'

test_expect_success 'requests for bad get 503 with the reason, not 404 and not a new database' '
    test "$(lb_req POST "/write?db=bad" --data-binary "cpu,host=h v=3i 3000")" = 503 &&
    grep -q "database bad is offline since the start: CORRUPT" body &&
    test "$(sql "SELECT * FROM bad WHERE host = '"'h'"'")" = 503 &&
    grep -q "offline" body &&
    test "$(sql "CREATE DATABASE bad")" = 503 &&
    grep -q "exists but is offline" body
'

test_expect_success '/health warns and names it; SHOW DATABASES and /metrics show it' '
    test "$(lb_req GET /health)" = 200 &&
    grep -q "\"status\":\"warn\"" body &&
    grep -q "\"name\":\"database bad\",\"status\":\"fail\",\"message\":\"offline: CORRUPT" body &&
    test "$(sql "SHOW DATABASES")" = 200 &&
    grep -q "\"name\":\"bad\",\"status\":\"offline\",\"error\":\"CORRUPT" body &&
    grep -q "\"name\":\"good\"" body &&
    test "$(lb_req GET /metrics)" = 200 &&
    grep -q "^logbucket_database_offline{db=\"bad\"} 1$" body
'

test_expect_success 'its files are untouched; restored, it is back after a restart' '
    lb_stop &&
    rm -rf "$LB_DATA/bad" &&
    cp -r "$SHARNESS_TRASH_DIRECTORY/bad.saved" "$LB_DATA/bad" &&
    lb_start &&
    test "$(sql "SELECT COUNT(*) FROM bad WHERE host = '"'h'"'")" = 200 &&
    grep -q "\"count\":1" body &&
    test "$(lb_req GET /health)" = 200 &&
    grep -q "\"status\":\"pass\"" body
'

test_expect_success 'a missing SSTable: offline, and the reason names the file' '
    sst=$(ls "$LB_DATA"/gone/p00/*.sst | head -n 1) &&
    damage rm "$sst" &&
    test "$(lb_req POST "/write?db=gone" --data-binary "cpu,host=h v=3i 3000")" = 503 &&
    grep -q "$(basename "$sst")" body &&
    grep -q "missing" body
'

test_expect_success 'DROP DATABASE removes the offline database; the name can be used again' '
    test "$(sql "DROP DATABASE gone")" = 200 &&
    test ! -d "$LB_DATA/gone" &&
    test "$(lb_req POST "/write?db=gone" --data-binary "cpu,host=h v=4i 4000")" = 204 &&
    test "$(lb_req GET /health)" = 200 &&
    grep -q "\"status\":\"pass\"" body
'

test_expect_success 'damaged TOMBSTONES: offline with the reason' '
    test "$(sql "DELETE FROM good WHERE host = '"'h'"' AND ts BETWEEN 1 AND 10")" = 200 &&
    damage flip_last_byte "$LB_DATA/good/TOMBSTONES" &&
    test "$(sql "SELECT COUNT(*) FROM good WHERE host = '"'h'"'")" = 503 &&
    grep -q "TOMBSTONES" body &&
    test "$(lb_req POST "/write?db=bad" --data-binary "cpu,host=h v=5i 5000")" = 204
'

test_expect_success 'stop' '
    lb_stop
'

test_done
