#!/bin/sh
test_description='a full disk end to end: writes get 507, reads go on, nothing acknowledged is lost, writes resume once space is back (an 8 MiB tmpfs; needs the right to mount, else skipped)'
. "$(dirname "$0")/lib.sh"

MNT=$(mktemp -d "${TMPDIR:-/tmp}/lb-full.XXXXXX")
MOUNTED=
fs_cleanup() {
    if [ -n "$LB_PID" ] && kill -0 "$LB_PID" 2>/dev/null; then
        kill -KILL "$LB_PID" 2>/dev/null
        wait "$LB_PID" 2>/dev/null
    fi
    LB_PID=
    [ -n "$MOUNTED" ] && umount "$MNT" 2>/dev/null
    rmdir "$MNT" 2>/dev/null
    lb_cleanup
}
trap fs_cleanup EXIT

if ! mount -t tmpfs -o size=8m tmpfs "$MNT" 2>/dev/null; then
    skip_all='cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)'
    test_done
fi
MOUNTED=1
LB_DATA=$MNT/data

sql() {
    lb_req POST /api/v1/sql -H "Content-Type: text/plain" --data-binary "$1"
}

count() { # rows of database full, via a full scan
    sql "SELECT /*+ full_scan */ COUNT(*) FROM full" >/dev/null &&
    sed -n 's/^{"count":\([0-9]*\)}$/\1/p' body
}

# batch N: 400 lines of about 150 bytes, distinct keys (ts = second 1700000000+N, ns i;
# printed as two integers: awk's doubles cannot hold 19 digits)
batch() {
    awk -v n="$1" 'BEGIN { for (i = 0; i < 400; i++)
        printf "ev,host=h%d,region=eu-west-1 msg=\"%s\",code=%di %d%09d\n", i % 5,
            "GET /some/long/path/for/padding/of/the/line/protocol?id=" n "-" i, 200 + i % 9,
            1700000000 + n, i }' >batch.lp
}

test_expect_success 'start on the small disk, a ballast file takes most of it' '
    dd if=/dev/zero of="$MNT/ballast" bs=1M count=4 2>/dev/null &&
    lb_start --set wal_sync=always --set memtable_bytes=64MiB --set retention_check_interval=1s
'

test_expect_success 'writes fill the disk: 204 until a 507 with a clear error' '
    acked=0 n=0 status=204 &&
    while [ $n -lt 300 ] && [ "$status" = 204 ]; do
        batch $n &&
        status=$(lb_req POST "/write?db=full&precision=ns" --data-binary @batch.lp) &&
        if [ "$status" = 204 ]; then acked=$((acked + 400)); fi &&
        n=$((n + 1))
    done &&
    echo "$acked" >acked &&
    echo "# acknowledged $acked rows in $n requests before the disk was full" &&
    test "$status" = 507 &&
    grep -q "disk full" body &&
    test "$acked" -gt 0
'

test_expect_success 'reads keep working and see every acknowledged row' '
    test "$(count)" = "$(cat acked)" &&
    test "$(lb_req GET "/api/v1/query?db=full&host=h1&limit=3")" = 200 &&
    test "$(wc -l <body)" = 3 &&
    test "$(lb_req GET /metrics)" = 200 &&
    grep "^logbucket_write_nospc_total{db=\"full\"}" body | grep -qv " 0$"
'

test_expect_success 'writes resume by themselves once space is back' '
    rm -f "$MNT/ballast" &&
    batch 100000 &&
    n=0 status=507 &&
    while [ $n -lt 50 ] && [ "$status" != 204 ]; do
        status=$(lb_req POST "/write?db=full&precision=ns" --data-binary @batch.lp)
        [ "$status" = 204 ] || sleep 0.1
        n=$((n + 1))
    done &&
    test "$status" = 204 &&
    echo $(( $(cat acked) + 400 )) >acked &&
    test "$(count)" = "$(cat acked)"
'

test_expect_success 'nothing acknowledged is lost across a restart' '
    lb_stop 20 &&
    lb_start &&
    test "$(count)" = "$(cat acked)"
'

test_expect_success 'stop' '
    lb_stop 20
'

test_done
