#!/bin/sh
test_description='bad input on every endpoint: a clear error, nothing stored half, nothing lost'
. "$(dirname "$0")/lib.sh"

count() { # count DB: rows of the database (a full scan, asked for)
    curl -s -XPOST "$LB_URL/api/v1/sql?full_scan=true" --data-binary "SELECT COUNT(*) FROM $1" |
        sed -n "s/.*\"count\":\([0-9]*\).*/\1/p"
}

test_expect_success 'start and store a known row' '
    lb_start --set max_line_bytes=1KiB --set max_body_bytes=1MiB &&
    test "$(lb_req POST "/write?db=keep" --data-binary "m,host=a v=1i 1")" = 204 &&
    test "$(count keep)" = 1
'

test_expect_success 'database names that could escape the data directory are 400' '
    for db in "..%2F..%2Fetc" ".hidden" "a%2Fb" "%C3%A9t%C3%A9" \
              "$(printf "x%.0s" $(seq 1 70))"; do
        test "$(lb_req POST "/write?db=$db" --data-binary "m,host=a v=1 1")" = 400 || return 1
        grep -q "invalid database name" body || return 1
    done &&
    test "$(ls "$LB_DATA" | grep -v -e LOCK -e keep | wc -l)" = 0
'

test_expect_success 'a NUL byte in any URL argument is 400, not a shorter name' '
    test "$(lb_req POST "/write?db=a%00b" --data-binary "m,host=a v=1 1")" = 400 &&
    grep -q "NUL" body &&
    test "$(lb_req GET "/api/v1/query?db=keep&host=a%00x")" = 400 &&
    test ! -e "$LB_DATA/a"
'

test_expect_success 'a NUL byte in the URL path is 400, not a shorter path' '
    test "$(lb_req GET "/ping%00x")" = 400 &&
    grep -q "NUL" body &&
    test "$(lb_req POST "/write%00/x?db=keep" --data-binary "m,host=a v=1 1")" = 400 &&
    test "$(lb_req GET "/api/v1/query?db=keep&host=a&limit=1")" = 200 &&
    test "$(lb_req GET "/pi%30g")" = 404
'

test_expect_success 'bad precision, encoding, format are 400 with the allowed values' '
    test "$(lb_req POST "/write?db=keep&precision=fortnight" --data-binary "m,host=a v=1 1")" = 400 &&
    grep -q "ns, us, ms, s, m, h" body &&
    test "$(lb_req POST "/write?db=keep" -H "Content-Encoding: br" --data-binary "m,host=a v=1 1")" = 400 &&
    grep -q gzip body &&
    test "$(lb_req POST "/api/v1/ingest?db=keep&format=xml" --data-binary "x")" = 400 &&
    grep -q jsonl body
'

test_expect_success 'a line over max_line_bytes is dropped with its number, the rest stored' '
    long=$(printf "a%.0s" $(seq 1 2000)) &&
    printf "m,host=l v=1i 1\nm,host=l s=\"%s\" 2\nm,host=l v=3i 3\n" "$long" >lp &&
    test "$(lb_req POST "/write?db=keep" --data-binary @lp)" = 400 &&
    grep -q "line 2:" body &&
    grep -q "too long" body &&
    test "$(count keep)" = 3
'

test_expect_success 'a chunked body over max_body_bytes is 413' '
    head -c 3000000 /dev/zero | tr "\0" "a" >huge &&
    test "$(lb_req POST "/write?db=keep" -H "Transfer-Encoding: chunked" --data-binary @huge)" = 413 &&
    test "$(count keep)" = 3
'

test_expect_success 'binary garbage as line protocol is 400 and stores nothing' '
    head -c 20000 /dev/urandom >garbage &&
    test "$(lb_req POST "/write?db=keep" --data-binary @garbage)" = 400 &&
    test "$(count keep)" = 3
'

test_expect_success 'binary garbage as JSON lines and raw lines' '
    test "$(lb_req POST "/api/v1/ingest?db=keep&format=jsonl" --data-binary @garbage)" = 400 &&
    code=$(lb_req POST "/api/v1/ingest?db=rawjunk&host=g&event=raw" --data-binary @garbage) &&
    test "$code" = 204 -o "$code" = 400
'

