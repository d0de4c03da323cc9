#!/bin/sh
test_description='row identity: line-protocol points merge by series and ts, log entries stay unless exact duplicates'
. "$(dirname "$0")/lib.sh"

# The contract. A line-protocol point is identified by measurement, its whole
# tag set and ts: a point with the identity of a stored one updates it as
# InfluxDB does (fields: the union of old and new, new values win). A log
# entry (raw or JSON line) is identified by its whole content (ts, host,
# event, tags, fields): an exact duplicate collapses into one row, any other
# difference makes a new row. Every shape is read through the GET, INDEX
# and SCAN plans and COUNT(*), from memory, after a restart (from the
# SSTables the clean stop flushed) and after a compaction.

T=1700000000000000000   # ts of the line-protocol points
J=1704067200000000000   # 2024-01-01T00:00:00Z, ts of the JSON lines
S=1000000000            # one second in ns

# The daemon's retention check runs every second. It asks every database
# with a TTL for a compaction, which merges a window once it holds 4 files
# (an older, cold window sooner): the compaction tests below get theirs from
# four flushes (clean stops). There is no admin statement that compacts.
LB_ARGS="--set retention_check_interval=1s"

# diag TEXT: a TAP comment, shown by prove -v even when the test is quiet
diag() { printf '%s\n' "$*" | sed 's/^/# /' >&5; }

# want WHAT GOT EXPECTED
want() {
    test "$2" = "$3" && return 0
    diag "$1: got '$2', want '$3'"
    return 1
}

lines() { wc -l <"$1" | tr -d ' '; }

sql() { lb_req POST /api/v1/sql -H "Content-Type: text/plain" --data-binary "$1"; }

# post PATH FILE: a write that must answer 204
post() {
    code=$(lb_req POST "$1" --data-binary @"$2")
    test "$code" = 204 && return 0
    diag "POST $1: HTTP $code $(cat body)"
    return 1
}

# count STATEMENT: prints N of the reply {"count":N}
count() {
    code=$(sql "$1")
    if test "$code" != 200; then
        diag "$1: HTTP $code $(cat body)"
        return 1
    fi
    sed -n 's/^{"count":\([0-9]*\)}$/\1/p' body
}

# select_rows STATEMENT FILE: the rows of a SELECT, sorted, into FILE
select_rows() {
    code=$(sql "$1")
    if test "$code" != 200 || grep -q '^{"error":' body; then
        diag "$1: HTTP $code $(grep '^{"error":' body)"
        return 1
    fi
    sort body >"$2"
}

# canon [FILE]: rows with the keys of their tags and fields objects sorted
# (the values of these tests hold no ',' or '}'), lines sorted: the order of
# the fields of a merged point is not part of the contract.
canon() {
    perl -pe 's/("(?:tags|fields)":\{)([^}]*)\}/$1 . join(",", sort split(m{,}, $2)) . "}"/ge' "$@" |
        sort
}

# same_rows EXPECTED ROWS: the same rows, whatever the order of lines and keys
same_rows() {
    canon "$1" >"$1.canon" && canon "$2" >"$2.canon" &&
        same "rows" "$1.canon" "$2.canon"
}

# same WHAT EXPECTED GOT: test_cmp, the first lines of the difference as TAP
# comments
same() {
    cmp -s "$2" "$3" && return 0
    diag "$1 differ (- expected, + got):"
    diff -u "$2" "$3" | sed -n '3,12s/^/#   /p' >&5
    return 1
}

