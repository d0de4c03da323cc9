#!/bin/sh
test_description='query endpoints: plans GET, SCAN, INDEX, FULL; SQL; admin statements; errors; streaming'
. "$(dirname "$0")/lib.sh"

sql() { # sql STATEMENT [extra URL args]: prints the status, body in ./body
    lb_req POST "/api/v1/sql$2" -H "Content-Type: text/plain" --data-binary "$1"
}

test_expect_success 'start and load 3 hosts x 2 events x 10 timestamps' '
    lb_start --set max_get_rows=10 &&
    awk "BEGIN { for (t = 1; t <= 10; t++) for (h = 1; h <= 3; h++) {
            printf \"cpu,host=h%d,dc=eu v=%d.5,n=%di %d000000000\\n\", h, t, t*h, t;
            printf \"mem,host=h%d used=%di %d000000000\\n\", h, t, t } }" >lp &&
    test "$(lb_req POST "/write?db=q" --data-binary @lp)" = 204 &&
    test "$(sql "CREATE DATABASE qa WITH (buckets=3, ts_order='"'"'asc'"'"')")" = 200 &&
    test "$(lb_req POST "/write?db=qa" --data-binary @lp)" = 204
'

test_expect_success 'GET /api/v1/query by host: newest first, NDJSON' '
    test "$(lb_req GET "/api/v1/query?db=q&host=h1&limit=3")" = 200 &&
    lb_header Content-Type | grep -q ndjson &&
    test $(wc -l <body) = 3 &&
    head -n 1 body | grep -q "\"ts\":10000000000,\"host\":\"h1\",\"event\":\"cpu\"" &&
    sed -n 2p body | grep -q "\"ts\":10000000000,\"host\":\"h1\",\"event\":\"mem\"" &&
    sed -n 3p body | grep -q "\"ts\":9000000000"
'

test_expect_success 'order=asc reverses ts, keeps host and event ascending' '
    test "$(lb_req GET "/api/v1/query?db=q&host=h2&order=asc&limit=2")" = 200 &&
    head -n 1 body | grep -q "\"ts\":1000000000,\"host\":\"h2\",\"event\":\"cpu\"" &&
    sed -n 2p body | grep -q "\"ts\":1000000000,\"host\":\"h2\",\"event\":\"mem\""
'

test_expect_success 'host and event with a ts range' '
    test "$(lb_req GET "/api/v1/query?db=q&host=h3&event=mem&start=3000000000&end=6000000000")" = 200 &&
    test $(wc -l <body) = 3 &&
    ! grep -q "\"event\":\"cpu\"" body
'

test_expect_success 'SELECT over a ts range scans every bucket, merged in order' '
    test "$(sql "SELECT * FROM q WHERE ts >= 2000000000 AND ts < 4000000000")" = 200 &&
    test $(wc -l <body) = 12 &&
    sed "s/.*\"ts\":\([0-9]*\),\"host\":\"\([^\"]*\)\",\"event\":\"\([^\"]*\)\".*/\1 \2 \3/" body >keys &&
    sort -k1,1nr -k2,2 -k3,3 keys >sorted &&
    test_cmp sorted keys
'

test_expect_success 'the ASC database streams ascending by default' '
    test "$(sql "SELECT * FROM qa WHERE ts BETWEEN 1000000000 AND 2000000000")" = 200 &&
    test $(wc -l <body) = 12 &&
    head -n 1 body | grep -q "\"ts\":1000000000,\"host\":\"h1\",\"event\":\"cpu\"" &&
    tail -n 1 body | grep -q "\"ts\":2000000000,\"host\":\"h3\",\"event\":\"mem\""
'

test_expect_success 'ORDER BY ts DESC on the ASC database is correct too' '
    test "$(sql "SELECT * FROM qa WHERE ts BETWEEN 1000000000 AND 2000000000 ORDER BY ts DESC LIMIT 4")" = 200 &&
    test $(wc -l <body) = 4 &&
    head -n 1 body | grep -q "\"ts\":2000000000,\"host\":\"h1\",\"event\":\"cpu\""
