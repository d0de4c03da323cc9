#!/bin/sh
test_description='COUNT(*) by event and time bucket, and a plain COUNT(*), from the counts settled tables keep (store/FORMAT.md, "Catalog block"): the same answers as reading the rows, over whole windows and cut ranges, after a restart, with a late row, a delete and a duplicate'
. "$(dirname "$0")/lib.sh"

# Three hours of log lines (T is an hour boundary) from two batches, a
# duplicate line (one row), and the daemon settling a second after the
# last write, so that each window becomes one table with its counts.
T=1699999200
NS=000000000
T0=$T$NS
T3=$((T + 3 * 3600))$NS

sql() { lb_sql "$1"; }

analyze() { lb_analyze "$1"; }

# same Q: Q answers what Q does when it must read every row (a condition
# on ts that no range stands for), and EXPLAIN ANALYZE of Q counted rows
same() {
    test "$(sql "$1")" = 200 && cp body counted &&
    read_q=$(printf '%s' "$1" | sed "s/ WHERE / WHERE ts != 1 AND /") &&
    test "$(sql "$read_q")" = 200 && cp body read &&
    test_cmp read counted &&
    test "$(sql "EXPLAIN ANALYZE $1")" = 200 &&
    n=$(analyze rows_counted) && test "$n" -gt 0 &&
    test "$(sql "EXPLAIN ANALYZE $read_q")" = 200 &&
    test "$(analyze rows_counted)" = 0
}

# settled N [LEAST]: waits (at most 20 s) until N rows of the three hours
# are counted from the tables (every window settled into one table), or
# at least N with LEAST
settled() {
    n=0
    while [ $n -lt 100 ]; do
        sql "EXPLAIN ANALYZE SELECT COUNT(*) FROM logs WHERE ts >= $T0 AND ts < $T3" >/dev/null &&
            c=$(analyze rows_counted) &&
            { [ "$c" = "$1" ] || { [ -n "$2" ] && [ "$c" -ge "$1" ]; }; } && return 0
        sleep 0.2
        n=$((n + 1))
    done
    cat body
    return 1
}

test_expect_success 'start (settle_after=1s); write three hours of log lines in two batches' '
    lb_start --set settle_after=1s &&
    perl -e '"'"'
        my ($t, $ns) = @ARGV;
        my @ev = ("app", "db", "auth.login");
        for my $i (0 .. 5399) {
            my $ts = ($t + $i * 2) . sprintf("%09d", ($i * 7919) % 1000000000);
            printf "{\"ts\":%s,\"host\":\"web-%d\",\"event\":\"%s\",\"msg\":\"line %d\"}\n",
                $ts, $i % 7, $ev[$i % 3], $i;
        }'"'"' $T $NS >logs.jsonl &&
    head -n 2700 logs.jsonl >a.jsonl && tail -n 2700 logs.jsonl >b.jsonl &&
    head -n 1 logs.jsonl >>b.jsonl &&
    test "$(lb_req POST "/api/v1/ingest?db=logs&format=jsonl" --data-binary @a.jsonl)" = 204 &&
    test "$(lb_req POST "/api/v1/ingest?db=logs&format=jsonl" --data-binary @b.jsonl)" = 204 &&
    settled 5400 &&
    test "$(sql "SELECT COUNT(*) FROM logs WHERE ts >= $T0")" = 200 &&
    grep -q "^{\"count\":5400}" body
'

test_expect_success 'counts by event and time bucket, by event, and plain, over whole hours and cut ranges' '
    same "SELECT time_bucket('"'5m'"') AS t, event, COUNT(*) FROM logs WHERE ts >= $T0 AND ts < $T3 GROUP BY t, event" &&
    test $(wc -l <counted) = 108 &&
    same "SELECT time_bucket('"'10m'"', '"'3m'"') AS t, COUNT(*) AS n FROM logs WHERE ts >= $((T + 1234))$NS AND ts <= $((T + 9000))123456789 GROUP BY t ORDER BY t" &&
    same "SELECT event, COUNT(*) FROM logs WHERE ts >= $((T + 61))$NS AND event IN ('"'app'"', '"'db'"') GROUP BY event HAVING COUNT(*) > 10 ORDER BY 2 DESC" &&
    same "SELECT COUNT(*) FROM logs WHERE ts >= $((T + 3599))999999999 AND ts < $((T + 7300))$NS"
'

test_expect_success 'a restart reads the counts back from the tables' '
    lb_stop && lb_start --set settle_after=1s &&
    same "SELECT time_bucket('"'1h'"') AS t, event, COUNT(*) FROM logs WHERE ts >= $T0 AND ts < $T3 GROUP BY t, event"
'

# A late row lands in a table of its own beside its window's final one
# (store/compact.c: a late batch does not rewrite the whole window): once
# flushed, the window is counted again, its counts corrected by the late
# row looked up in the final table; the delete (a range tombstone) has its
# window merged whole, which is counted again. Every row is then counted.
test_expect_success 'a late row and a delete: answered at once, the same answers once settled' '
    echo "{\"ts\":$((T + 4000))$NS,\"host\":\"web-9\",\"event\":\"app\",\"msg\":\"late\"}" >late.jsonl &&
    test "$(lb_req POST "/api/v1/ingest?db=logs&format=jsonl" --data-binary @late.jsonl)" = 204 &&
    test "$(sql "DELETE FROM logs WHERE host = '"'web-3'"' AND ts >= $((T + 7200))$NS AND ts < $((T + 7800))$NS")" = 200 &&
    Q="SELECT time_bucket('"'5m'"') AS t, event, COUNT(*) FROM logs WHERE ts >= $T0 AND ts < $T3 GROUP BY t, event" &&
    test "$(sql "$Q")" = 200 && cp body now &&
    test "$(sql "$(printf "%s" "$Q" | sed "s/ WHERE / WHERE ts != 1 AND /")")" = 200 &&
    test_cmp body now &&
    gone=$(perl -e '"'"'print scalar grep { $_ % 7 == 3 } 3600 .. 3899'"'"') &&
    test "$(sql "SELECT COUNT(*) FROM logs WHERE ts >= $T0")" = 200 &&
    grep -q "^{\"count\":$((5401 - gone))}" body &&
    settled $((5401 - gone)) && same "$Q" &&
    test "$(sql "SELECT COUNT(*) FROM logs WHERE ts >= $T0 AND ts < $T3")" = 200 &&
    grep -q "^{\"count\":$((5401 - gone))}" body
'

test_expect_success '/metrics counts the rows taken from counts' '
    test "$(lb_req GET /metrics)" = 200 &&
    grep -q "^logbucket_query_rows_counted_total [1-9]" body
'

test_expect_success 'stop' '
    lb_stop
'

test_done