# check_key DB TS HOST EVENT N: the rows of key (TS, HOST, EVENT), which are
# all the rows of HOST and all the rows at TS in DB, read through every plan:
# GET (ts, host and event fixed), INDEX (SQL host = and GET /api/v1/query),
# SCAN (a ts range) and COUNT(*) by each. N rows each time, the same ones;
# they are left sorted in ./rows.
check_key() {
    ck_db=$1 ck_ts=$2 ck_h=$3 ck_e=$4 ck_n=$5
    select_rows "SELECT * FROM $ck_db WHERE ts = $ck_ts AND host = '$ck_h' AND event = '$ck_e'" rows.get &&
    want "$ck_db GET rows" "$(lines rows.get)" "$ck_n" &&
    select_rows "SELECT * FROM $ck_db WHERE host = '$ck_h'" rows.index &&
    want "$ck_db INDEX rows" "$(lines rows.index)" "$ck_n" &&
    same "$ck_db GET and INDEX rows" rows.get rows.index &&
    test "$(lb_req GET "/api/v1/query?db=$ck_db&host=$ck_h")" = 200 &&
    sort body >rows.query &&
    want "$ck_db /api/v1/query rows" "$(lines rows.query)" "$ck_n" &&
    same "$ck_db GET and /api/v1/query rows" rows.get rows.query &&
    select_rows "SELECT * FROM $ck_db WHERE ts >= $ck_ts AND ts <= $ck_ts" rows.scan &&
    want "$ck_db SCAN rows" "$(lines rows.scan)" "$ck_n" &&
    same "$ck_db GET and SCAN rows" rows.get rows.scan &&
    want "$ck_db COUNT(*) GET" \
        "$(count "SELECT COUNT(*) FROM $ck_db WHERE ts = $ck_ts AND host = '$ck_h' AND event = '$ck_e'")" "$ck_n" &&
    want "$ck_db COUNT(*) INDEX" "$(count "SELECT COUNT(*) FROM $ck_db WHERE host = '$ck_h'")" "$ck_n" &&
    want "$ck_db COUNT(*) SCAN" "$(count "SELECT COUNT(*) FROM $ck_db WHERE ts >= $ck_ts AND ts <= $ck_ts")" "$ck_n" &&
    cp rows.get rows
}

# metric NAME DB [PARTITION]: a per-database metric, summed over its other labels
metric() {
    mt_p="logbucket_$1{db=\"$2\""
    test -z "$3" || mt_p="$mt_p,partition=\"$3\""
    curl -s --max-time 10 "$LB_URL/metrics" |
        awk -v p="$mt_p" 'index($0, p) == 1 { n += $NF } END { print n + 0 }'
}

restart() {
    lb_stop 30 && lb_start $LB_ARGS
}

# 1. Telegraf's cpu plugin: one point per cpu tag, same ts, host, measurement.
write_t1() {
    cat >t1.lp <<-EOF &&
	cpu,host=h1,cpu=cpu0 usage=1 $T
	cpu,host=h1,cpu=cpu1 usage=2 $T
	cpu,host=h1,cpu=cpu-total usage=3 $T
	EOF
    post "/write?db=t1" t1.lp
}
check_t1() {
    check_key t1 $T h1 cpu 3 &&
    cat >expect <<-EOF &&
	{"ts":$T,"host":"h1","event":"cpu","tags":{"cpu":"cpu0"},"fields":{"usage":1.0}}
	{"ts":$T,"host":"h1","event":"cpu","tags":{"cpu":"cpu1"},"fields":{"usage":2.0}}
	{"ts":$T,"host":"h1","event":"cpu","tags":{"cpu":"cpu-total"},"fields":{"usage":3.0}}
	EOF
    same_rows expect rows &&
    for c in cpu0 cpu1 cpu-total; do
        want "rows with cpu=$c" "$(grep -c "\"cpu\":\"$c\"" rows)" 1 || return 1
    done
}