'

test_expect_success 'COUNT(*) gives one row' '
    test "$(sql "SELECT COUNT(*) FROM q WHERE ts >= 0")" = 200 &&
    grep -q "^{\"count\":60}" body &&
    test "$(sql "SELECT COUNT(*) FROM q WHERE host = '"'"'h1'"'"' AND event = '"'"'cpu'"'"'")" = 200 &&
    grep -q "^{\"count\":10}" body
'

test_expect_success 'field filters apply while streaming' '
    test "$(sql "SELECT * FROM q WHERE host = '"'"'h2'"'"' AND event = '"'"'cpu'"'"' AND n >= 10")" = 200 &&
    test $(wc -l <body) = 6
'

test_expect_success 'GET plan: ts, host and event fixed, IN lists multiply' '
    test "$(sql "SELECT * FROM q WHERE ts IN (1000000000, 2000000000) AND host IN ('"'"'h1'"'"','"'"'h2'"'"') AND event = '"'"'cpu'"'"'")" = 200 &&
    test $(wc -l <body) = 4 &&
    test "$(sql "EXPLAIN SELECT * FROM q WHERE ts = 1000000000 AND host = '"'"'h1'"'"' AND event = '"'"'cpu'"'"'")" = 200 &&
    grep -q "\"plan\":\"GET\"" body
'

test_expect_success 'EXPLAIN names SCAN, INDEX and FULL plans' '
    sql "EXPLAIN SELECT * FROM q WHERE ts > 5" >/dev/null && grep -q "\"plan\":\"SCAN\"" body &&
    sql "EXPLAIN SELECT * FROM q WHERE host = '"'"'h1'"'"'" >/dev/null && grep -q "\"plan\":\"INDEX\"" body &&
    sql "EXPLAIN SELECT /*+ full_scan */ * FROM q" >/dev/null && grep -q "\"plan\":\"FULL\"" body
'

test_expect_success 'more GET keys than max_get_rows is refused before any work' '
    test "$(sql "SELECT * FROM q WHERE ts IN (1,2,3,4,5,6) AND host IN ('"'"'a'"'"','"'"'b'"'"') AND event = '"'"'x'"'"'")" = 400 &&
    grep -q "max_get_rows" body
'

test_expect_success 'a full scan is refused with a hint, allowed when asked for' '
    test "$(sql "SELECT * FROM q WHERE event = '"'"'cpu'"'"'")" = 400 &&
    grep -q "full_scan" body &&
    test "$(sql "SELECT * FROM q WHERE event = '"'"'cpu'"'"'" "?full_scan=true")" = 200 &&
    test $(wc -l <body) = 30 &&
    test "$(sql "SELECT /*+ full_scan */ COUNT(*) FROM q")" = 200 &&
    grep -q "{\"count\":60}" body
'

test_expect_success 'bad SQL is 400 with the position' '
    test "$(sql "SELECT * FORM q")" = 400 &&
    grep -q "position" body &&
    test -n "$(lb_header X-Influxdb-Error)"
'

test_expect_success 'an unknown database is 404' '
    test "$(sql "SELECT * FROM nosuch WHERE ts > 0")" = 404 &&
    test "$(lb_req GET "/api/v1/query?db=nosuch&host=a")" = 404
'

test_expect_success 'missing statement and bad format are 400' '
    test "$(sql "")" = 400 &&
    test "$(lb_req GET "/api/v1/query?db=q&host=h1&format=xml")" = 400
'

test_expect_success 'q= as URL argument and as form field' '
    test "$(lb_req GET "/api/v1/sql?q=SELECT%20COUNT(*)%20FROM%20q%20WHERE%20ts%20%3E%3D%200")" = 200 &&
    grep -q "{\"count\":60}" body &&
    test "$(lb_req POST /api/v1/sql --data-urlencode "q=SELECT COUNT(*) FROM q WHERE ts >= 0")" = 200 &&
    grep -q "{\"count\":60}" body
