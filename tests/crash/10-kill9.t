#!/bin/sh
test_description='kill -9 during writes: every acknowledged write is there exactly once after a restart'
. "$(dirname "$0")/../e2e/lib.sh"

# Every batch b of writer N is one second, T0 + b, of host wN, and holds 20
# rows of one (ts, host, event) that only their identity tells apart (store/
# FORMAT.md, "Row identity"):
#   odd b:  JSON lines (event log, RFC 3339 second timestamps) that differ by
#           msg, plus an exact duplicate of the first line (the same row);
#   even b: line protocol at precision=s (event crash), 20 points that
#           differ by the cpu tag.
# msg is "batch b line i" in both. After each 204 the batch number goes to
# acked.N; every third acknowledged batch is posted again, as a client
# retrying it would (the same rows: duplicates of the log entries, merges of
# the points), until the writer is killed or has written 400 batches.
T0=1700000000

writer() {
    b=1
    while [ $b -le 400 ]; do
        if [ $((b % 2)) = 1 ]; then
            ts=$(date -u -d @$((T0 + b)) +%Y-%m-%dT%H:%M:%SZ)
            awk -v w="$1" -v b=$b -v ts="$ts" 'BEGIN { for (i = 0; i <= 20; i++)
                printf "{\"ts\":\"%s\",\"host\":\"w%s\",\"event\":\"log\",\"msg\":\"batch %d line %d\"}\n",
                    ts, w, b, i % 20 }' >batch.$1
            url="$LB_URL/api/v1/ingest?db=crash&format=jsonl"
        else
            awk -v w="$1" -v b=$b -v ts=$((T0 + b)) 'BEGIN { for (i = 0; i < 20; i++)
                printf "crash,host=w%s,cpu=cpu%d seq=%di,msg=\"batch %d line %d\" %s\n",
                    w, i, i, b, i, ts }' >batch.$1
            url="$LB_URL/write?db=crash&precision=s"
        fi
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 \
            --data-binary @batch.$1 "$url") || return 0
        if [ "$code" = 204 ]; then
            echo $b >>acked.$1
            if [ $((b % 3)) = 0 ]; then
                curl -s -o /dev/null --max-time 10 --data-binary @batch.$1 "$url" || return 0
            fi
        fi
        b=$((b + 1))
    done
}

# verify N: every row of writer N is whole seconds with the msg of its
# batch, no row is there twice, every second present holds exactly 20 rows
# (no batch is half there, no duplicate became a row) and every
# acknowledged batch is present. The writers' first batch creates the
# database: killed before any batch was acknowledged (an early kill moment
# in a slow sanitizer build), it may not be there, and then no writer may
# have had a batch acknowledged.
verify() {
    curl -s --max-time 30 "$LB_URL/api/v1/query?db=crash&host=w$1&order=asc" >rows.$1 || return 1
    if grep -q "^{\"error\":\"database 'crash' not found\"}" rows.$1; then
        if [ -n "$(cat acked.1 acked.2 acked.3 acked.4 2>/dev/null)" ]; then
            echo "writer $1: batches were acknowledged but the database is gone" >&2
            return 1
        fi
        : >rows.$1
        : >have.$1
        return 0
    fi
    # "second msg" per row
    sed -n 's/^{"ts":\([0-9]*\)000000000,.*"msg":"\([^"]*\)".*/\1 \2/p' rows.$1 >have.$1
    if [ "$(wc -l <have.$1)" != "$(wc -l <rows.$1)" ]; then
        echo "writer $1: rows that are not whole seconds with a msg:" >&2
        grep -v '^{"ts":[0-9]*000000000,.*"msg":"' rows.$1 | head -5 >&2
        return 1
    fi
    if [ -n "$(sort have.$1 | uniq -d)" ]; then
        echo "writer $1: rows stored twice:" >&2
        sort have.$1 | uniq -d | head -5 >&2
        return 1
    fi
    if ! awk -v t0=$T0 '{ if ($3 != $1 - t0) { print; bad = 1 } } END { exit bad }' have.$1 >wrong.$1; then
        echo "writer $1: rows with the msg of another batch:" >&2
        head -5 wrong.$1 >&2
        return 1
    fi
    cut -d' ' -f1 have.$1 | uniq -c >count.$1
    if ! awk '$1 != 20 { print; bad = 1 } END { exit bad }' count.$1 >half.$1; then
        echo "writer $1: seconds without exactly 20 rows (count, second):" >&2
        head -5 half.$1 >&2
        return 1
    fi
    [ -s acked.$1 ] || return 0
    while read -r b; do
        if ! grep -q " $((T0 + b))\$" count.$1; then
            echo "writer $1 batch $b acknowledged but not found" >&2
            return 1
        fi
    done <acked.$1
}

test_expect_success 'start' '
    lb_start --set wal_sync=always
'

# 20 rounds (8 in the slower sanitizer builds), each killing the daemon at a
# random moment 0.05 to 1.5 s into the writes (LB_SEED=N repeats a run).
ROUNDS=20
[ "${LB_SAN:-0}" = 1 ] && ROUNDS=8
SEED=${LB_SEED:-$(date +%s)}
echo "# kill moments from seed $SEED (LB_SEED=$SEED repeats them)"
awk -v seed="$SEED" -v n=$ROUNDS 'BEGIN { srand(seed); for (i = 0; i < n; i++)
    printf "%.2f\n", 0.05 + rand() * 1.45 }' >"$SHARNESS_TRASH_DIRECTORY/moments"

round=1
while [ $round -le $ROUNDS ]; do
    moment=$(sed -n "${round}p" "$SHARNESS_TRASH_DIRECTORY/moments")
    test_expect_success "round $round: kill -9 at ${moment}s while 4 writers write, restart, verify" '
        rm -f acked.1 acked.2 acked.3 acked.4 &&
        ( writer 1 & writer 2 & writer 3 & writer 4 & wait ) &
        wpid=$! &&
        sleep $moment &&
        lb_kill9 &&
        wait $wpid;
        lb_start --set wal_sync=always &&
        verify 1 && verify 2 && verify 3 && verify 4 &&
        cat acked.1 acked.2 acked.3 acked.4 2>/dev/null | wc -l >>rounds.log &&
        cat have.1 have.2 have.3 have.4 | wc -l >>rows.log
    '
    round=$((round + 1))
done

test_expect_success 'every round ran, and writes were acknowledged across the rounds' '
    total=$(awk "{ s += \$1 } END { print s + 0 }" rounds.log) &&
    echo "# $(wc -l <rounds.log) rounds survived; acknowledged batches: $total; rows after the last round: $(tail -n 1 rows.log)" &&
    test "$(wc -l <rounds.log)" = $ROUNDS &&
    test "$total" -gt 10
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