# 2. One series, one ts, fields written in parts: InfluxDB's field merge.
write_t2() {
    printf 'm,host=h,t=a x=1 %s\n' $T >a.lp && post "/write?db=t2" a.lp &&
    printf 'm,host=h,t=a y=2 %s\n' $T >b.lp && post "/write?db=t2" b.lp
}
check_t2_xy() {
    check_key t2 $T h m 1 &&
    echo "{\"ts\":$T,\"host\":\"h\",\"event\":\"m\",\"tags\":{\"t\":\"a\"},\"fields\":{\"x\":1.0,\"y\":2.0}}" >expect &&
    same_rows expect rows
}
write_t2_again() {
    printf 'm,host=h,t=a x=5 %s\n' $T >c.lp && post "/write?db=t2" c.lp
}
check_t2() {
    check_key t2 $T h m 1 &&
    echo "{\"ts\":$T,\"host\":\"h\",\"event\":\"m\",\"tags\":{\"t\":\"a\"},\"fields\":{\"x\":5.0,\"y\":2.0}}" >expect &&
    same_rows expect rows
}
# 2b. Tag order does not matter: the same series.
write_t2b() {
    printf 'm,host=h,b=2,a=1 v=1 %s\n' $T >a.lp && post "/write?db=t2b" a.lp &&
    printf 'm,host=h,a=1,b=2 w=1 %s\n' $T >b.lp && post "/write?db=t2b" b.lp
}
check_t2b() {
    check_key t2b $T h m 1 &&
    echo "{\"ts\":$T,\"host\":\"h\",\"event\":\"m\",\"tags\":{\"a\":\"1\",\"b\":\"2\"},\"fields\":{\"v\":1.0,\"w\":1.0}}" >expect &&
    same_rows expect rows
}
# 2c. The lines of one request merge the same way, the later line winning.
write_t2c() {
    printf 'm,host=h,t=c x=1 %s\nm,host=h,t=c y=2i %s\nm,host=h,t=c x=3,s="z" %s\n' $T $T $T >a.lp &&
    post "/write?db=t2c" a.lp
}
check_t2c() {
    check_key t2c $T h m 1 &&
    echo "{\"ts\":$T,\"host\":\"h\",\"event\":\"m\",\"tags\":{\"t\":\"c\"},\"fields\":{\"x\":3.0,\"y\":2,\"s\":\"z\"}}" >expect &&
    same_rows expect rows
}
# 2d. The part written after a restart merges with the part on disk.
write_t2d_before() {
    printf 'm,host=h,t=d x=1,z=9 %s\n' $T >a.lp && post "/write?db=t2d" a.lp
}
write_t2d_after() {
    printf 'm,host=h,t=d y=2,z=8 %s\n' $T >b.lp && post "/write?db=t2d" b.lp
}
check_t2d() {
    check_key t2d $T h m 1 &&
    echo "{\"ts\":$T,\"host\":\"h\",\"event\":\"m\",\"tags\":{\"t\":\"d\"},\"fields\":{\"x\":1.0,\"y\":2.0,\"z\":8.0}}" >expect &&
    same_rows expect rows
}

# 3. Another tag value, or another tag set, is another series.
write_t3() {
    printf 'm,host=h,t=a x=1 %s\n' $T >a.lp && post "/write?db=t3" a.lp &&
    printf 'm,host=h,t=b x=1 %s\n' $T >b.lp && post "/write?db=t3" b.lp &&
    printf 'm,host=h x=1 %s\nm,host=h,t=a,u=a x=1 %s\n' $T $T >c.lp && post "/write?db=t3" c.lp
}
check_t3() {
    check_key t3 $T h m 4 &&
    cat >expect <<-EOF &&
	{"ts":$T,"host":"h","event":"m","tags":{"t":"a"},"fields":{"x":1.0}}
	{"ts":$T,"host":"h","event":"m","tags":{"t":"b"},"fields":{"x":1.0}}
	{"ts":$T,"host":"h","event":"m","tags":{},"fields":{"x":1.0}}
	{"ts":$T,"host":"h","event":"m","tags":{"t":"a","u":"a"},"fields":{"x":1.0}}
	EOF
    same_rows expect rows
}