test_expect_success 'binary garbage as SQL is 400 with a position' '
    test "$(lb_req POST /api/v1/sql --data-binary @garbage)" = 400 &&
    grep -q "position" body
'

test_expect_success 'an unterminated /* comment is 400 with its position' '
    test "$(lb_req POST /api/v1/sql --data-binary "SELECT * FROM keep WHERE ts > 0 /* never closed")" = 400 &&
    grep -q "syntax error at position 33: unterminated comment" body &&
    test "$(lb_req POST /api/v1/sql --data-binary "SELECT /*+ full_scan COUNT(*) FROM keep")" = 400 &&
    grep -q "syntax error at position 8: unterminated comment" body &&
    test "$(lb_req POST /api/v1/sql --data-binary "SELECT /*+ full_scan */ COUNT(*) FROM keep -- the end")" = 200 &&
    grep -q "^{\"count\":[0-9]*}$" body
'

has_db() { # has_db NAME: SHOW DATABASES lists it
    lb_req POST /api/v1/sql --data-binary "SHOW DATABASES" >/dev/null &&
    grep -q "^{\"name\":\"$1\"" body
}

test_expect_success 'a statement list that would fail is refused before any statement runs' '
    test "$(lb_req POST /api/v1/sql --data-binary "CREATE DATABASE victim")" = 200 &&
    test "$(lb_req POST /api/v1/sql --data-binary "DROP DATABASE victim; DROP DATABASE nope")" = 404 &&
    grep -q "{\"error\":\"statement 2 of 2: database .nope. not found\",\"applied\":0}" body &&
    has_db victim &&
    test "$(lb_req POST /api/v1/sql --data-binary "DROP DATABASE victim; SELECT * FROM victim WHERE ts > 0")" = 404 &&
    grep -q "statement 2 of 2: database .victim. not found" body &&
    has_db victim &&
    test "$(lb_req POST /api/v1/sql --data-binary "DROP DATABASE victim; SELECT * FROM keep")" = 400 &&
    grep -q "statement 2 of 2: full scan refused" body &&
    has_db victim &&
    test "$(lb_req POST /api/v1/sql --data-binary "CREATE DATABASE victim; SHOW DATABASES")" = 409 &&
    grep -q "statement 1 of 2: database .victim. already exists" body
'

test_expect_success 'a list may use what its earlier statements create or drop' '
    test "$(lb_req POST /api/v1/sql --data-binary "CREATE DATABASE fresh; SELECT COUNT(*) FROM fresh WHERE ts > 0; DROP DATABASE fresh; CREATE DATABASE fresh")" = 200 &&
    test "$(cat body)" = "$(printf "{\"ok\":true}\n{\"count\":0}\n{\"ok\":true}\n{\"ok\":true}")" &&
    test "$(lb_req POST /api/v1/sql --data-binary "DROP DATABASE fresh; SELECT * FROM fresh WHERE ts > 0")" = 404 &&
    has_db fresh
'

test_expect_success 'a list that fails after statements were applied says how many' '
    test "$(lb_req POST /api/v1/sql --data-binary "CREATE DATABASE made; CREATE DATABASE \"bad/name\"")" = 400 &&
    grep -q "{\"error\":\"statement 2 of 2: bad database name .bad/name. (.*)\",\"applied\":1}" body &&
    has_db made &&
    test "$(lb_req POST "/api/v1/sql?format=json" --data-binary "CREATE DATABASE made2; CREATE DATABASE \"bad/name\"")" = 400 &&
    grep -q "\"applied\":1}" body &&
    has_db made2
'

test_expect_success 'deeply nested parentheses are 400 with a position, the daemon lives' '
    awk "BEGIN { printf \"SELECT * FROM keep WHERE \"; for (i = 0; i < 45000; i++) printf \"(\";
                 printf \"ts > 0\"; for (i = 0; i < 45000; i++) printf \")\" }" >deep.sql &&
    test "$(lb_req POST "/api/v1/sql" --data-binary @deep.sql)" = 400 &&
    grep -q "error at position 90: parentheses nested deeper than 64" body &&
    test "$(lb_req GET "/ping")" = 204 &&
    awk "BEGIN { printf \"SELECT COUNT(*) FROM keep WHERE \"; for (i = 0; i < 60; i++) printf \"(\";
                 printf \"ts > 0\"; for (i = 0; i < 60; i++) printf \")\" }" >nested.sql &&
    test "$(lb_req POST "/api/v1/sql" --data-binary @nested.sql)" = 200 &&
    grep -q "^{\"count\":[0-9]*}$" body
