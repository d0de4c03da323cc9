#!/bin/sh
test_description='aggregates of one host read from the host sections of settled windows (store/FORMAT.md, "Host section"): the same answers as reading the rows, in SQL and InfluxQL, after a restart, with a late row, a delete and a string field'
. "$(dirname "$0")/lib.sh"

# Three hours of points (T is an hour boundary) of 7 hosts and two
# measurements, value (float) and n (int); mem also has a string field
# note in some rows. The daemon settles a second after the last write.
T=1699999200
NS=000000000
T0=$T$NS
T3=$((T + 3 * 3600))$NS
MS0=${T}000
MS3=$((T + 3 * 3600))000

sql() { lb_sql "$1"; }

PY=/usr/bin/python3
command -v "$PY" >/dev/null || PY=python3

iql() { # iql STATEMENT: GET /query as Grafana sends it; body in ./body
    lb_req GET "/query" -G --data-urlencode "db=pts" --data-urlencode "epoch=ms" \
        --data-urlencode "q=$1"
}

analyze() { lb_analyze "$1"; }

# same Q: Q answers what Q does when it must read the rows (a tag in the
# condition that no row has: true for every row, but no section holds
# tags), and EXPLAIN ANALYZE of Q read rows from sections, of the other not
same() {
    test "$(sql "$1")" = 200 && cp body fast &&
    read_q=$(printf '%s' "$1" | sed "s/ WHERE / WHERE tags.nosuch IS NULL AND /") &&
    test "$(sql "$read_q")" = 200 && cp body slow &&
    test_cmp slow fast &&
    test "$(sql "EXPLAIN ANALYZE $1")" = 200 &&
    n=$(analyze rows_from_sections) && test "$n" -gt 0 &&
    test "$(sql "EXPLAIN ANALYZE $read_q")" = 200 &&
    test "$(analyze rows_from_sections)" = 0
}

# settled: waits (at most 20 s) until a host's aggregate over the three
# hours reads every window from sections (every window settled)
settled() {
    n=0
    while [ $n -lt 100 ]; do
        sql "EXPLAIN ANALYZE SELECT COUNT(*) AS c FROM pts WHERE host = 'web-3' AND ts >= $T0 AND ts < $T3" >/dev/null &&
            c=$(analyze rows_from_sections) && s=$(analyze rows_scanned) &&
            [ "$c" != none ] && [ "$c" -gt 0 ] && [ "$c" = "$s" ] && return 0
        sleep 0.2
        n=$((n + 1))
    done
    cat body
    return 1
}

test_expect_success 'start (settle_after=1s); write three hours of points; answers before settling' '
    lb_start --set settle_after=1s &&
    perl -e '"'"'
        my ($t) = @ARGV;
        for my $i (0 .. 7559) {
            my $ts = ($t + int($i * 10 / 7)) . sprintf("%09d", ($i * 7919) % 1000000000);
            my $m = $i % 2 ? "mem" : "cpu";
            my $note = ($m eq "mem" && $i % 5 == 0) ? ",note=\"x$i\"" : "";
            printf "%s,host=web-%d value=%.3f,n=%di%s %s\n",
                $m, $i % 7, ($i * 37 % 1000) / 7, $i % 13, $note, $ts;
        }'"'"' $T >pts.lp &&
    test "$(lb_req POST "/write?db=pts&precision=ns" --data-binary @pts.lp)" = 204 &&
    Q1="SELECT mean(\"value\") FROM \"cpu\" WHERE (\"host\" = '"'web-3'"') AND time >= ${MS0}ms and time <= ${MS3}ms GROUP BY time(5m) fill(null)" &&
    Q2="SELECT max(\"value\"), count(\"n\"), sum(\"n\") FROM \"mem\" WHERE \"host\" = '"'web-5'"' AND time >= ${MS0}ms and time < ${MS3}ms GROUP BY time(10m), \"host\" fill(none)" &&
    test "$(iql "$Q1")" = 200 && cp body q1.before &&
    test "$(iql "$Q2")" = 200 && cp body q2.before &&
    Q3="SELECT count(\"value\"), max(\"n\") FROM \"cpu\" WHERE \"host\" = '"'web-3'"' AND \"value\" > 50 AND time >= ${MS0}ms and time < ${MS3}ms" &&
    Q4="SELECT count(\"value\"), sum(\"n\") FROM \"mem\" WHERE (\"host\" = '"'web-1'"' OR \"host\" = '"'web-5'"') AND time >= ${MS0}ms and time < ${MS3}ms GROUP BY time(1h)" &&
    Q5="SELECT mean(\"value\") FROM \"cpu\" WHERE \"n\" < 5 AND time >= ${MS0}ms and time < ${MS3}ms GROUP BY time(30m), \"host\"" &&
    for q in 3 4 5; do
        eval "test \"\$(iql \"\$Q$q\")\" = 200" && cp body q$q.before &&
        grep -q "\"values\":\[\[[0-9]*,[1-9]" q$q.before || return 1
    done &&
    settled