# 4. Two syslog lines of one second that differ only in the message.
write_t4() {
    printf '%s\n' '{"ts":"2024-01-01T00:00:00Z","host":"h","event":"e","msg":"a"}' \
        '{"ts":"2024-01-01T00:00:00Z","host":"h","event":"e","msg":"b"}' >a.jsonl &&
    post "/api/v1/ingest?db=t4&format=jsonl" a.jsonl
}
check_t4() {
    check_key t4 $J h e 2 &&
    cat >expect <<-EOF &&
	{"ts":$J,"host":"h","event":"e","tags":{},"fields":{"msg":"a"}}
	{"ts":$J,"host":"h","event":"e","tags":{},"fields":{"msg":"b"}}
	EOF
    same_rows expect rows
}
# 4b. Any other difference too: one field more, another value of a second
# field, in separate requests.
write_t4b() {
    printf '%s\n' '{"ts":"2024-01-01T00:00:00Z","host":"h","event":"e","msg":"a"}' >a.jsonl &&
    printf '%s\n' '{"ts":"2024-01-01T00:00:00Z","host":"h","event":"e","msg":"a","pid":1}' >b.jsonl &&
    printf '%s\n' '{"ts":"2024-01-01T00:00:00Z","host":"h","event":"e","msg":"a","pid":2}' >c.jsonl &&
    post "/api/v1/ingest?db=t4b&format=jsonl" a.jsonl &&
    post "/api/v1/ingest?db=t4b&format=jsonl" b.jsonl &&
    post "/api/v1/ingest?db=t4b&format=jsonl" c.jsonl
}
check_t4b() {
    check_key t4b $J h e 3 &&
    cat >expect <<-EOF &&
	{"ts":$J,"host":"h","event":"e","tags":{},"fields":{"msg":"a"}}
	{"ts":$J,"host":"h","event":"e","tags":{},"fields":{"msg":"a","pid":1}}
	{"ts":$J,"host":"h","event":"e","tags":{},"fields":{"msg":"a","pid":2}}
	EOF
    same_rows expect rows
}

# 5. A client that retries a batch stores nothing twice. 5a: 100 lines with
# their own ts; 5b: 100 lines over 10 seconds (10 lines share each second).
gen_t5a() {
    # (mawk's numbers are doubles and its %d is 32-bit: the ts is pasted)
    awk 'BEGIN { for (i = 0; i < 100; i++)
        printf "{\"ts\":1704067200000%06d,\"host\":\"h5\",\"event\":\"e\",\"msg\":\"line %d\"}\n", i * 1000, i }' >t5a.jsonl
}
gen_t5b() {
    awk 'BEGIN { for (i = 0; i < 100; i++)
        printf "{\"ts\":\"2024-01-01T00:00:0%dZ\",\"host\":\"h5\",\"event\":\"e\",\"msg\":\"line %d\"}\n", i % 10, i }' >t5b.jsonl
}
# check_batch DB N FIRST_TS LAST_TS: N rows in [FIRST_TS, LAST_TS] of host h5,
# each message once
check_batch() {
    want "$1 COUNT(*) SCAN" "$(count "SELECT COUNT(*) FROM $1 WHERE ts >= $3 AND ts <= $4")" "$2" &&
    want "$1 COUNT(*) INDEX" "$(count "SELECT COUNT(*) FROM $1 WHERE host = 'h5'")" "$2" &&
    select_rows "SELECT * FROM $1 WHERE ts >= $3 AND ts <= $4" rows &&
    want "$1 SCAN rows" "$(lines rows)" "$2" &&
    select_rows "SELECT * FROM $1 WHERE host = 'h5'" rows.index &&
    same "$1 SCAN and INDEX rows" rows rows.index &&
    sed -n 's/.*"msg":"\([^"]*\)".*/\1/p' rows | sort -u >msgs &&
    want "$1 distinct messages" "$(lines msgs)" "$2"
}
check_t5a() { check_batch t5a 100 $J $((J + 99000)); }
check_t5b() { check_batch t5b 100 $J $((J + 9 * S)); }