'

test_expect_success 'bad query parameters are 400 and say what is allowed' '
    test "$(lb_req GET "/api/v1/query?db=keep&host=a&start=yesterday")" = 400 &&
    grep -q "RFC 3339" body &&
    test "$(lb_req GET "/api/v1/query?db=keep&host=a&limit=-5")" = 400 &&
    test "$(lb_req GET "/api/v1/query?db=keep&host=a&order=sideways")" = 400 &&
    test "$(lb_req GET "/api/v1/query?host=a")" = 400
'

test_expect_success 'an oversized SQL or InfluxQL body is 413' '
    head -c 1100000 /dev/zero | tr "\0" " " >bigsql &&
    test "$(lb_req POST /api/v1/sql --data-binary @bigsql)" = 413 &&
    grep -q "statement body too large" body &&
    test "$(lb_req POST /query --data-binary @bigsql)" = 413 &&
    { printf "q=SHOW%%20DATABASES&pad=" && head -c 1100000 /dev/zero | tr "\0" x; } >bigform &&
    test "$(lb_req POST /query -H "Content-Type: application/x-www-form-urlencoded" \
        --data-binary @bigform)" = 413 &&
    test "$(lb_req POST /query -H "Content-Type: application/x-www-form-urlencoded" \
        --data-binary "q=SHOW%20DATABASES&pad=x")" = 200
'

test_expect_success 'a request line with a huge URL is refused, the daemon lives' '
    long=$(head -c 300000 /dev/zero | tr "\0" a) &&
    printf "GET /api/v1/query?db=keep&host=%s HTTP/1.1\r\nHost: x\r\n\r\n" "$long" >req &&
    "$LB_TOP/tests/e2e/rawhttp.pl" $LB_PORT req >status &&
    grep -E -q "^(HTTP/1.1 (414|413|400|431)|closed)" status &&
    test "$(lb_req GET /ping)" = 204
'

test_expect_success 'aborted uploads are let go at once (no request left in flight)' '
    printf "POST /write?db=keep HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nm,host=h v=9i 9\n" >half &&
    for i in 1 2 3; do "$LB_TOP/tests/e2e/rawhttp.pl" $LB_PORT half --no-read || return 1; done &&
    sleep 0.5 &&
    test "$(lb_req GET /ping)" = 204 &&
    test "$(count keep)" = 3 &&
    lb_req GET /metrics >/dev/null &&
    grep -q "^logbucket_http_requests_in_flight 1$" body
'

raw() { # raw FILE: sends FILE as it is; the whole reply in ./reply, its status line printed
    "$LB_TOP/tests/e2e/rawhttp.pl" $LB_PORT "$1" --full >reply &&
    head -n 1 reply | tr -d "\r"
}

test_expect_success 'a body on an endpoint that takes none is 400, not a silent close' '
    test "$(lb_req GET /ping --data-binary hello)" = 400 &&
    grep -q "GET /ping takes no request body" body &&
    test "$(lb_req GET "/api/v1/query?db=keep&host=a" --data-binary hello)" = 400 &&
    grep -q "GET /api/v1/query takes no request body" body &&
    test "$(lb_req GET /metrics -H "Transfer-Encoding: chunked" --data-binary hello)" = 400 &&
    printf "HEAD /health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" >req &&
    test "$(raw req)" = "HTTP/1.1 400 Bad Request" &&
    test "$(lb_req GET /ping -H "Content-Length: 0")" = 204 &&
    test "$(lb_req GET "/api/v1/sql?q=SHOW%20DATABASES" --data-binary "")" = 200
'

test_expect_success 'a URL with over 1000 parameters is 414 saying so, not a silent close' '
    many=$(printf "&a=1%.0s" $(seq 1 10000)) &&
    test "$(lb_req GET "/api/v1/query?db=keep$many")" = 414 &&
    grep -q "{\"error\":\"too many URL parameters: at most 1000\"}" body &&
    test "$(lb_req POST "/write?db=keep$many" --data-binary "m,host=p v=1i 1")" = 414 &&
    test "$(lb_req GET "/ping?b&&&&$many")" = 414 &&
    test "$(lb_req GET "/ping?$(printf "a=1&%.0s" $(seq 1 999))a=1")" = 204 &&
    test "$(lb_req GET "/ping?$(printf "a=1&%.0s" $(seq 1 1000))a=1")" = 414 &&
    test "$(count keep)" = 3