'

test_expect_success 'SQL aggregates of hosts over whole hours and cut ranges, grouped by time, event and host' '
    same "SELECT time_bucket('"'5m'"') AS t, event, AVG(value), MIN(value), MAX(n), COUNT(*), SUM(n) FROM pts WHERE host = '"'web-3'"' AND ts >= $T0 AND ts < $T3 GROUP BY t, event ORDER BY t, event" &&
    test $(wc -l <fast) = 72 &&
    same "SELECT host, COUNT(value), FIRST(value), LAST(n), PERCENTILE(value, 90) FROM pts WHERE host IN ('"'web-1'"', '"'web-6'"') AND event = '"'mem'"' AND ts >= $((T + 1234))$NS AND ts <= $((T + 9000))123456789 GROUP BY host ORDER BY host" &&
    same "SELECT time_bucket('"'1h'"') AS t, COUNT(*) FROM pts WHERE host = '"'web-0'"' AND value > 50 GROUP BY t ORDER BY t" &&
    same "SELECT COUNT(*), AVG(value) FROM pts WHERE host = '"'web-2'"' AND ts >= $((T + 3599))999999999 AND ts < $((T + 7300))$NS"
'

# (means summed in another order may differ in the last bits: iqlcmp.py
# compares numbers within a relative 1e-9)
test_expect_success 'InfluxQL panels: the answers read before settling' '
    test "$(iql "$Q1")" = 200 && "$PY" "$LB_TOP/tests/e2e/iqlcmp.py" 200 q1.before 200 body &&
    test "$(iql "$Q2")" = 200 && "$PY" "$LB_TOP/tests/e2e/iqlcmp.py" 200 q2.before 200 body &&
    grep -q "\"columns\":\[\"time\",\"max\",\"count\",\"sum\"\]" body &&
    grep -q "\"values\":\[\[[0-9]*,[0-9.]*,[0-9]*,[0-9]*\]" body
'

# A condition the sections cannot decide alone (a field's value, several
# hosts OR-ed) reads their rows one by one, and the windows they served
# are not read again from the index: every row counted once
test_expect_success 'InfluxQL with a field condition or hosts OR-ed: the answers read before settling' '
    for q in 3 4 5; do
        eval "test \"\$(iql \"\$Q$q\")\" = 200" &&
        "$PY" "$LB_TOP/tests/e2e/iqlcmp.py" 200 q$q.before 200 body || return 1
    done
'

# A set of stamps (time = a OR time = c): the rows at them only, not the
# row between them (b), and none when no row has the stamps; the range
# from a to c has all three
test_expect_success 'InfluxQL over a set of stamps: the rows at them, from the sections' '
    A=$((T + 14))000079190 && B=$((T + 34))000190056 && C=$((T + 54))000300922 &&
    Q="SELECT count(\"value\"), sum(\"n\") FROM \"cpu\" WHERE \"host\" = '"'web-3'"' AND (time = $A OR time = $C)" &&
    test "$(iql "$Q")" = 200 &&
    grep -q "\"values\":\[\[$((T + 14))000,2,22\]\]" body &&
    test "$(sql "SELECT COUNT(value), SUM(n) FROM pts WHERE host = '"'web-3'"' AND event = '"'cpu'"' AND ts IN ($A, $C)")" = 200 &&
    grep -q "\"count(value)\":2,\"sum(n)\":22" body &&
    test "$(iql "SELECT count(\"value\") FROM \"cpu\" WHERE \"host\" = '"'web-3'"' AND time >= $A AND time <= $C")" = 200 &&
    grep -q "\"values\":\[\[$((T + 14))000,3\]\]" body &&
    test "$(iql "SELECT count(\"value\") FROM \"cpu\" WHERE \"host\" = '"'web-3'"' AND (time = $((A + 1)) OR time = $((B + 1)))")" = 200 &&
    ! grep -q "\"values\"" body