# 6. 20,000 syslog lines of one host and program over 10 seconds, each
# message its own.
gen_t6() {
    awk 'BEGIN { for (i = 0; i < 20000; i++)
        printf "{\"ts\":\"2024-01-01T00:00:0%dZ\",\"host\":\"sys\",\"event\":\"syslog\",\"msg\":\"message %d from pid %d\"}\n", i % 10, i, 1000 + i % 7 }' >t6.jsonl
}
check_t6() {
    lo=$J hi=$((J + 9 * S))
    tslist=$J
    for k in 1 2 3 4 5 6 7 8 9; do
        tslist="$tslist, $((J + k * S))"
    done
    want "t6 COUNT(*) SCAN" "$(count "SELECT COUNT(*) FROM t6 WHERE ts >= $lo AND ts <= $hi")" 20000 &&
    want "t6 COUNT(*) INDEX" "$(count "SELECT COUNT(*) FROM t6 WHERE host = 'sys'")" 20000 &&
    want "t6 COUNT(*) GET" \
        "$(count "SELECT COUNT(*) FROM t6 WHERE ts IN ($tslist) AND host = 'sys' AND event = 'syslog'")" 20000 &&
    select_rows "SELECT * FROM t6 WHERE ts >= $lo AND ts <= $hi" rows &&
    want "t6 SCAN rows" "$(lines rows)" 20000 &&
    sed -n 's/.*"msg":"\([^"]*\)".*/\1/p' rows | sort -u >msgs &&
    want "t6 distinct messages" "$(lines msgs)" 20000 &&
    select_rows "SELECT * FROM t6 WHERE host = 'sys'" rows.index &&
    same "t6 SCAN and INDEX rows" rows rows.index &&
    test "$(lb_req GET "/api/v1/query?db=t6&host=sys")" = 200 &&
    want "t6 /api/v1/query rows" "$(lines body)" 20000 &&
    select_rows "SELECT * FROM t6 WHERE ts = $J AND host = 'sys' AND event = 'syslog'" rows.get &&
    want "t6 GET rows of the first second" "$(lines rows.get)" 2000 &&
    want "t6 GET rows with another ts" "$(grep -v -c "^{\"ts\":$J," rows.get)" 0
}

# 7. Raw lines take arrival stamps: the same body twice is 2 x N rows.
gen_t7() {
    awk 'BEGIN { for (i = 0; i < 50; i++) printf "raw line %d\n", i }' >t7.txt
}
check_t7() {
    want "t7 COUNT(*) INDEX" "$(count "SELECT COUNT(*) FROM t7 WHERE host = 'rawh'")" 100 &&
    want "t7 COUNT(*) SCAN" "$(count "SELECT COUNT(*) FROM t7 WHERE ts >= 0")" 100 &&
    select_rows "SELECT * FROM t7 WHERE host = 'rawh'" rows &&
    sed -n 's/.*"msg":"\([^"]*\)".*/\1/p' rows | sort | uniq -c | awk '{ print $1 }' | sort -u >n &&
    want "t7 copies of each line" "$(cat n)" 2 &&
    sed -n 's/.*"ts":\([0-9]*\),.*/\1/p' rows | sort -u >ts &&
    want "t7 distinct ts" "$(lines ts)" 100
}

# 8. GET, with IN lists too, returns every row of its keys.
check_t8() {
    select_rows "SELECT * FROM t1 WHERE ts IN ($T, $((T + 1))) AND host IN ('h1', 'h2') AND event = 'cpu'" rows &&
    want "t1 GET (IN lists) rows" "$(lines rows)" 3 &&
    same "t1 GET and GET (IN lists) rows" rows.get rows &&
    want "t1 COUNT(*) GET (IN lists)" \
        "$(count "SELECT COUNT(*) FROM t1 WHERE ts IN ($T, $((T + 1))) AND host IN ('h1', 'h2') AND event = 'cpu'")" 3
}