'

test_expect_success 'Content-Lengths that differ are 400; equal ones are accepted' '
    row="m,host=f v=1i 1\n" &&
    printf "POST /write?db=framing HTTP/1.1\r\nHost: x\r\nContent-Length: 16\r\nContent-Length: 5\r\n\r\n$row" >req &&
    test "$(raw req)" = "HTTP/1.1 400 Bad Request" &&
    grep -q "conflicting Content-Length headers" reply &&
    printf "POST /write?db=framing HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 16\r\n\r\n$row" >req &&
    test "$(raw req)" = "HTTP/1.1 400 Bad Request" &&
    grep -q "conflicting Content-Length headers" reply &&
    test "$(grep -c "^HTTP/1.1" reply)" = 1 &&
    printf "POST /write?db=framing HTTP/1.1\r\nHost: x\r\nContent-Length: 16\r\nContent-Length: 16\r\n\r\n$row" >req &&
    test "$(raw req)" = "HTTP/1.1 204 No Content" &&
    test "$(count framing)" = 1
'

test_expect_success 'Content-Length with Transfer-Encoding, or a coding but chunked, is refused' '
    chunked="10\r\nm,host=f v=2i 2\n\r\n0\r\n\r\n" &&
    for hdrs in "Content-Length: 16\r\nTransfer-Encoding: chunked" \
                "Transfer-Encoding: chunked\r\nContent-Length: 16" \
                "Transfer-Encoding: identity\r\nContent-Length: 16"; do
        printf "POST /write?db=framing HTTP/1.1\r\nHost: x\r\n$hdrs\r\n\r\n$chunked" >req &&
        test "$(raw req)" = "HTTP/1.1 400 Bad Request" &&
        grep -q "both Content-Length and Transfer-Encoding" reply || return 1
    done &&
    printf "POST /write?db=framing HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n$chunked" >req &&
    test "$(raw req)" = "HTTP/1.1 400 Bad Request" &&
    grep -q "more than one Transfer-Encoding" reply &&
    printf "POST /write?db=framing HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n$chunked" >req &&
    test "$(raw req)" = "HTTP/1.1 400 Bad Request" &&
    grep -q "Transfer-Encoding .gzip. does not end in chunked" reply &&
    printf "POST /write?db=framing HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n$chunked" >req &&
    test "$(raw req)" = "HTTP/1.1 501 Not Implemented" &&
    grep -q "Transfer-Encoding .gzip, chunked. is not supported" reply &&
    test "$(count framing)" = 1 &&
    printf "POST /write?db=framing HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n$chunked" >req &&
    test "$(raw req)" = "HTTP/1.1 204 No Content" &&
    test "$(count framing)" = 2
'

test_expect_success 'a body that never ends is cut off at request_timeout, nothing left in flight' '
    printf "POST /write?db=keep HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nm,host=h v=9i 9\n" >stall &&
    for threads in 0 2; do
        lb_stop 5 && lb_start --set request_timeout=2s --set http_threads=$threads &&
        start=$(date +%s) &&
        test "$("$LB_TOP/tests/e2e/rawhttp.pl" $LB_PORT stall --hold 10)" = closed &&
        test $(($(date +%s) - start)) -le 4 &&
        start=$(date +%s) &&
        test "$("$LB_TOP/tests/e2e/rawhttp.pl" $LB_PORT stall --trickle 0.3 10)" = closed &&
        test $(($(date +%s) - start)) -le 4 &&
        lb_req GET /metrics >/dev/null &&
        grep -q "^logbucket_http_requests_in_flight 1$" body &&
        test "$(lb_req POST "/write?db=alive" --data-binary "m,host=a v=1i 1")" = 204 || return 1
    done &&
    test "$(count keep)" = 3
'

test_expect_success 'the known rows are intact after all that, and after a restart' '
    lb_stop 5 && lb_start &&
    test "$(count keep)" = 3
'

test_done