'

# A window whose rows hold a string note is read for a query of note (a
# window without one is not: no row there has a note)
test_expect_success 'a string field in the query reads the rows of its windows' '
    Q="SELECT COUNT(note), MAX(value) FROM pts WHERE host = '"'web-5'"' AND ts >= $T0" &&
    test "$(sql "EXPLAIN ANALYZE $Q")" = 200 &&
    test "$(analyze rows_from_sections)" -lt "$(analyze rows_matched)" &&
    test "$(sql "$Q")" = 200 && cp body fast &&
    grep -q "\"count(note)\":[1-9]" fast &&
    test "$(sql "$(printf "%s" "$Q" | sed "s/ WHERE / WHERE tags.nosuch IS NULL AND /")")" = 200 &&
    test_cmp body fast &&
    same "SELECT COUNT(value) FROM pts WHERE host = '"'web-5'"' AND ts >= $T0"
'

test_expect_success 'a restart reads the sections back from the tables' '
    lb_stop && lb_start --set settle_after=1s &&
    same "SELECT time_bucket('"'1h'"') AS t, event, AVG(value) FROM pts WHERE host = '"'web-4'"' AND ts >= $T0 AND ts < $T3 GROUP BY t, event ORDER BY t, event"
'

# A late point lands in a table of its own beside its window's final one
# (that window is then read from the rows), and a delete is a range
# tombstone (its window is read until it is merged whole again): the
# same answers throughout.
test_expect_success 'a late point and a delete: right at once, and once settled' '
    echo "cpu,host=web-3 value=1000,n=1i $((T + 4000))$NS" >late.lp &&
    test "$(lb_req POST "/write?db=pts&precision=ns" --data-binary @late.lp)" = 204 &&
    test "$(sql "DELETE FROM pts WHERE host = '"'web-3'"' AND ts >= $((T + 7200))$NS AND ts < $((T + 7800))$NS")" = 200 &&
    Q="SELECT time_bucket('"'5m'"') AS t, event, MAX(value), COUNT(*) FROM pts WHERE host = '"'web-3'"' AND ts >= $T0 AND ts < $T3 GROUP BY t, event ORDER BY t, event" &&
    test "$(sql "$Q")" = 200 && cp body now &&
    test "$(sql "$(printf "%s" "$Q" | sed "s/ WHERE / WHERE tags.nosuch IS NULL AND /")")" = 200 &&
    test_cmp body now &&
    grep -q "\"max(value)\":1000" now &&
    sleep 3 && same "$Q" && test_cmp now fast
'

# LAST alone over a host set is answered from each host's newest rows
# ("latest per host"), read newest first: not from the sections, whose
# rows come by event
test_expect_success 'the newest row of each host, ordered by it, with a later point of one host' '
    echo "cpu,host=web-2 value=1,n=1i $((T + 3 * 3600 + 100))$NS" >newest.lp &&
    test "$(lb_req POST "/write?db=pts&precision=ns" --data-binary @newest.lp)" = 204 &&
    sleep 3 &&
    W="FROM pts WHERE host IN ('"'web-1'"', '"'web-2'"', '"'web-6'"') AND ts >= $T0 GROUP BY host" &&
    test "$(sql "SELECT host, MAX(ts) AS l, COUNT(*) AS c $W ORDER BY l DESC")" = 200 &&
    cut -d, -f1,2 body >want &&
    head -1 want | grep -q "\"host\":\"web-2\",\"l\":$((T + 3 * 3600 + 100))$NS" &&
    test "$(sql "SELECT host, LAST(ts) AS l $W ORDER BY l DESC")" = 200 &&
    sed "s/}\$//" body >got && test_cmp want got &&
    test "$(sql "SELECT host $W ORDER BY LAST(ts) DESC")" = 200 &&
    cut -d, -f1 want | sed "s/\$/}/" >want.hosts && test_cmp want.hosts body
'

test_expect_success '/metrics counts the rows read from sections' '
    test "$(lb_req GET /metrics)" = 200 &&
    grep -q "^logbucket_query_rows_from_sections_total [1-9]" body
'

test_expect_success 'stop' '
    lb_stop
'

test_done