# 9. DELETE of one of the rows that share ts, host and event leaves the others.
write_t9() {
    post "/write?db=t9" t1.lp &&
    printf '%s\n' '{"ts":"2024-01-01T00:00:00Z","host":"h","event":"e","msg":"a"}' \
        '{"ts":"2024-01-01T00:00:00Z","host":"h","event":"e","msg":"b"}' \
        '{"ts":"2024-01-01T00:00:00Z","host":"h","event":"e","msg":"c"}' >t9.jsonl &&
    post "/api/v1/ingest?db=t9j&format=jsonl" t9.jsonl &&
    post "/api/v1/ingest?db=t9r&format=jsonl" t9.jsonl &&
    post "/api/v1/ingest?db=t9s&format=jsonl" t9.jsonl
}
# delete STATEMENT N: {"deleted":N}
delete() {
    code=$(sql "$1")
    want "$1: status" "$code" 200 &&
    want "$1: reply" "$(cat body)" "{\"deleted\":$2}"
}
delete_t9() {
    delete "DELETE FROM t9 WHERE ts = $T AND host = 'h1' AND event = 'cpu' AND tags.cpu = 'cpu1'" 1 &&
    delete "DELETE FROM t9j WHERE ts = $J AND host = 'h' AND event = 'e' AND msg = 'b'" 1 &&
    # host, event and a ts range: one range tombstone over every row of the key
    delete "DELETE FROM t9r WHERE host = 'h' AND event = 'e' AND ts BETWEEN $J AND $J" 3 &&
    # a field predicate: one tombstone per matching row
    delete "DELETE FROM t9s WHERE ts = $J AND host = 'h' AND event = 'e' AND msg != 'zzz'" 3
}
check_t9() {
    check_key t9 $T h1 cpu 2 &&
    cat >expect <<-EOF &&
	{"ts":$T,"host":"h1","event":"cpu","tags":{"cpu":"cpu0"},"fields":{"usage":1.0}}
	{"ts":$T,"host":"h1","event":"cpu","tags":{"cpu":"cpu-total"},"fields":{"usage":3.0}}
	EOF
    same_rows expect rows &&
    check_key t9j $J h e 2 &&
    cat >expect <<-EOF &&
	{"ts":$J,"host":"h","event":"e","tags":{},"fields":{"msg":"a"}}
	{"ts":$J,"host":"h","event":"e","tags":{},"fields":{"msg":"c"}}
	EOF
    same_rows expect rows &&
    check_key t9r $J h e 0 &&
    check_key t9s $J h e 0
}

# Compaction: four clean stops leave four files in one window of database
# cmp (one bucket, a TTL so that the retention check asks for compactions),
# each holding a part of the same point and the same log batch; the
# compaction merges them.
write_cycle() {
    printf 'm,host=hl,t=a f%d=%di,x=%d %s\n' $1 $1 $1 $T >cycle.lp &&
    post "/write?db=cmp" cycle.lp &&
    awk 'BEGIN { for (i = 0; i < 10; i++)
        printf "{\"ts\":\"2024-01-01T00:00:00Z\",\"host\":\"hj\",\"event\":\"e\",\"msg\":\"m%d\"}\n", i }' >cycle.jsonl &&
    post "/api/v1/ingest?db=cmp&format=jsonl" cycle.jsonl &&
    printf '{"ts":"2024-01-01T00:00:01Z","host":"hk","event":"e","msg":"cycle %d"}\n' $1 >cycle2.jsonl &&
    post "/api/v1/ingest?db=cmp&format=jsonl" cycle2.jsonl
}
check_cmp() {
    check_key cmp $T hl m 1 &&
    echo "{\"ts\":$T,\"host\":\"hl\",\"event\":\"m\",\"tags\":{\"t\":\"a\"},\"fields\":{\"f1\":1,\"f2\":2,\"f3\":3,\"f4\":4,\"x\":4.0}}" >expect &&
    same_rows expect rows &&
    check_key cmp $J hj e 10 &&
    sed -n 's/.*"msg":"\([^"]*\)".*/\1/p' rows | sort -u >msgs &&
    want "cmp hj distinct messages" "$(lines msgs)" 10 &&
    check_key cmp $((J + S)) hk e 4 &&
    sed -n 's/.*"msg":"\([^"]*\)".*/\1/p' rows | sort >msgs &&
    printf 'cycle %d\n' 1 2 3 4 >expect &&
    same "cmp hk messages" expect msgs
}

