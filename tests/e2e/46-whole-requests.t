#!/bin/sh
# A request is stored whole or not at all: its rows are written in one batch
# once its body has ended well. An upload its client cuts off mid-body, a
# truncated gzip body and a body over max_body_bytes store nothing, so the
# client's retry stores every line once, even raw lines, whose rows are
# stamped on arrival and would otherwise come back twice.

test_description='whole requests: nothing half-stored'
. "$(dirname "$0")/lib.sh"

count() { # count DB: rows of the database (a full scan, asked for)
    curl -s -XPOST "$LB_URL/api/v1/sql?full_scan=true" --data-binary "SELECT COUNT(*) FROM $1" |
        sed -n "s/.*\"count\":\([0-9]*\).*/\1/p"
}

test_expect_success 'start' '
    lb_start --set max_body_bytes=4MiB &&
    awk "BEGIN { for (i = 0; i < 20000; i++) printf \"raw line %06d of the upload\\n\", i }" >lines.txt &&
    test $(wc -l <lines.txt) = 20000
'

test_expect_success 'a raw-lines upload cut off mid-body stores nothing' '
    len=$(wc -c <lines.txt) &&
    { printf "POST /api/v1/ingest?db=cut&host=h&event=e HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" $len &&
      head -c $((len / 4 * 3)) lines.txt; } >cut.req &&
    "$LB_TOP/tests/e2e/rawhttp.pl" $LB_PORT cut.req --no-read &&
    sleep 1 &&
    test "$(count cut)" = "" -o "$(count cut)" = 0
'

test_expect_success 'the retry of the whole upload stores each line once' '
    test "$(lb_req POST "/api/v1/ingest?db=cut&host=h&event=e" --data-binary @lines.txt)" = 204 &&
    test "$(count cut)" = 20000
'

test_expect_success 'a truncated gzip body: 400 that says nothing was stored, and nothing is' '
    gzip -c lines.txt >lines.gz &&
    head -c $(( $(wc -c <lines.gz) - 200 )) lines.gz >trunc.gz &&
    test "$(lb_req POST "/api/v1/ingest?db=gzcut&host=h&event=e" -H "Content-Encoding: gzip" \
        --data-binary @trunc.gz)" = 400 &&
    grep -q "truncated gzip body; nothing of it was stored" body &&
    test "$(count gzcut)" = "" -o "$(count gzcut)" = 0 &&
    test "$(lb_req POST "/api/v1/ingest?db=gzcut&host=h&event=e" -H "Content-Encoding: gzip" \
        --data-binary @lines.gz)" = 204 &&
    test "$(count gzcut)" = 20000
'

test_expect_success 'a chunked body over max_body_bytes after many lines: 413, nothing stored' '
    for i in 1 2 3 4 5 6 7 8 9 10; do cat lines.txt; done >big.txt &&
    test "$(lb_req POST "/api/v1/ingest?db=big&host=h&event=e" -H "Transfer-Encoding: chunked"         --data-binary @big.txt)" = 413 &&
    grep -q "nothing of it was stored" body &&
    test "$(count big)" = "" -o "$(count big)" = 0
'

test_expect_success 'line protocol cut off mid-body: nothing stored, the retry stores all' '
    awk "BEGIN { for (i = 0; i < 20000; i++) printf \"m,host=h v=%di %d\\n\", i, i + 1 }" >points.lp &&
    len=$(wc -c <points.lp) &&
    { printf "POST /write?db=lpcut HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" $len &&
      head -c $((len / 2)) points.lp; } >lpcut.req &&
    "$LB_TOP/tests/e2e/rawhttp.pl" $LB_PORT lpcut.req --no-read &&
    sleep 1 &&
    test "$(count lpcut)" = "" -o "$(count lpcut)" = 0 &&
    test "$(lb_req POST "/write?db=lpcut" --data-binary @points.lp)" = 204 &&
    test "$(count lpcut)" = 20000
'

test_expect_success 'stop' '
    lb_stop
'

test_done
