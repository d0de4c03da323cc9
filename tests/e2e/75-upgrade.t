#!/bin/sh
test_description='a data directory of the release before row identity opens and reads the same; new writes merge into its rows'
. "$(dirname "$0")/lib.sh"

FIX=$LB_TOP/tests/fixtures

sql() { # sql STATEMENT: prints the status, body in ./body
    lb_req POST "/api/v1/sql" -H "Content-Type: text/plain" --data-binary "$1"
}

test_expect_success 'the old directory opens (SSTables of version 1, a WAL without ids)' '
    mkdir old && tar -xzf "$FIX/release1-data.tar.gz" -C old &&
    LB_DATA=$PWD/old/data && export LB_DATA &&
    lb_start
'

test_expect_success 'every row reads as the old release answered' '
    test "$(sql "SELECT * FROM legacy WHERE ts >= 0")" = 200 &&
    test_cmp "$FIX/release1-rows.ndjson" body
'

test_expect_success 'host, GET and COUNT plans over the old rows' '
    test "$(lb_req GET "/api/v1/query?db=legacy&host=h1&event=cpu&limit=2")" = 200 &&
    test $(wc -l <body) = 2 &&
    head -n 1 body | grep -q "\"ts\":1700000058000000000,\"host\":\"h1\",\"event\":\"cpu\",\"tags\":{\"region\":\"eu\"}" &&
    test "$(sql "SELECT * FROM legacy WHERE ts = 1700000004000000000 AND host = '"'"'h1'"'"' AND event = '"'"'mem'"'"'")" = 200 &&
    test "$(cat body)" = "{\"ts\":1700000004000000000,\"host\":\"h1\",\"event\":\"mem\",\"tags\":{},\"fields\":{\"used\":4}}" &&
    test "$(sql "SELECT COUNT(*) FROM legacy WHERE ts >= 0")" = 200 &&
    test "$(cat body)" = "{\"count\":121}"
'

test_expect_success 'a point without tags written again merges into the old row' '
    printf "mem,host=h1 free=9i 1700000004000000000\n" >lp &&
    test "$(lb_req POST "/write?db=legacy" --data-binary @lp)" = 204 &&
    test "$(sql "SELECT * FROM legacy WHERE ts = 1700000004000000000 AND host = '"'"'h1'"'"' AND event = '"'"'mem'"'"'")" = 200 &&
    test "$(cat body)" = "{\"ts\":1700000004000000000,\"host\":\"h1\",\"event\":\"mem\",\"tags\":{},\"fields\":{\"free\":9,\"used\":4}}"
'

test_expect_success 'after a clean restart (the old rows now flushed beside new files) the rows are the same' '
    lb_stop && lb_start &&
    test "$(sql "SELECT COUNT(*) FROM legacy WHERE ts >= 0")" = 200 &&
    test "$(cat body)" = "{\"count\":121}" &&
    test "$(sql "SELECT * FROM legacy WHERE ts = 1700000004000000000 AND host = '"'"'h1'"'"' AND event = '"'"'mem'"'"'")" = 200 &&
    grep -q "\"fields\":{\"free\":9,\"used\":4}" body
'

test_expect_success 'stop' '
    lb_stop
'

test_done