test_expect_success 'start' '
    lb_start $LB_ARGS
'

test_expect_success '1. three Telegraf cpu lines (same ts, host, measurement; cpu tag differs) are three rows' '
    write_t1 &&
    check_t1
'

test_expect_success 'the statements of these checks take the GET, INDEX and SCAN plans' '
    sql "EXPLAIN SELECT * FROM t1 WHERE ts = $T AND host = '"'h1'"' AND event = '"'cpu'"'" >/dev/null &&
    grep -q "\"plan\":\"GET\"" body &&
    sql "EXPLAIN SELECT COUNT(*) FROM t1 WHERE host = '"'h1'"'" >/dev/null &&
    grep -q "\"plan\":\"INDEX\"" body &&
    sql "EXPLAIN SELECT * FROM t1 WHERE ts >= $T AND ts <= $T" >/dev/null &&
    grep -q "\"plan\":\"SCAN\"" body
'

test_expect_success '2. a point written in two requests (x, then y) is one row with x and y' '
    write_t2 &&
    check_t2_xy
'

test_expect_success '2. a third write x=5 updates x and keeps y' '
    write_t2_again &&
    check_t2
'

test_expect_success '2. tag order does not matter: b=2,a=1 and a=1,b=2 are one series' '
    write_t2b &&
    check_t2b
'

test_expect_success '2. lines of one request merge the same way, the later line winning' '
    write_t2c &&
    check_t2c
'

test_expect_success '2. (before the restart) the first part of a point' '
    write_t2d_before &&
    check_key t2d $T h m 1
'

test_expect_success '3. another tag value or another tag set is another row' '
    write_t3 &&
    check_t3
'

test_expect_success '4. two JSON lines of one second that differ only in msg are two rows' '
    write_t4 &&
    check_t4
'

test_expect_success '4. one field more or another value of a field is another row' '
    write_t4b &&
    check_t4b
'

test_expect_success '5. a JSON batch of 100 lines (distinct ts) posted twice: each row once' '
    gen_t5a &&
    post "/api/v1/ingest?db=t5a&format=jsonl" t5a.jsonl &&
    post "/api/v1/ingest?db=t5a&format=jsonl" t5a.jsonl &&
    check_t5a
'

test_expect_success '5. a JSON batch of 100 lines over 10 seconds posted twice: each row once' '
    gen_t5b &&
    post "/api/v1/ingest?db=t5b&format=jsonl" t5b.jsonl &&
    post "/api/v1/ingest?db=t5b&format=jsonl" t5b.jsonl &&
    check_t5b
'

test_expect_success '6. 20,000 syslog JSON lines over 10 seconds are 20,000 rows' '
    gen_t6 &&
    post "/api/v1/ingest?db=t6&format=jsonl" t6.jsonl &&
    check_t6
'

test_expect_success '7. raw lines posted twice are 2 x N rows (arrival stamps)' '
    gen_t7 &&
    post "/api/v1/ingest?db=t7&host=rawh&event=log" t7.txt &&
    post "/api/v1/ingest?db=t7&host=rawh&event=log" t7.txt &&
    check_t7
'

test_expect_success '8. a GET (ts, host, event fixed; IN lists too) returns all three cpu rows' '
    check_key t1 $T h1 cpu 3 &&
    check_t8