'

test_expect_success 'format=json gives one document' '
    test "$(lb_req GET "/api/v1/query?db=q&host=h1&limit=2&format=json")" = 200 &&
    lb_header Content-Type | grep -q application/json &&
    perl -MJSON::PP -e "local \$/; my \$d = decode_json(<STDIN>); exit(@{\$d->{results}} == 2 ? 0 : 1)" <body
'

test_expect_success 'SHOW DATABASES, ALTER, DROP' '
    test "$(sql "SHOW DATABASES")" = 200 &&
    grep -q "\"name\":\"qa\"" body &&
    grep "\"name\":\"qa\"" body | grep -q "\"buckets\":3" &&
    grep "\"name\":\"qa\"" body | grep -q "\"ts_order\":\"asc\"" &&
    test "$(sql "ALTER DATABASE qa SET ttl='"'"'7d'"'"'")" = 200 &&
    sql "SHOW DATABASES" >/dev/null && grep "\"name\":\"qa\"" body | grep -q "\"ttl\":\"7d\"" &&
    test "$(sql "CREATE DATABASE qa")" = 409 &&
    test "$(sql "DROP DATABASE qa")" = 200 &&
    test "$(sql "SELECT * FROM qa WHERE ts > 0")" = 404
'

test_expect_success 'DELETE by host and range' '
    test "$(sql "DELETE FROM q WHERE host = '"'"'h3'"'"' AND ts BETWEEN 1000000000 AND 5000000000")" = 200 &&
    test "$(sql "SELECT COUNT(*) FROM q WHERE host = '"'"'h3'"'"'")" = 200 &&
    grep -q "{\"count\":10}" body
'

test_expect_success 'a client that disconnects mid-stream does not hurt the daemon' '
    awk "BEGIN { for (i = 1; i <= 20000; i++) printf \"big,host=b%d v=%di %d\\n\", i % 7, i, i }" >big.lp &&
    test "$(lb_req POST "/write?db=big" --data-binary @big.lp)" = 204 &&
    curl -s -N "$LB_URL/api/v1/sql?q=SELECT%20*%20FROM%20big%20WHERE%20ts%20%3E%200" | head -c 1000 >/dev/null;
    test "$(lb_req GET /ping)" = 204 &&
    test "$(sql "SELECT COUNT(*) FROM big WHERE ts > 0")" = 200 &&
    grep -q "{\"count\":20000}" body
'

test_expect_success 'rows survive a restart' '
    lb_stop 10 && lb_start &&
    test "$(sql "SELECT COUNT(*) FROM q WHERE ts >= 0")" = 200 &&
    grep -q "{\"count\":50}" body
'

test_expect_success 'max_get_rows also bounds the rows a GET returns (several series per key)' '
    lb_stop && lb_start --set max_get_rows=10 &&
    awk "BEGIN { for (t = 1; t <= 3; t++) for (c = 0; c < 4; c++)
            printf \"g,host=gh,cpu=c%d v=%d %d000000000\\n\", c, c, t }" >g.lp &&
    test "$(lb_req POST "/write?db=gq" --data-binary @g.lp)" = 204 &&
    test "$(sql "SELECT * FROM gq WHERE ts IN (1000000000, 2000000000) AND host = '"'"'gh'"'"' AND event = '"'"'g'"'"'")" = 200 &&
    test $(wc -l <body) = 8 &&
    test "$(sql "SELECT * FROM gq WHERE ts IN (1000000000, 2000000000, 3000000000) AND host = '"'"'gh'"'"' AND event = '"'"'g'"'"'")" = 200 &&
    test $(grep -c "\"ts\"" body) = 10 &&
    tail -n 1 body | grep -q "{\"error\":\"too many rows: the GET keys hold more than max_get_rows = 10 rows"
'

test_done