'

test_expect_success '9. DELETE of one of several rows of a key leaves the others' '
    write_t9 &&
    delete_t9 &&
    check_t9
'

test_expect_success 'restart: the clean stop flushes every database to SSTables' '
    restart &&
    for db in t1 t2 t2b t2c t2d t3 t4 t4b t5a t5b t6 t7 t9 t9j; do
        test "$(metric partition_files $db)" -gt 0 || { diag "$db: no SSTable file"; return 1; }
    done
'

test_expect_success 'after the restart: 1. the three cpu rows' '
    check_t1
'

test_expect_success 'after the restart: 2. the merged points' '
    check_t2 &&
    check_t2b &&
    check_t2c
'

test_expect_success 'after the restart: 2. the second part of a point merges with the first, on disk' '
    write_t2d_after &&
    check_t2d
'

test_expect_success 'after the restart: 3. the four series' '
    check_t3
'

test_expect_success 'after the restart: 4. the JSON lines that differ' '
    check_t4 &&
    check_t4b
'

test_expect_success 'after the restart: 5. the batch of distinct ts, then posted a third time (duplicates on disk)' '
    check_t5a &&
    post "/api/v1/ingest?db=t5a&format=jsonl" t5a.jsonl &&
    check_t5a
'

test_expect_success 'after the restart: 5. the batch over 10 seconds, then posted a third time (duplicates on disk)' '
    check_t5b &&
    post "/api/v1/ingest?db=t5b&format=jsonl" t5b.jsonl &&
    check_t5b
'

test_expect_success 'after the restart: 6. the 20,000 rows' '
    check_t6
'

test_expect_success 'after the restart: 6. the 20,000 lines posted again add nothing' '
    post "/api/v1/ingest?db=t6&format=jsonl" t6.jsonl &&
    check_t6
'

test_expect_success 'after the restart: 7. the raw rows' '
    check_t7
'

test_expect_success 'after the restart: 8. the GET' '
    check_key t1 $T h1 cpu 3 &&
    check_t8
'

test_expect_success 'after the restart: 9. the deleted rows stay deleted, the others stay' '
    check_t9
'

test_expect_success 'compaction: database cmp with one bucket and a TTL' '
    test "$(sql "CREATE DATABASE cmp WITH (buckets=1, ttl='"'36500d'"')")" = 200
'

test_expect_success 'compaction: four parts of a point and a log batch, each flushed by a clean stop' '
    for i in 1 2 3 4; do
        write_cycle $i && restart || return 1
    done &&
    diag "cmp: $(metric partition_files cmp 0) files in bucket 0, $(metric partition_files cmp index) in the host index"
'

# Each cycle flushes two files into bucket 0 and into the host index (the
# points of T and the lines of J lie in two one-hour windows): eight each,
# fewer once merged. Merges run at each retention check (every second) and
# may already have run between the cycles (counters restart with the daemon).
merged() {
    test "$(metric compaction_backlog cmp)" -eq 0 &&
    test "$(metric partition_files cmp 0)" -lt 8 &&
    test "$(metric partition_files cmp index)" -lt 8
}
# A merge that already ran before the last restart leaves the counter at 0
# now, so the files are what is waited for, not the counter.
test_expect_success 'compaction: the retention check merges the files (within 30 s) and settles' '
    n=0 &&
    while ! merged && test $n -lt 300; do
        sleep 0.1
        n=$((n + 1))
    done &&
    merged &&
    diag "cmp: $(metric compactions_total cmp) compactions since the restart, $(metric partition_files cmp 0) files in bucket 0, $(metric partition_files cmp index) in the host index"
'

test_expect_success 'compaction: one row with every field, each log line once, every entry kept' '
    check_cmp
'

test_expect_success 'compaction: the same after a restart' '
    restart &&
    check_cmp &&
    check_t6
'

test_expect_success 'stop' '
    lb_stop 30
'

test_done
